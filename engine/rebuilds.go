package engine

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketRebuilds keeps a note of each index rebuild the engine did on
// its own (a repair), so that "hmo doctor" can report it.
var bucketRebuilds = []byte("rebuilds")

// maxRebuildNotes is how many notes are kept, the newest.
const maxRebuildNotes = 50

// Rebuild is the note of one index rebuild.
type Rebuild struct {
	Time   time.Time `json:"time"`
	Index  string    `json:"index"`  // text or vector
	Reason string    `json:"reason"` // why the index was rebuilt
}

// noteRebuild remembers a rebuild until persistRebuilds writes it.
// The caller holds wmu.
func (e *Engine) noteRebuild(index, format string, a ...any) {
	e.rebuilds = append(e.rebuilds, Rebuild{Time: e.opts.Clock().UTC(), Index: index, Reason: fmt.Sprintf(format, a...)})
}

// persistRebuilds writes the pending notes. It is best effort: a store
// that cannot be written (full disk, read-only) keeps them in memory.
// The caller holds wmu.
func (e *Engine) persistRebuilds() {
	if len(e.rebuilds) == 0 || e.opts.ReadOnly {
		return
	}
	err := e.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketRebuilds)
		if err != nil {
			return err
		}
		for _, r := range e.rebuilds {
			seq, _ := b.NextSequence()
			v, _ := json.Marshal(r)
			if err := b.Put(u64key(seq), v); err != nil {
				return err
			}
		}
		for b.Stats().KeyN > maxRebuildNotes {
			c := b.Cursor()
			k, _ := c.First()
			if k == nil {
				break
			}
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		e.rebuilds = nil
	}
}

// Rebuilds returns the notes of the index rebuilds the engine did on its
// own, oldest first: the persisted ones and those not yet written.
func (e *Engine) Rebuilds() ([]Rebuild, error) {
	out, err := readRebuilds(e.db)
	e.wmu.Lock()
	out = append(out, e.rebuilds...)
	e.wmu.Unlock()
	return out, err
}

func readRebuilds(d *boltDB) ([]Rebuild, error) {
	var out []Rebuild
	err := d.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRebuilds)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, v []byte) error {
			var r Rebuild
			if json.Unmarshal(v, &r) == nil {
				out = append(out, r)
			}
			return nil
		})
	})
	return out, err
}
