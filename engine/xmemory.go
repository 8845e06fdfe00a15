package engine

import (
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/xmemory"
)

// xMemory's theme partition (package xmemory) of each scope is derived
// from bbolt, never written: it is built from the scope's records and
// their stored vectors the first time a scope's themes are asked for,
// extended with the records that arrived since, and thrown away and
// rebuilt whenever a record is forgotten, superseded or re-embedded, so
// no theme outlives the text it was built from. A record is its own
// semantic fact (a turn of LoCoMo states one thing); its episode is its
// level-1 segment of the segment tree.
type themeCache struct {
	mu     sync.Mutex // guards the fields below
	gen    uint64     // bumped by invalidate
	scopes map[string]*scopeThemes
}

type scopeThemes struct {
	gen   uint64 // themeCache.gen it was built at
	last  uint64 // highest record id added
	n     int    // records added
	large bool   // more than Options.ThemesMaxRecords: no themes
	p     *xmemory.Partition
}

// invalidate drops every scope's partition; safe to call with any lock.
func (c *themeCache) invalidate() {
	c.mu.Lock()
	c.gen++
	c.scopes = nil
	c.mu.Unlock()
}

// Themes returns the xMemory theme of each of ids (0 for a record that is
// gone or not in scope) and each theme's centroid, for the records of
// scope. A scope of more than Options.ThemesMaxRecords records has no
// themes. It is safe for concurrent use.
func (e *Engine) Themes(scope string, ids []uint64) ([]uint64, map[uint64][]float32, error) {
	if err := e.checkOpen(); err != nil {
		return nil, nil, err
	}
	e.swapMu.RLock()
	defer e.swapMu.RUnlock()
	c := &e.themes
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.scopes[scope]
	if st == nil || st.gen != c.gen {
		p, err := xmemory.New(e.dims, e.opts.Themes)
		if err != nil {
			return nil, nil, fmt.Errorf("hmo: themes: %w", err)
		}
		st = &scopeThemes{gen: c.gen, p: p}
		if c.scopes == nil {
			c.scopes = map[string]*scopeThemes{}
		}
		c.scopes[scope] = st
	}
	if err := e.db.View(func(tx *bolt.Tx) error { return e.extendThemes(tx, scope, st) }); err != nil {
		return nil, nil, err
	}
	out := make([]uint64, len(ids))
	cents := map[uint64][]float32{}
	for i, id := range ids {
		out[i] = st.p.ThemeOf(id)
		if t := st.p.Theme(out[i]); t != nil && cents[t.ID] == nil {
			cents[t.ID] = t.Centroid()
		}
	}
	return out, cents, nil
}

// extendThemes adds the scope's records after st.last, in id order.
func (e *Engine) extendThemes(tx *bolt.Tx, scope string, st *scopeThemes) error {
	vb := tx.Bucket(bucketVectors)
	c := tx.Bucket(bucketRecords).Cursor()
	added := false
	for k, v := c.Seek(u64key(st.last + 1)); k != nil; k, v = c.Next() {
		r, err := decodeRecord(v)
		if err != nil {
			return err
		}
		st.last = r.ID
		if r.Scope != scope || r.SupersededBy != 0 || st.large {
			continue
		}
		st.n++
		if limit := e.opts.ThemesMaxRecords; limit >= 0 && st.n > limit {
			st.large = true
			st.p, _ = xmemory.New(e.dims, e.opts.Themes) // drop what was built
			continue
		}
		vec, err := decodeVector(vb.Get(k), e.dims)
		if err != nil {
			continue // no vector (a store being re-embedded): no theme
		}
		if err := st.p.Add(r.ID, vec); err != nil {
			return fmt.Errorf("hmo: themes: %w", err)
		}
		added = true
	}
	if added {
		st.p.Maintain()
	}
	return nil
}

// Episode returns record id's episode: its level-1 segment of the
// segment tree, that segment's records in time order and its extractive
// summary; segment 0 when the record has none.
func (e *Engine) Episode(id uint64) (seg uint64, members []uint64, summary string, err error) {
	if err := e.checkOpen(); err != nil {
		return 0, nil, "", err
	}
	err = e.db.View(func(tx *bolt.Tx) error {
		s := e.treeStore(tx, "")
		if s.b == nil {
			return nil
		}
		seg, _ = s.Parent(id)
		n, err := s.Node(seg)
		if err != nil || n == nil {
			seg = 0
			return err
		}
		members, summary = append(members, n.Children...), n.Summary
		return nil
	})
	return seg, members, summary, err
}

// Vectors returns the stored vectors of ids, nil for a record without one.
func (e *Engine) Vectors(ids []uint64) ([][]float32, error) {
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	e.swapMu.RLock()
	defer e.swapMu.RUnlock()
	out := make([][]float32, len(ids))
	err := e.db.View(func(tx *bolt.Tx) error {
		vb := tx.Bucket(bucketVectors)
		for i, id := range ids {
			if v, err := decodeVector(vb.Get(u64key(id)), e.dims); err == nil {
				out[i] = v
			}
		}
		return nil
	})
	return out, err
}
