package engine

import (
	"fmt"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/entity"
	"github.com/hmo-dev/hmo/retrieve"
)

// The entity graph (package entity) is kept beside the records: each
// record's mentions are written to bucketEntities in the record's own
// transaction and deleted with it, and the in-memory graph is loaded from
// that bucket on open and updated after each commit.
var (
	bucketEntities = []byte("entities") // id -> entity.Encode(scope, mentions)
	metaEntities   = []byte("entities_version")
)

// entitiesVersion changes when extraction changes; a store written with
// another version has its mentions re-extracted on open.
const entitiesVersion = "1"

// entityChange is a graph update waiting for its transaction to commit.
type entityChange struct {
	id    uint64
	scope string
	ms    []entity.Mention // nil: remove
	del   bool
}

// putEntities stores r's entities ms (entity.Extract of its text and
// time) in tx; the graph learns them when the transaction commits
// (applyEntities).
func (e *Engine) putEntities(tx *bolt.Tx, r *Record, ms []entity.Mention) error {
	e.entPending = append(e.entPending, entityChange{id: r.ID, scope: r.Scope, ms: ms})
	if len(ms) == 0 {
		return nil
	}
	return tx.Bucket(bucketEntities).Put(u64key(r.ID), entity.Encode(r.Scope, ms))
}

// deleteEntities removes r's entities in tx.
func (e *Engine) deleteEntities(tx *bolt.Tx, id uint64) error {
	e.entPending = append(e.entPending, entityChange{id: id, del: true})
	e.htreePending = append(e.htreePending, htreeChange{id: id})
	return tx.Bucket(bucketEntities).Delete(u64key(id))
}

// applyEntities brings the graph and the temporal tree up to date with a
// transaction that ended with err: committed changes are applied, rolled
// back ones dropped. The caller holds wmu.
func (e *Engine) applyEntities(err error) {
	e.applyHTree(err)
	if err != nil {
		// The partitions in memory may hold the rolled-back changes:
		// they reload from bbolt.
		e.themes.reset()
	}
	if err == nil {
		e.ents.mu.Lock()
		// A graph not loaded yet learns these from the bucket when it
		// loads. One that loaded after the commit already holds them:
		// Add and Remove are idempotent.
		if g := e.ents.graph.Load(); g != nil {
			for _, c := range e.entPending {
				if c.del {
					g.Remove(c.id)
				} else {
					g.Add(c.id, c.scope, c.ms)
				}
			}
		}
		e.ents.mu.Unlock()
	}
	e.entPending = e.entPending[:0]
}

// entityGraph is the entity graph, loaded from bbolt at the first call
// that needs it: only some queries read it (the answer prior, for
// questions asking for a thing; the entity stages), and loading it reads
// the whole entities bucket, so opening a store does not.
type entityGraph struct {
	graph atomic.Pointer[entity.Graph] // nil until loaded
	// mu is held while the graph loads and while committed changes are
	// applied to it, so that a change committed during the load is
	// applied after it.
	mu sync.Mutex
	// stale is set at open when the bucket was written by another
	// extraction version and the store is read-only: the graph is then
	// extracted from the records, in memory only.
	stale bool
}

// openEntities brings the entities bucket up to date, re-extracting
// every record's mentions when the store was written by another
// extraction version (or before the graph existed). A read-only open
// writes nothing: its graph is extracted in memory when it loads. The
// graph itself loads on first use (entityGraph).
func (e *Engine) openEntities() error {
	current := false
	if err := e.db.View(func(tx *bolt.Tx) error {
		current = tx.Bucket(bucketEntities) != nil && string(tx.Bucket(bucketMeta).Get(metaEntities)) == entitiesVersion
		return nil
	}); err != nil {
		return fmt.Errorf("hmo: entity graph: %w", err)
	}
	if !current && e.opts.ReadOnly {
		e.ents.stale = true
		return nil
	}
	if !current {
		if err := e.db.Update(rebuildEntities); err != nil {
			return fmt.Errorf("hmo: entity graph: %w", err)
		}
	}
	return nil
}

