package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Identity is what a store records about how it was built.
type Identity struct {
	Embedder    string `json:"embedder"`
	Dims        int    `json:"dims"`
	IndexLayout string `json:"index_layout"`
	Schema      string `json:"schema"`
	Reindexing  string `json:"reindexing,omitempty"` // target embedder of an interrupted reindex
}

// ReadIdentity reads the identity of the store in dir without opening it
// for writing, so that the caller can build the matching embedder. It
// returns ErrNotFound when dir holds no store and ErrLocked when another
// process holds it.
func ReadIdentity(dir string, timeout time.Duration) (Identity, error) {
	var id Identity
	path := filepath.Join(dir, DBFile)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return id, fmt.Errorf("%w: no store in %s", ErrNotFound, dir)
		}
		return id, fmt.Errorf("hmo: %w", err)
	}
	db, err := openReadOnly(dir, &CheckOptions{Timeout: timeout})
	if err != nil {
		return id, err
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil {
			return fmt.Errorf("%w: no store in %s", ErrNotFound, dir)
		}
		id.Embedder, id.IndexLayout, id.Schema = string(m.Get(metaEmbedder)), string(m.Get(metaIndexLayout)), string(m.Get(metaSchema))
		id.Dims, _ = strconv.Atoi(string(m.Get(metaDims)))
		if rb := tx.Bucket(bucketReindex); rb != nil {
			id.Reindexing = string(rb.Get(reindexTarget))
		}
		return nil
	})
	return id, err
}
