package fts

import "github.com/hmo-dev/hmo/engine"

// A pooled search (SearchPool) on a large index scores a few given
// documents instead of walking the postings: bleve's postings have no
// skip list for frequencies and norms, so looking a word up in one
// document reads its postings up to it, and scoring even a hundred
// documents costs as much as the whole search. The pool's documents are
// analysed again instead, as Apply analysed them (with the stems
// cached), and scored with the snapshot's statistics.

// queryStats are the statistics of a query's words in one snapshot, as
// topK reads them.
type queryStats struct {
	fields   fieldStats
	idf      []float64 // by the word's place in the query
	postings int       // the words' postings in the scored fields together
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
	toks := x.pool.analyseDocs(docs)
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
		for fi, ts := range toks[i] {
			dl[fi] = float64(len(ts))
			for _, tok := range ts {
				if j, ok := at[string(tok.Term)]; ok {
					tf[j][fi]++
				}
			}
		}
		h := engine.TextHit{ID: d.ID}
		for j := range terms {
			if tf[j] == ([nFields]float64{}) {
				continue
			}
			h.Score += x.scoring.termScore(qs.idf[j], &qs.fields, &tf[j], &dl)
			if said(&tf[j]) {
				h.Coverage += qs.idf[j]
			}
		}
		if h.Score == 0 {
			continue
		}
		if idfSum > 0 {
			h.Coverage /= idfSum
		}
		hits = append(hits, h)
	}
	return hits
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
