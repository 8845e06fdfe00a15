package fts

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
	bolterrors "go.etcd.io/bbolt/errors"
)

// The directory layout is bleve's: index_meta.json names the index type,
// and the scorch index lives in the subdirectory store. The package opens
// scorch directly rather than through bleve's top-level package, which
// would link bleve's older index type (upsidedown), its protobuf runtime
// and its search-request machinery into every hmo binary.
const (
	metaFile  = "index_meta.json" // written first when an index is created
	storeDir  = "store"
	indexType = "scorch"
)

// analysisWorkers is how many goroutines analyse a batch's documents: 4,
// as bleve's top-level package configures its shared queue.
const analysisWorkers = 4

// indexMeta is the content of metaFile.
type indexMeta struct {
	Storage   string `json:"storage"`
	IndexType string `json:"index_type"`
}

// writeMeta creates metaFile in dir as bleve writes it: the JSON, then the
// id of bleve's file-writer hook (empty) and that id's length as a
// big-endian uint32.
func writeMeta(dir string) error {
	b, err := json.Marshal(indexMeta{IndexType: indexType})
	if err != nil {
		return err
	}
	b = binary.BigEndian.AppendUint32(b, 0)
	f, err := os.OpenFile(filepath.Join(dir, metaFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readMeta checks that metaFile in dir describes a scorch index. It reads
// both of bleve's forms: plain JSON, and JSON followed by a hook id and its
// length.
func readMeta(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return err
	}
	var m indexMeta
	if err := json.Unmarshal(b, &m); err != nil {
		if len(b) < 4 {
			return fmt.Errorf("%s: %w", metaFile, err)
		}
		n := int(binary.BigEndian.Uint32(b[len(b)-4:]))
		if n != 0 {
			return fmt.Errorf("%s: written through a file hook (%d-byte id)", metaFile, n)
		}
		if err := json.Unmarshal(b[:len(b)-4], &m); err != nil {
			return fmt.Errorf("%s: %w", metaFile, err)
		}
	}
	if m.IndexType != indexType {
		return fmt.Errorf("%s: index type %q, want %q", metaFile, m.IndexType, indexType)
	}
	return nil
}

// storeConfig is the scorch configuration of new and opened indexes.
func storeConfig(dir string, o Options, create bool) map[string]any {
	c := map[string]any{
		"path":              filepath.Join(dir, storeDir),
		"create_if_missing": create,
		"error_if_exists":   create,
		"bolt_timeout":      o.LockTimeout.String(),
	}
	if o.AsyncPersist && !o.ReadOnly {
		c["unsafe_batch"] = true
	}
	if o.ReadOnly {
		c["read_only"] = true
	}
	return c
}

// openScorch opens (create false) or creates the scorch index of dir.
func openScorch(dir string, o Options, create bool, q *index.AnalysisQueue) (*scorch.Scorch, error) {
	ix, err := scorch.NewScorch(scorch.Name, storeConfig(dir, o, create), q)
	if err != nil {
		return nil, err
	}
	s, ok := ix.(*scorch.Scorch)
	if !ok {
		return nil, fmt.Errorf("scorch returned %T", ix)
	}
	if err := s.Open(); err != nil {
		return nil, err
	}
	return s, nil
}

// createIndex creates the index of dir and opens it with o. It is built
// in a sibling directory, dir+".new", with the schema's batch persisted
// synchronously whatever o.AsyncPersist says, then renamed into place:
// dir never holds an index without its schema, neither after a crash
// during the creation nor when the process exits right after it (an
// unsafe batch is not waited for by Close).
func createIndex(dir string, o Options, q *index.AnalysisQueue) (*scorch.Scorch, error) {
	mj, err := mappingJSON(o.Analyzer)
	if err != nil {
		return nil, fmt.Errorf("fts: mapping: %w", err)
	}
	tmp := dir + ".new"
	// What a creation stopped half way left there is this package's own.
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("fts: create %s: %w", dir, err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("fts: create %s: %w", dir, err)
	}
	if err := writeMeta(tmp); err != nil {
		return nil, fmt.Errorf("fts: create %s: %w", dir, err)
	}
	sync := o
	sync.AsyncPersist = false
	s, err := openScorch(tmp, sync, true, q)
	if err != nil {
		return nil, fmt.Errorf("fts: create %s: %w", dir, err)
	}
	b := index.NewBatch()
	b.SetInternal(mappingKey, mj)
	b.SetInternal(keySchema, []byte(schemaValue(o)))
	b.SetInternal(keyMaxID, make([]byte, 16)) // no document yet, watermark 0
	err = s.Batch(b)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("fts: create %s: %w", dir, err)
	}
	// hasIndex let an empty dir through: rename does not replace one on
	// every system.
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("fts: create %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("fts: create %s: %w", dir, err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return nil, fmt.Errorf("fts: create %s: %w", dir, err)
	}
	return openIndex(dir, o, q)
}

// syncDir makes the entries of dir durable (a rename into it).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func openIndex(dir string, o Options, q *index.AnalysisQueue) (*scorch.Scorch, error) {
	if err := readMeta(dir); err != nil {
		return nil, fmt.Errorf("fts: open %s: %w (%w)", dir, ErrCorrupt, err)
	}
	if _, err := os.Stat(filepath.Join(dir, storeDir)); err != nil {
		return nil, fmt.Errorf("fts: open %s: %w (%w)", dir, ErrCorrupt, err)
	}
	s, err := openScorch(dir, o, false, q)
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, fmt.Errorf("fts: open %s: %w", dir, ErrLocked)
	case err != nil:
		return nil, fmt.Errorf("fts: open %s: %w (%w)", dir, ErrCorrupt, err)
	}
	return s, nil
}