// entityGraph returns the entity graph, loading it on first use.
func (e *Engine) entityGraph() (*entity.Graph, error) {
	if g := e.ents.graph.Load(); g != nil {
		return g, nil
	}
	e.ents.mu.Lock()
	defer e.ents.mu.Unlock()
	if g := e.ents.graph.Load(); g != nil {
		return g, nil
	}
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	g := entity.New(nil)
	err := e.db.View(func(tx *bolt.Tx) error {
		if e.ents.stale {
			return eachRecord(tx, func(_ []byte, r *Record) error {
				g.Add(r.ID, r.Scope, entity.Extract(r.Text, r.Time))
				return nil
			})
		}
		return tx.Bucket(bucketEntities).ForEach(func(k, v []byte) error {
			scope, ms, err := entity.Decode(v)
			if err != nil {
				return fmt.Errorf("record %d: %w", keyU64(k), err)
			}
			g.Add(keyU64(k), scope, ms)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("hmo: entity graph: %w", err)
	}
	e.ents.graph.Store(g)
	return g, nil
}

// rebuildEntities re-extracts the mentions of every record in tx.
func rebuildEntities(tx *bolt.Tx) error {
	eb, err := freshBucket(tx, bucketEntities)
	if err != nil {
		return err
	}
	err = eachRecord(tx, func(k []byte, r *Record) error {
		if ms := entity.Extract(r.Text, r.Time); len(ms) > 0 {
			return eb.Put(k, entity.Encode(r.Scope, ms))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(metaEntities, []byte(entitiesVersion))
}

// Entities returns the entities record id mentions, as the graph holds
// them (nil for none, or when the graph cannot be loaded).
func (e *Engine) Entities(id uint64) []entity.Mention {
	g, err := e.entityGraph()
	if err != nil {
		return nil
	}
	return g.Entities(id)
}

// Linked serves the pipeline's expansion stage from the entity graph,
// keeping only records that pass the query's filters.
func (s *archiveSource) Linked(seeds []uint64, fanout int) ([][]retrieve.Hit, error) {
	g, err := s.e.entityGraph()
	if err != nil {
		return nil, err
	}
	links := g.Related(seeds, fanout)
	out := make([][]retrieve.Hit, len(links))
	var ids []uint64
	for _, ls := range links {
		for _, l := range ls {
			ids = append(ids, l.ID)
		}
	}
	docs, err := s.e.docs(ids)
	if err != nil {
		return nil, err
	}
	k := 0
	for i, ls := range links {
		for _, l := range ls {
			d := docs[k]
			k++
			if d.ID == 0 || !s.q.match(&Record{Scope: d.Scope, Session: d.Session, Time: d.Time}) {
				continue
			}
			out[i] = append(out[i], retrieve.Hit{ID: l.ID, Score: l.Weight})
		}
	}
	return out, nil
}

// Specific serves the pipeline's entity prior from the entity graph.
func (s *archiveSource) Specific(ids []uint64) ([]int, error) { return s.e.specific(ids) }

var (
	_ retrieve.Linker    = (*archiveSource)(nil)
	_ retrieve.Specifier = (*archiveSource)(nil)
)

// Specific serves the entity prior in the tiers too: the graph covers
// every record, whichever tier serves it.
func (s *viewSource) Specific(ids []uint64) ([]int, error) { return s.e.specific(ids) }

func (e *Engine) specific(ids []uint64) ([]int, error) {
	g, err := e.entityGraph()
	if err != nil {
		return nil, err
	}
	return g.Specific(ids), nil
}

func (e *Engine) specificEntities(ids []uint64) ([][][]string, error) {
	g, err := e.entityGraph()
	if err != nil {
		return nil, err
	}
	return g.SpecificEntities(ids), nil
}

var _ retrieve.Specifier = (*viewSource)(nil)

// SpecificEntities serves the pipeline's answer prior from the entity
// graph, over the archive and the tiers alike.
func (s *archiveSource) SpecificEntities(ids []uint64) ([][][]string, error) {
	return s.e.specificEntities(ids)
}

// SpecificEntities serves the answer prior in the tiers.
func (s *viewSource) SpecificEntities(ids []uint64) ([][][]string, error) {
	return s.e.specificEntities(ids)
}

var (
	_ retrieve.EntityNamer = (*archiveSource)(nil)
	_ retrieve.EntityNamer = (*viewSource)(nil)
)

// eachRecord calls fn with every record in tx, in id order, with its key.
func eachRecord(tx *bolt.Tx, fn func(k []byte, r *Record) error) error {
	return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
		r, err := decodeRecord(v)
		if err != nil {
			return err
		}
		return fn(k, &r)
	})
}

// metaIs reports whether the meta value key is want: a derived
// structure's version check before it is used or rebuilt.
func (e *Engine) metaIs(key []byte, want string) (bool, error) {
	var current bool
	err := e.db.View(func(tx *bolt.Tx) error {
		current = string(tx.Bucket(bucketMeta).Get(key)) == want
		return nil
	})
	return current, err
}

// freshBucket deletes bucket name where it exists and creates it empty:
// the first step of every rebuild of a derived structure.
func freshBucket(tx *bolt.Tx, name []byte) (*bolt.Bucket, error) {
	if tx.Bucket(name) != nil {
		if err := tx.DeleteBucket(name); err != nil {
			return nil, err
		}
	}
	b, err := tx.CreateBucket(name)
	if err == nil {
		fillAppended(tx)
	}
	return b, err
}
