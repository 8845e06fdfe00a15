package fts

import (
	"context"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/numeric"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// The time field holds a document's time (timeKey: whole seconds) as
// prefix-coded terms, bleve's numeric encoding (numeric.PrefixCoded): the
// value with its lowest shift bits cleared, for each shift of
// timeShiftStep. Bleve's datetime field writes a term every 4 bits (16
// terms, 64/4); this index writes one every 8 (8 terms: shifts 0, 8, ...,
// 56), the terms of bleve's field whose shift is a multiple of 8. An index
// written with bleve's field (older hmo builds) therefore holds every
// term timeRangeSearcher asks for, and searches as before; an older
// build's range search (bleve's, with shifts of 4) would miss this
// index's documents, as it cannot read a store this build writes anyway.
//
// Most of the field's cost in a segment build is the terms that are new
// to the segment (each a dictionary entry and a postings list): records'
// times are mostly distinct seconds, so the shifts below 12 or so are
// new terms for most documents. Eight terms in place of 16 halve them.
const timeShiftStep = 8

// timeTermCount is the number of terms the time field indexes per
// document.
const timeTermCount = 64 / timeShiftStep

// timeTerms returns the terms the time field indexes for v (the Unix
// seconds of timeKey), lowest shift first, cut from one array.
func timeTerms(v int64) analysis.TokenStream {
	buf := make([]byte, 0, timeTermBytes)
	toks := make([]analysis.Token, timeTermCount)
	out := make(analysis.TokenStream, timeTermCount)
	for i := range toks {
		t := numeric.MustNewPrefixCodedInt64Prealloc(v, uint(i*timeShiftStep), buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+len(t)]
		toks[i] = analysis.Token{End: len(t), Term: t[:len(t):len(t)], Position: 1, Type: analysis.DateTime}
		out[i] = &toks[i]
	}
	return out
}

// timeTermBytes is the length of a document's time terms together: a
// shift byte and the value's 64-shift bits, 7 a byte, per term.
var timeTermBytes = func() int {
	n := 0
	for s := 0; s < 64; s += timeShiftStep {
		n += 1 + (63-s)/7 + 1
	}
	return n
}()

// newTimeField is the time field of a document at v (timeKey's Unix
// seconds): its
// timeTerms, analysed beforehand. Like bleve's datetime field it is
// indexed only, neither stored nor kept as doc values.
func newTimeField(v int64) *document.TextField {
	toks := timeTerms(v)
	return document.NewTextFieldCustom(fieldTime, nil, toks[0].Term, optTime, analysed(toks))
}

// timeRangeSearcher is an unscored searcher of the documents whose time
// field holds a value in [lo, hi] (inclusive; timeKey seconds): the terms
// of the fewest prefixes that cover the range, at the field's shifts, of
// those the index holds.
func timeRangeSearcher(ctx context.Context, r index.IndexReader, lo, hi int64, opts search.SearcherOptions) (search.Searcher, error) {
	var has func([]byte) bool
	if rc, ok := r.(index.IndexReaderContains); ok {
		d, err := rc.FieldDictContains(fieldTime)
		if err != nil {
			return nil, err
		}
		if c, ok := d.(index.FieldDict); ok {
			defer c.Close()
		}
		has = func(t []byte) bool {
			ok, err := d.Contains(t)
			return err == nil && ok
		}
	}
	var terms [][]byte
	for _, tr := range splitTimeRange(lo, hi) {
		for p := tr.lo; ; p++ {
			t := numeric.MustNewPrefixCodedInt64(p<<tr.shift, tr.shift)
			if has == nil || has(t) {
				terms = append(terms, t)
			}
			if p == tr.hi {
				break
			}
		}
	}
	return searcher.NewMultiTermSearcherBytes(ctx, r, terms, fieldTime, 1, opts, true)
}

// timeRange is the prefixes lo..hi (inclusive) at shift: the values v
// with lo <= v>>shift <= hi.
type timeRange struct {
	lo, hi int64
	shift  uint
}

// splitTimeRange covers [lo, hi] with the fewest prefixes at the shifts
// of timeShiftStep (Lucene's and bleve's numeric range split): at each
// shift, the partial blocks at the range's ends, then the rest one shift
// up. Every value in [lo, hi] is under exactly one prefix, no other
// value is under any.
func splitTimeRange(lo, hi int64) []timeRange {
	if lo > hi {
		return nil
	}
	const mask = int64(1)<<timeShiftStep - 1 // a prefix's place in its block one shift up
	var out []timeRange
	plo, phi := lo, hi // the range's prefixes at shift
	for shift := uint(0); ; shift += timeShiftStep {
		if shift+timeShiftStep >= 64 {
			return append(out, timeRange{plo, phi, shift})
		}
		// The first and last prefixes one shift up whose whole block is
		// inside [plo, phi].
		nlo, nhi := plo>>timeShiftStep, phi>>timeShiftStep
		if plo&mask != 0 {
			nlo++
		}
		if phi&mask != mask {
			nhi--
		}
		if nlo > nhi {
			return append(out, timeRange{plo, phi, shift})
		}
		if first := nlo << timeShiftStep; plo < first {
			out = append(out, timeRange{plo, first - 1, shift})
		}
		if last := nhi<<timeShiftStep | mask; last < phi {
			out = append(out, timeRange{last + 1, phi, shift})
		}
		plo, phi = nlo, nhi
	}
}
