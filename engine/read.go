package engine

import (
	"bytes"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// Get returns the record with the given id, or ErrNotFound. A history
// version (one that Update superseded) is returned too, with SupersededBy
// set.
func (e *Engine) Get(id uint64) (Record, error) {
	if err := e.checkOpen(); err != nil {
		return Record{}, err
	}
	var r Record
	err := e.db.View(func(tx *bolt.Tx) error {
		var err error
		if r, err = getAnyRecord(tx, id); err != nil {
			return err
		}
		return storedHeader(tx, &r)
	})
	if err == nil {
		e.overlayHeader(&r)
	}
	return r, err
}

// Scan calls fn for every record in id order (the order they were
// remembered) until fn returns an error, which Scan returns. The
// headers are current, as Get's are.
func (e *Engine) Scan(fn func(*Record) error) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	if err := e.flushAccesses(); err != nil {
		return err
	}
	return e.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			r, err := decodeRecord(v)
			if err != nil {
				return err
			}
			if err := storedHeader(tx, &r); err != nil {
				return err
			}
			return fn(&r)
		})
	})
}

// Stats describes a store.
type Stats struct {
	Dir             string `json:"dir"`
	Schema          int    `json:"schema"`
	Embedder        string `json:"embedder"`
	Dims            int    `json:"dims"`
	IndexLayout     string `json:"index_layout"`
	Records         int    `json:"records"`
	Sessions        int    `json:"sessions"`
	Scopes          int    `json:"scopes"`
	DiskBytes       int64  `json:"disk_bytes"`
	LogSeq          uint64 `json:"log_seq"`          // last change-log sequence
	LogPending      int    `json:"log_pending"`      // change-log entries kept for the indexes
	VectorOpen      bool   `json:"vector_open"`      // the archive's vector index is loaded; it opens at the first archive search
	VectorWatermark uint64 `json:"vector_watermark"` // last change applied to the vector index (0 when not open)
	TextWatermark   uint64 `json:"text_watermark"`   // last change applied to the text index
	VectorLen       int    `json:"vector_len"`       // live vectors (0 when not open)
	// EntityGraphLoaded says the entity graph is in memory: it loads
	// at the first query that reads it (the answer prior, for a question
	// asking for a thing; the entity stages), not at open.
	EntityGraphLoaded bool `json:"entity_graph_loaded"`

	// Language-model steps. LLM is false when no Enricher is configured:
	// every step uses the embedded default.
	LLM           bool        `json:"llm"`
	EnrichPending int         `json:"enrich_pending"`           // records committed, not yet enriched
	Steps         []StepStats `json:"llm_steps,omitempty"`      // calls, answers used and fallbacks per step
	EnrichError   string      `json:"enrich_error,omitempty"`   // last store error of the enrichment worker
	Profile       string      `json:"profile_source,omitempty"` // source of the persona profile: llm or extractive
}

// Stats counts records, sessions and scopes and reports index watermarks.
func (e *Engine) Stats() (Stats, error) {
	if err := e.checkOpen(); err != nil {
		return Stats{}, err
	}
	s := Stats{Dir: e.dir, Schema: SchemaVersion, IndexLayout: e.opts.indexLayout()}
	err := e.db.View(func(tx *bolt.Tx) error {
		s.Records = int(getU64(tx.Bucket(bucketMeta), metaCount)) // not a walk of the records
		s.LogSeq = tx.Bucket(bucketChanges).Sequence()
		s.LogPending = tx.Bucket(bucketChanges).Stats().KeyN
		scopes := map[string]bool{}
		return tx.Bucket(bucketSessions).ForEach(func(k, _ []byte) error {
			s.Sessions++
			scope, _, _ := bytes.Cut(k, []byte{0})
			scopes[string(scope)] = true
			s.Scopes = len(scopes)
			return nil
		})
	})
	if err != nil {
		return s, err
	}
	e.wmu.Lock()
	// The archive's vector index is not opened for this: a process the
	// tiers serve never loads it (OpenVectorIndex opens it on purpose).
	if s.VectorOpen = e.vec != nil; s.VectorOpen {
		s.VectorWatermark, s.VectorLen = e.vec.Watermark(), e.vec.Len()
	}
	s.EntityGraphLoaded = e.ents.graph.Load() != nil
	s.Embedder, s.Dims = e.opts.Embedder.Name(), e.dims
	s.TextWatermark, err = e.text.Watermark()
	e.wmu.Unlock()
	s.DiskBytes = DiskBytes(e.dir)
	if err == nil {
		err = e.enrichStats(&s)
	}
	return s, err
}

// DiskBytes is the size of the files under dir (a store directory), in bytes.
func DiskBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// OpenVectorIndex loads the archive's vector index now and brings it up
// to date with the change log. It otherwise opens at the first archive
// search; Stats reports it only once it is open.
func (e *Engine) OpenVectorIndex() error {
	_, err := e.vectorIndex()
	return err
}
