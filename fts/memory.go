package fts

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/hmo-dev/hmo/engine"
)

// BM25 parameters of the in-memory index (the usual Robertson values).
const (
	memoryK1 = 1.2
	memoryB  = 0.75
)

var _ engine.TextIndex = (*Memory)(nil)

// Memory is a small BM25 index held in RAM, analysed exactly like Index.
// It suits the bounded views over the archive (HMO's Tier 1 and Tier 2):
// no disk, no fsync, cheap updates. Its cost grows with its contents, so
// keep it bounded. Safe for concurrent use.
type Memory struct {
	analyzer analysis.Analyzer

	mu        sync.RWMutex // guards the fields below
	postings  map[string]map[uint64]int32
	docs      map[uint64]memDoc
	totalLen  int
	watermark uint64
}

type memDoc struct {
	meta  engine.TextDoc // Text cleared
	terms []string       // distinct terms, to remove the doc
	n     int            // length in tokens
}

// NewMemory returns an empty in-memory index with the given analyzer
// (zero value: DefaultAnalyzer).
func NewMemory(a Analyzer) (*Memory, error) {
	if a == "" {
		a = DefaultAnalyzer
	}
	im, err := newMapping(a)
	if err != nil {
		return nil, fmt.Errorf("fts: memory index: %w", err)
	}
	an := im.AnalyzerNamed(analyzerName(a))
	if an == nil {
		return nil, fmt.Errorf("%w: analyzer %q", ErrInvalidOption, a)
	}
	return &Memory{analyzer: an, postings: map[string]map[uint64]int32{}, docs: map[uint64]memDoc{}}, nil
}

// Apply indexes docs (replacing those already present), removes deletes
// and records watermark.
func (m *Memory) Apply(docs []engine.TextDoc, deletes []uint64, watermark uint64) error {
	analysed := make([]map[string]int32, len(docs))
	lens := make([]int, len(docs))
	for i, d := range docs {
		analysed[i], lens[i] = m.termFreqs(d.Text)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range deletes {
		m.remove(id)
	}
	for i, d := range docs {
		m.remove(d.ID)
		terms := make([]string, 0, len(analysed[i]))
		for t, f := range analysed[i] {
			p := m.postings[t]
			if p == nil {
				p = map[uint64]int32{}
				m.postings[t] = p
			}
			p[d.ID] = f
			terms = append(terms, t)
		}
		d.Text = ""
		m.docs[d.ID] = memDoc{meta: d, terms: terms, n: lens[i]}
		m.totalLen += lens[i]
	}
	m.watermark = watermark
	return nil
}

func (m *Memory) termFreqs(text string) (map[string]int32, int) {
	tf := map[string]int32{}
	n := 0
	for _, t := range m.analyzer.Analyze([]byte(text)) {
		if len(t.Term) > 0 {
			tf[string(t.Term)]++
			n++
		}
	}
	return tf, n
}

// remove drops a document; the caller holds mu.
func (m *Memory) remove(id uint64) {
	d, ok := m.docs[id]
	if !ok {
		return
	}
	for _, t := range d.terms {
		if p := m.postings[t]; p != nil {
			delete(p, id)
			if len(p) == 0 {
				delete(m.postings, t)
			}
		}
	}
	m.totalLen -= d.n
	delete(m.docs, id)
}

// Search returns up to k documents by BM25, best first, ties by id.
func (m *Memory) Search(ctx context.Context, q string, k int, f engine.TextFilter) ([]engine.TextHit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("%w: k=%d", ErrInvalidK, k)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	qtf, _ := m.termFreqs(q)
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(m.docs) == 0 {
		return nil, nil
	}
	scores := map[uint64]*engine.TextHit{}
	n, avg := float64(len(m.docs)), float64(m.totalLen)/float64(len(m.docs))
	var idfSum float64
	for t := range qtf {
		p := m.postings[t]
		idf := math.Log(1 + (n-float64(len(p))+0.5)/(float64(len(p))+0.5))
		idfSum += idf
		for id, tf := range p {
			d := m.docs[id]
			if !memMatch(&d.meta, f) {
				continue
			}
			h := scores[id]
			if h == nil {
				h = &engine.TextHit{ID: id}
				scores[id] = h
			}
			h.Score += idf * float64(tf) * (memoryK1 + 1) / (float64(tf) + memoryK1*(1-memoryB+memoryB*float64(d.n)/avg))
			h.Coverage += idf
		}
	}
	hits := make([]engine.TextHit, 0, len(scores))
	for _, h := range scores {
		h.Coverage /= idfSum
		hits = append(hits, *h)
	}
	slices.SortFunc(hits, func(a, b engine.TextHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return hits[:min(k, len(hits))], nil
}

func memMatch(d *engine.TextDoc, f engine.TextFilter) bool {
	return (f.Scope == "" || d.Scope == f.Scope) &&
		(f.Session == "" || d.Session == f.Session) &&
		(f.From.IsZero() || !d.Time.Before(f.From)) &&
		(f.To.IsZero() || d.Time.Before(f.To))
}

// Len is the number of documents.
func (m *Memory) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.docs)
}

// Watermark is the last watermark applied.
func (m *Memory) Watermark() (uint64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.watermark, nil
}

// Close releases nothing; it exists to satisfy engine.TextIndex.
func (m *Memory) Close() error { return nil }
