package fts

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/hmo-dev/hmo/engine"
)

// The text search finds its top k by MaxScore (Turtle and Flood, 1995)
// over bleve's postings, scoring BM25F itself. A word's contribution to a
// document's score is below idf·(k1+1), its bound. The words are ordered
// by bound; once k documents are held, the words whose bounds together
// stay below the k-th score cannot lift a document into the top k on
// their own: they stop producing candidates and are only looked up, by a
// seek, for documents the other words bring. Frequent words, whose
// postings are most of a query's cost and whose bounds are the lowest,
// are the first to go. The result is the exact top k by BM25F (equal
// scores at the k-th place are broken by bleve's internal order).

// Documents are known by their number in the snapshot, the value of
// bleve's internal id (index.IndexInternalID.Value), which orders them
// as the postings do.

// docEnd is the document number of an exhausted cursor.
const docEnd = math.MaxUint64

// fieldCursor walks one word's postings in one field, segment after
// segment, deleted documents included (topK skips them).
type fieldCursor struct {
	parts []segmentList // the segments that hold postings, in snapshot order
	pi, i int           // the current part and posting
	doc   uint64        // current document number; docEnd when exhausted
	freq  float64
	dl    float64 // the field's length in the current document
}

// segmentList is a word's postings in one segment, whose documents are
// numbered from off in the snapshot.
type segmentList struct {
	off uint64
	p   *postings
}

func (c *fieldCursor) set() {
	if c.pi == len(c.parts) {
		c.doc = docEnd
		return
	}
	pt := &c.parts[c.pi]
	c.doc = pt.off + uint64(pt.p.docs[c.i])
	c.freq, c.dl = pt.p.at(c.i)
}

func (c *fieldCursor) next() {
	if c.pi == len(c.parts) {
		return
	}
	if c.i++; c.i == len(c.parts[c.pi].p.docs) {
		c.pi++
		c.i = 0
	}
	c.set()
}

// advance moves c to the first document at or after doc.
func (c *fieldCursor) advance(doc uint64) {
	if c.doc >= doc {
		return
	}
	for c.pi < len(c.parts) {
		pt := &c.parts[c.pi]
		// c.doc < doc, so doc is past this part's first document.
		t := doc - pt.off
		if t > uint64(pt.p.docs[len(pt.p.docs)-1]) {
			c.pi++
			c.i = 0
			if c.pi < len(c.parts) && c.parts[c.pi].off >= doc {
				break
			}
			continue
		}
		c.i = gallop(pt.p.docs, c.i, uint32(t))
		break
	}
	c.set()
}

// wordCursor is one query word over the scored fields.
type wordCursor struct {
	pos        int // the word's place in the query
	idf, bound float64
	fields     []*fieldCursor // the fields the word occurs in
	field      []int          // their field numbers
	doc        uint64         // the first document any of fields stands on
}

// sync sets w.doc after its cursors moved.
func (w *wordCursor) sync() {
	w.doc = docEnd
	for _, c := range w.fields {
		w.doc = min(w.doc, c.doc)
	}
}

// next moves the cursors on doc past it.
func (w *wordCursor) next(doc uint64) {
	for _, c := range w.fields {
		if c.doc == doc {
			c.next()
		}
	}
	w.sync()
}

// advance moves every cursor to doc or past it.
func (w *wordCursor) advance(doc uint64) {
	for _, c := range w.fields {
		c.advance(doc)
	}
	w.sync()
}

// score is the word's contribution to doc, whose postings the cursors
// stand on when they are at doc, and whether doc itself says it (said).
func (w *wordCursor) score(s *Scoring, st *fieldStats, doc uint64) (float64, bool) {
	var tf, dl [nFields]float64
	for i, c := range w.fields {
		if c.doc == doc {
			tf[w.field[i]], dl[w.field[i]] = c.freq, c.dl
		}
	}
	return s.termScore(w.idf, st, &tf, &dl), said(&tf)
}

// scoredDoc is a document held in the top k.
type scoredDoc struct {
	score float64
	doc   uint64
	cov   float64 // coverage (engine.TextHit), for Index's top k
}

// worse orders the top k's heap: its root is the document that goes
// first, the lowest score, then the highest document number.
func worse(a, b scoredDoc) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.doc > b.doc
}

type topHeap []scoredDoc

