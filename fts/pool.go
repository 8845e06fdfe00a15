package fts

import (
	"github.com/hmo-dev/hmo/engine"
)

// A pooled search (SearchPool) on a large index scores a few given
// documents instead of walking the postings: bleve's postings have no
// skip list for frequencies and norms, so looking a word up in one
// document reads its postings up to it, and scoring even a hundred
// documents costs as much as the whole search. The pool's documents are
// counted again instead (countDocs), as Apply analysed them, and scored
// with the snapshot's statistics.

// queryStats are the statistics of a query's words in one snapshot, as
// topK reads them.
type queryStats struct {
	fields   fieldStats
	idf      []float64 // by the word's place in the query
	postings int       // the words' postings in the scored fields together
	// hits are the pool's documents scored from the postings, in no
	// order, when scored (scoreLocated).
	hits   []engine.TextHit
	scored bool
}

// scoreDocs scores docs for terms by BM25F with the statistics qs, as
// topK scores an indexed document, and returns those f passes that hold
// a word, in no order. A document given twice is scored once.
func (x *Index) scoreDocs(terms []string, qs queryStats, docs []engine.TextDoc, f engine.TextFilter) []engine.TextHit {
	at := make(map[string]int, len(terms))
	var idfSum float64
	for i, t := range terms {
		at[t] = i
		idfSum += qs.idf[i]
	}
	counts := x.countDocs(docs, at)
	tf := make([][nFields]float64, len(terms))
	seen := make(map[uint64]bool, len(docs))
	var hits []engine.TextHit
	for i := range docs {
		d := &docs[i]
		if seen[d.ID] || !passes(d, f) {
			continue
		}
		seen[d.ID] = true
		clear(tf)
		var dl [nFields]float64
		for fi, c := range counts[i] {
			if c == nil {
				continue
			}
			dl[fi] = float64(c.n)
			for j, n := range c.tf {
				tf[j][fi] = float64(n)
			}
		}
		if h, ok := x.docHit(d.ID, &qs, tf, &dl, idfSum); ok {
			hits = append(hits, h)
		}
	}
	return hits
}

// docHit is the hit of document id from its frequencies tf (one entry per
// query term, by field) and its field lengths dl, under the statistics
// qs (idfSum the sum of their idf); false when no term scores.
func (x *Index) docHit(id uint64, qs *queryStats, tf [][nFields]float64, dl *[nFields]float64, idfSum float64) (engine.TextHit, bool) {
	return x.docHitFrom(id, qs, tf, dl, idfSum, 0, engine.TextHit{})
}

// docHitFrom is docHit with the sums of the first terms given: from's
// score and coverage (not yet divided by idfSum) by them, the terms
// after them added in order.
func (x *Index) docHitFrom(id uint64, qs *queryStats, tf [][nFields]float64, dl *[nFields]float64, idfSum float64, first int, from engine.TextHit) (engine.TextHit, bool) {
	h := engine.TextHit{ID: id, Score: from.Score, Coverage: from.Coverage}
	for j := first; j < len(tf); j++ {
		if tf[j] == ([nFields]float64{}) {
			continue
		}
		h.Score += x.scoring.termScore(qs.idf[j], &qs.fields, &tf[j], dl)
		if said(&tf[j]) {
			h.Coverage += qs.idf[j]
		}
	}
	if h.Score == 0 {
		return h, false
	}
	if idfSum > 0 {
		h.Coverage /= idfSum
	}
	return h, true
}

// passes reports whether f keeps d, as the index's filter would: times
// compare in whole seconds, and a document without a time passes no
// time bound.
func passes(d *engine.TextDoc, f engine.TextFilter) bool {
	if f.Scope != "" && d.Scope != f.Scope || f.Session != "" && d.Session != f.Session {
		return false
	}
	if f.From.IsZero() && f.To.IsZero() {
		return true
	}
	if d.Time.IsZero() {
		return false
	}
	t := timeKey(d.Time)
	return (f.From.IsZero() || !t.Before(timeKey(f.From))) && (f.To.IsZero() || t.Before(timeKey(f.To)))
}

// textCount is a field's length and the query words' frequencies in it
// (by the word's place in the query).
type textCount struct {
	n  int
	tf []int32
}

// countDocs counts the scored fields of docs as analyseDocs would
// analyse them, each distinct text once: the field's length and the
// frequency of each word of at (word -> its place). An empty field's
// count is nil. Texts the pool's counter reproduces are counted without
// building their token streams (termCounter); the others are analysed.
// It runs on up to analysisWorkers goroutines, which return before it
// does.
func (x *Index) countDocs(docs []engineDoc, at map[string]int) [][nFields]*textCount {
	texts, idx := distinctTexts(docs)
	counts := make([]textCount, len(texts))
	tfs := make([]int32, len(texts)*len(at))
	for i := range counts {
		counts[i].tf = tfs[i*len(at) : (i+1)*len(at) : (i+1)*len(at)]
	}
	inParallel(len(texts), func(first, step int) {
		var scratch []byte
		for i := first; i < len(texts); i += step {
			c := &counts[i]
			if x.counter != nil {
				var ok bool
				if c.n, ok, scratch = x.counter.count(texts[i], at, c.tf, scratch); ok {
					continue
				}
			}
			ts := x.pool.text.Analyze([]byte(texts[i]))
			c.n = len(ts)
			for _, tok := range ts {
				if j, ok := at[string(tok.Term)]; ok {
					c.tf[j]++
				}
			}
		}
	})
	out := make([][nFields]*textCount, len(docs))
	for i := range docs {
		for f, text := range docFields(&docs[i]) {
			if text != "" {
				out[i][f] = &counts[idx[text]]
			}
		}
	}
	return out
}
