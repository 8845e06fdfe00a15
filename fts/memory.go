package fts

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/hmo-dev/hmo/engine"
)

var _ engine.TextIndex = (*Memory)(nil)

// Memory is a small BM25F index held in RAM, analysed and scored exactly
// like Index (the same Scoring and statistics).
// It suits the bounded views over the archive (HMO's Tier 1 and Tier 2):
// no disk, no fsync, cheap updates. Its cost grows with its contents, so
// keep it bounded. Safe for concurrent use.
type Memory struct {
	analyzer analysis.Analyzer
	scoring  Scoring

	mu        sync.RWMutex // guards the fields below
	postings  map[string]map[uint64]*[nFields]int32
	docs      map[uint64]memDoc
	totalLen  [nFields]int
	watermark uint64
}

type memDoc struct {
	meta  engine.TextDoc // text fields cleared
	terms []string       // distinct terms, to remove the doc
	n     [nFields]int   // field lengths in tokens
}

// NewMemory returns an empty in-memory index with the given analyzer
// (zero value: DefaultAnalyzer) and the default Scoring.
func NewMemory(a Analyzer) (*Memory, error) {
	return NewMemoryWith(&Options{Analyzer: a})
}

// NewMemoryWith returns an empty in-memory index with o's analyzer and
// scoring; the other options do not apply. Nil o means defaults.
func NewMemoryWith(o *Options) (*Memory, error) {
	c, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	an, err := newAnalyzers(c.Analyzer)
	if err != nil {
		return nil, err
	}
	return &Memory{analyzer: an.text, scoring: c.Scoring, postings: map[string]map[uint64]*[nFields]int32{}, docs: map[uint64]memDoc{}}, nil
}

// Apply indexes docs (replacing those already present), removes deletes
// and records watermark.
func (m *Memory) Apply(docs []engine.TextDoc, deletes []uint64, watermark uint64) error {
	analysed := make([]map[string]*[nFields]int32, len(docs))
	lens := make([][nFields]int, len(docs))
	an := analyzers{text: m.analyzer}
	toks := an.analyseDocs(docs)
	for i := range docs {
		analysed[i] = map[string]*[nFields]int32{}
		for f, ts := range toks[i] {
			tf, n := termFreqs(ts)
			lens[i][f] = n
			for t, c := range tf {
				a := analysed[i][t]
				if a == nil {
					a = new([nFields]int32)
					analysed[i][t] = a
				}
				a[f] = c
			}
		}
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
				p = map[uint64]*[nFields]int32{}
				m.postings[t] = p
			}
			p[d.ID] = f
			terms = append(terms, t)
		}
		d.Text, d.Context, d.Role = "", "", ""
		m.docs[d.ID] = memDoc{meta: d, terms: terms, n: lens[i]}
		for f := range nFields {
			m.totalLen[f] += lens[i][f]
		}
	}
	m.watermark = watermark
	return nil
}

// termFreqs counts the terms of an analysed text and its length in
// tokens.
func termFreqs(ts analysis.TokenStream) (map[string]int32, int) {
	tf := map[string]int32{}
	n := 0
	for _, t := range ts {
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
	for f := range nFields {
		m.totalLen[f] -= d.n[f]
	}
	delete(m.docs, id)
}

// Search returns up to k documents by BM25F (see Scoring), best first,
// ties by id. A query term repeated in the query counts once.
func (m *Memory) Search(ctx context.Context, q string, k int, f engine.TextFilter) ([]engine.TextHit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("%w: k=%d", ErrInvalidK, k)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	qtf, _ := termFreqs(m.analyzer.Analyze([]byte(q)))
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(m.docs) == 0 {
		return nil, nil
	}
	st := fieldStats{n: float64(len(m.docs))}
	for fi := range nFields {
		st.total[fi] = float64(m.totalLen[fi])
	}
	scores := map[uint64]*engine.TextHit{}
	var idfSum float64
	for t := range qtf {
		p := m.postings[t]
		var df [nFields]int
		for _, tf := range p {
			for fi := range nFields {
				if tf[fi] > 0 {
					df[fi]++
				}
			}
		}
		w := idf(st.n, float64(max(df[fText], df[fContext], df[fRole])))
		idfSum += w
		for id, tf := range p {
			d := m.docs[id]
			if !memMatch(&d.meta, f) {
				continue
			}
			var tff, dl [nFields]float64
			for fi := range nFields {
				tff[fi], dl[fi] = float64(tf[fi]), float64(d.n[fi])
			}
			s := m.scoring.termScore(w, &st, &tff, &dl)
			if s == 0 {
				continue
			}
			h := scores[id]
			if h == nil {
				h = &engine.TextHit{ID: id}
				scores[id] = h
			}
			h.Score += s
			if said(&tff) {
				h.Coverage += w
			}
		}
	}
	hits := make([]engine.TextHit, 0, len(scores))
	for _, h := range scores {
		if idfSum > 0 {
			h.Coverage /= idfSum
		}
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