func (h topHeap) Len() int           { return len(h) }
func (h topHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h topHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topHeap) Push(x any)        { *h = append(*h, x.(scoredDoc)) }
func (h *topHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// topK returns the k best documents of snapshot r by BM25F for terms,
// restricted by f, with their scores and coverage, best first. A
// document enters the top k only once every word has been looked up for
// it, so its score is complete; it is summed in the query's order.
//
// With a positive budget, when the words have more postings than it in
// the scored fields together, topK searches nothing and returns the
// words' statistics instead (over), for the caller to score a pool.
func (x *Index) topK(ctx context.Context, r index.IndexReader, terms []string, f engine.TextFilter, k, budget int) (hits []engine.TextHit, over *queryStats, err error) {
	n, err := r.DocCount()
	if err != nil {
		return nil, nil, err
	}
	tb, err := r.GetInternal(keyLengths)
	if err != nil {
		return nil, nil, err
	}
	tot, err := decodeTotals(tb)
	if err != nil {
		return nil, nil, err
	}
	st := fieldStats{n: float64(n)}
	for fi := range nFields {
		st.total[fi] = float64(tot[fi])
	}
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil, nil, fmt.Errorf("fts: a reader of type %T, not a scorch snapshot", r)
	}
	segs := snap.Segments()
	offs := make([]uint64, len(segs)) // each segment's first document number
	dels := make([]*roaring.Bitmap, len(segs))
	delDocs := make([][]uint32, len(segs))
	var running uint64
	for i, seg := range segs {
		offs[i] = running
		running += seg.Segment().Count()
		dels[i], delDocs[i] = deletedDocs(seg)
	}
	// A word's lists: cached ones are counted from their arrays, the
	// others by bleve (live postings only) and decoded only if the
	// search runs.
	type list struct {
		seg int
		p   *postings // nil until decoded
	}
	lists := make([][nFields][]list, len(terms))
	words := make([]*wordCursor, 0, len(terms))
	postings := 0
	for pos, t := range terms {
		w := &wordCursor{pos: pos}
		words = append(words, w)
		var df uint64
		for fi, field := range bm25Fields {
			var cnt uint64
			for si, seg := range segs {
				p := x.postings.get(listKey(seg, fi, t))
				var live uint64
				if p != nil {
					live = uint64(p.live(delDocs[si]))
				} else {
					dict, err := seg.Segment().Dictionary(field)
					if err != nil {
						return nil, nil, err
					}
					pl, err := dict.PostingsList([]byte(t), dels[si], nil)
					if err != nil {
						return nil, nil, err
					}
					live = pl.Count()
				}
				if live > 0 {
					cnt += live
					lists[pos][fi] = append(lists[pos][fi], list{si, p})
				}
			}
			postings += int(min(cnt, math.MaxInt32))
			df = max(df, cnt)
		}
		w.idf = idf(st.n, float64(df))
		w.bound = w.idf * (x.scoring.K1 + 1)
	}
	if budget > 0 && postings > budget {
		over = &queryStats{fields: st, idf: make([]float64, len(terms)), postings: postings}
		for _, w := range words {
			over.idf[w.pos] = w.idf
		}
		return nil, over, nil
	}
	for _, w := range words {
		for fi, ls := range lists[w.pos] {
			if len(ls) == 0 {
				continue
			}
			c := &fieldCursor{parts: make([]segmentList, 0, len(ls))}
			for _, l := range ls {
				if l.p == nil {
					p, err := x.segmentPostings(ctx, segs[l.seg], fi, terms[w.pos])
					if err != nil {
						return nil, nil, err
					}
					l.p = p
				}
				if len(l.p.docs) > 0 {
					c.parts = append(c.parts, segmentList{off: offs[l.seg], p: l.p})
				}
			}
			if len(c.parts) == 0 {
				continue
			}
			c.set()
			w.fields, w.field = append(w.fields, c), append(w.field, fi)
		}
		w.sync()
	}
	// Lowest bound first: the words that leave candidate generation first.
	slices.SortStableFunc(words, func(a, b *wordCursor) int {
		switch {
		case a.bound < b.bound:
			return -1
		case a.bound > b.bound:
			return 1
		}
		return 0
	})
	prefix := make([]float64, len(words)+1) // prefix[i]: the bounds of words[:i]
	for i, w := range words {
		prefix[i+1] = prefix[i] + w.bound
	}
	var pass func(doc uint64) bool
	if filter, err := filterSearcher(ctx, r, f); err != nil {
		return nil, nil, err
	} else if filter != nil {
		defer filter.Close()
		sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(filter.DocumentMatchPoolSize(), 0)}
		fn := filterFunc(filter)
		var m search.DocumentMatch
		var id [8]byte
		pass = func(doc uint64) bool {
			m.IndexInternalID = index.NewIndexInternalID(id[:], doc)
			return fn(sctx, &m)
		}
	}
	// The current document's contribution of each word, by query place.
	parts := make([]float64, len(terms))
	says := make([]bool, len(terms))
	idfs := make([]float64, len(terms))
	var idfSum float64
	for _, w := range words {
		idfs[w.pos] = w.idf
		idfSum += w.idf
	}
	top := make(topHeap, 0, k)
	// floor stands for the k-th place until k documents are held: at
	// least k documents reach it (f.Floor), so none below it can enter.
	floor := scoredDoc{score: max(f.Floor, 0), doc: docEnd}
	essential := 0 // words[:essential] only score documents the others bring
	rise := func(bar float64) {
		for essential < len(words) && prefix[essential+1] < bar {
			essential++
		}
	}
	rise(floor.score)
	visited := 0
	si := 0 // the segment of the current document
	for {
		doc := uint64(docEnd)
		for _, w := range words[essential:] {
			doc = min(doc, w.doc)
		}
		if doc == docEnd {
			break
		}
		if visited++; visited%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		for si+1 < len(offs) && offs[si+1] <= doc {
			si++
		}
		if dels[si] != nil && dels[si].Contains(uint32(doc-offs[si])) {
			// Deleted in this snapshot: a posting of no document.
			for _, w := range words[essential:] {
				if w.doc == doc {
					w.next(doc)
				}
			}
			continue
		}
		clear(parts)
		clear(says)
		var score float64
		for _, w := range words[essential:] {
			if w.doc == doc {
				parts[w.pos], says[w.pos] = w.score(&x.scoring, &st, doc)
				score += parts[w.pos]
				w.next(doc)
			}
		}
		full := len(top) == k || floor.score > 0
		theta := floor
		if len(top) == k && worse(floor, top[0]) {
			theta = top[0]
		}
		// The words that only score, highest bound first, while the
		// document can still reach the k-th place.
		for i := essential - 1; i >= 0; i-- {
			if full && worse(scoredDoc{score: score + prefix[i+1], doc: doc}, theta) {
				break
			}
			w := words[i]
			w.advance(doc)
			if w.doc == doc {
				parts[w.pos], says[w.pos] = w.score(&x.scoring, &st, doc)
				score += parts[w.pos]
			}
		}
		if score == 0 || full && worse(scoredDoc{score: score, doc: doc}, theta) {
			continue
		}
		// Every word was looked up: the score, summed in the query's
		// order, and the coverage.
		cand := scoredDoc{doc: doc}
		for pos, p := range parts {
			cand.score += p
			if says[pos] {
				cand.cov += idfs[pos]
			}
		}
		if full && !worse(theta, cand) {
			continue
		}
		if pass != nil && !pass(doc) {
			continue
		}
		if len(top) == k {
			top[0] = cand
			heap.Fix(&top, 0)
		} else {
			heap.Push(&top, cand)
		}
		if len(top) == k {
			rise(top[0].score)
		}
	}
	slices.SortFunc(top, func(a, b scoredDoc) int {
		if worse(b, a) {
			return -1
		}
		if worse(a, b) {
			return 1
		}
		return 0
	})
	hits = make([]engine.TextHit, 0, len(top))
	var iid [8]byte
	for _, t := range top {
		ext, err := r.ExternalID(index.NewIndexInternalID(iid[:], t.doc))
		if err != nil {
			return nil, nil, err
		}
		id, err := strconv.ParseUint(ext, 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%w (document id %q)", ErrCorrupt, ext)
		}
		h := engine.TextHit{ID: id, Score: t.score, Coverage: t.cov}
		if idfSum > 0 {
			h.Coverage /= idfSum
		}
		hits = append(hits, h)
	}
	return hits, nil, nil
}
