package fts

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/floatscan"
)

// The text search finds its top k by MaxScore (Turtle and Flood, 1995)
// over each segment's postings (postings.go), scoring BM25F itself. A
// word's contribution to a document of a segment is below its bound
// there, worked out from the best postings of each field (postings.front).
// The words are ordered by bound; once k documents are held, the words
// whose bounds together stay below the k-th score cannot lift a document
// into the top k on their own: they stop producing candidates and are
// only looked up, by a seek, for documents the other words bring.
// Frequent words, whose postings are most of a query's cost and whose
// bounds are the lowest, are the first to go. The segments are searched
// in the snapshot's order, and the top k and its k-th score carry from
// one to the next. The result is the exact top k by BM25F (equal scores
// at the k-th place are broken by record id). A segment whose words'
// postings would all be read anyway is searched by accumulate instead.

// Documents are known by their number in the snapshot, the value of
// bleve's internal id (index.IndexInternalID.Value), which orders them
// as the postings do: a segment's local number plus the documents of the
// segments before it, deleted ones included.

// docEnd is the document number of an exhausted cursor.
const docEnd = math.MaxUint64

// noDoc is the segment-local number of an exhausted cursor.
const noDoc = math.MaxUint32

// wordCursor is one query word's postings in the segment searched.
type wordCursor struct {
	pos    int // the word's place in the query
	idf    float64
	bound  float64 // above the word's contribution to any document of the segment
	memo   *scoreMemo
	p      *postings
	cursor // the current posting; doc is noDoc when exhausted
	// part is the word's contribution to document scored, and said
	// whether that document says it.
	part   float64
	said   bool
	scored uint32
	// kv is the word's contribution by the posting's code in p (its
	// enc's place in p.dict), 0 until worked out. code8Escape's slot
	// stays 0: addTo reads it for an escaped posting (and a byte
	// indexes kv without a bounds check).
	kv [code8Escape + 1]float64
	// esc is the place in p.esc of the next escaped posting addTo meets
	// (it checks, and finds it again if not).
	esc int
}

func (w *wordCursor) next() { w.p.next(&w.cursor) }

// advance moves w to the first document at or after doc.
func (w *wordCursor) advance(doc uint32) {
	if w.doc >= doc {
		return
	}
	w.p.seek(&w.cursor, doc)
}

// score is the word's contribution to the document w stands on, and
// whether the document itself says it (said). The fields are summed in
// field order, operation for operation as Scoring.termScore: the same
// score to the last bit.
func (w *wordCursor) score(s *queryScorer) (float64, bool) {
	if code := w.p.code; code != nil {
		c := code[w.i]
		if c == code8Escape {
			return w.scoreSlow(s, encEscape)
		}
		e := w.p.dict[c]
		if v := w.kv[c]; v != 0 {
			return v, int(e>>encField) == fText
		}
		v, said := w.scoreEnc(s, e)
		w.kv[c] = v
		return v, said
	}
	return w.scoreEnc(s, w.p.enc[w.i])
}

// scoreEnc is score for a posting of enc e.
func (w *wordCursor) scoreEnc(s *queryScorer, e uint16) (float64, bool) {
	if dl := e & encMaxDL; dl < memoDL {
		// An escaped posting's slots stay 0.
		if v := w.memo[e>>encTF][dl]; v != 0 {
			return v, int(e>>encField) == fText
		}
	}
	return w.scoreSlow(s, e)
}

func (w *wordCursor) scoreSlow(s *queryScorer, e uint16) (float64, bool) {
	if e&encEscape != encEscape {
		f := int(e >> encField)
		return w.memo.score(s, w.idf, f, uint32(e>>encTF&encMaxTF), uint32(e&encMaxDL)), f == fText
	}
	return w.scoreMulti(s, w.p.multiAt(w.i))
}

// scoreMulti is score for a posting escaped to m.
func (w *wordCursor) scoreMulti(s *queryScorer, m *multiPosting) (float64, bool) {
	var t float64
	said := false
	for f := range nFields {
		if fp := m.f[f]; fp.tf != 0 {
			said = said || f == fText
			t += s.fieldTF(f, float64(fp.tf), float64(fp.dl))
		}
	}
	return s.saturate(w.idf, t), said
}

// setBound bounds w's contribution in its segment: no document holds
// the word more often, in a shorter field, than the best postings of
// each field, and the contribution grows with each field's share.
func (w *wordCursor) setBound(s *queryScorer) {
	var t float64
	for f, front := range w.p.front {
		best := 0.0
		for _, fp := range front {
			best = max(best, s.fieldTF(f, float64(fp.tf), float64(fp.dl)))
		}
		t += best
	}
	// A little above: sums of bounds taken in another order than a
	// document's score must not fall below it.
	w.bound = s.saturate(w.idf, t) * (1 + 1e-9)
}

// queryScorer is Scoring.termScore with one snapshot's statistics
// worked out once per search.
type queryScorer struct {
	w, avg [nFields]float64
	b, k1  float64
}

func newQueryScorer(s *Scoring, st *fieldStats) *queryScorer {
	q := &queryScorer{w: s.weights(), b: s.B, k1: s.K1}
	for f := range nFields {
		q.avg[f] = st.avg(f)
	}
	return q
}

// fieldTF is field f's term in Scoring.termScore's t: the frequency,
// normalised by the field's length, and weighted.
func (s *queryScorer) fieldTF(f int, tf, dl float64) float64 {
	if tf == 0 {
		return 0
	}
	norm := 1.0
	if s.avg[f] > 0 {
		norm = 1 - s.b + s.b*dl/s.avg[f]
	}
	return s.w[f] * tf / norm
}

// saturate is a word's contribution for the sum t of its fieldTF.
func (s *queryScorer) saturate(idf, t float64) float64 {
	if t == 0 {
		return 0
	}
	return idf * t * (s.k1 + 1) / (s.k1 + t)
}

// scoreMemo keeps a word's contribution to a document that holds it in
// one field, by the posting's field and frequency (enc's top bits) and
// its length, for the short ones: most postings repeat a few of them.
type scoreMemo [1 << (16 - encTF)][memoDL]float64 // 0: not worked out yet

const memoDL = 128

var memos = sync.Pool{New: func() any { return new(scoreMemo) }}

// score is the contribution of a posting in field f alone.
func (m *scoreMemo) score(s *queryScorer, idf float64, f int, tf, dl uint32) float64 {
	v := s.saturate(idf, s.fieldTF(f, float64(tf), float64(dl)))
	if dl < memoDL {
		m[uint32(f)<<(encField-encTF)|tf][dl] = v
	}
	return v
}

// scoredDoc is a document held in the top k.
type scoredDoc struct {
	score float64
	doc   uint64
	cov   float64 // coverage (engine.TextHit), for Index's top k; negative: not worked out yet (topK looks it up at the end)
	seg   int32   // the segment of doc, for Index's top k
}

// below reports whether a document scoring score cannot enter a top k
// whose k-th place is t. One that ties with t still may: equal scores
// are ordered by record id, which bleve's document numbers do not follow
// (see topK).
func below(score float64, t scoredDoc) bool { return score < t.score }

// keepTies drops from ties the documents scoring below kth, once there
// are enough of them to be worth a pass: they can no longer enter.
func keepTies(ties []scoredDoc, kth float64, k int) []scoredDoc {
	if len(ties) < 2*k+64 {
		return ties
	}
	return slices.DeleteFunc(ties, func(t scoredDoc) bool { return t.score < kth })
}

// worse orders the top k's heap: its root is the document that goes
// first, the lowest score, then the highest document number.
func worse(a, b scoredDoc) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.doc > b.doc
}

// topHeap is the top k, a min-heap by worse: container/heap's
// algorithm, without its interface calls (a search offers it hundreds
// of documents).
type topHeap []scoredDoc

// push adds d (container/heap's Push).
func (h *topHeap) push(d scoredDoc) {
	*h = append(*h, d)
	h.up(len(*h) - 1)
}

// fixRoot restores the order after the root was replaced
// (container/heap's Fix of index 0).
func (h topHeap) fixRoot() {
	if !h.down(0) {
		h.up(0)
	}
}

func (h topHeap) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !worse(h[j], h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

func (h topHeap) down(i0 int) bool {
	i, n := i0, len(h)
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && worse(h[j2], h[j1]) {
			j = j2
		}
		if !worse(h[j], h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
	return i > i0
}

// topK returns the k best documents of snapshot r by BM25F for terms,
// restricted by f, with their scores and coverage, best first. A
// document enters the top k only once every word has been looked up for
// it, so its score is complete; it is summed in the query's order.
// Equal scores go by record id, lowest first, as in sortHits.
//
// With a positive budget, when the words have more postings than it in
// the scored fields together, topK searches nothing and returns the
// words' statistics instead (over), for the caller to score a pool:
// when it knows where the pool's documents are (pool, record ids of
// earlier hits), over holds them scored already (over.scored).
func (x *Index) topK(ctx context.Context, r index.IndexReader, terms []string, f engine.TextFilter, k, budget int, pool []uint64) (hits []engine.TextHit, over *queryStats, err error) {
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
	// The words' postings in each segment (lists[word][segment]): the
	// cached ones counted from their arrays, the others by bleve (live
	// postings only) and decoded only if the search runs.
	lists := make([][]termList, len(terms))
	delDocs := make([][]uint32, len(segs)) // each segment's deleted documents, listed on first use
	listed := make([]bool, len(segs))
	idfs := make([]float64, len(terms))
	var held []*postings // the cached lists read, released on return
	defer func() { x.postings.release(held) }()
	postings := 0
	for pos, t := range terms {
		lists[pos] = make([]termList, len(segs))
		var cnt [nFields]uint64
		for si, seg := range segs {
			l := &lists[pos][si]
			var live [nFields]uint64
			if l.p = x.postings.get(listKey(seg, t)); l.p != nil {
				held = append(held, l.p)
				if !listed[si] {
					delDocs[si], listed[si] = deletedDocs(seg), true
				}
				for fi, c := range l.p.liveCount(delDocs[si]) {
					live[fi] = uint64(c)
				}
			} else {
				ck := countKey(seg, t)
				var ok bool
				if live, ok = x.counts.get(ck); !ok {
					for fi, field := range bm25Fields {
						dict, err := seg.Segment().Dictionary(field)
						if err != nil {
							return nil, nil, err
						}
						pl, err := dict.PostingsList([]byte(t), seg.Deleted(), nil)
						if err != nil {
							return nil, nil, err
						}
						live[fi] = pl.Count()
					}
					x.counts.put(ck, live)
				}
			}
			for fi, c := range live {
				cnt[fi] += c
				l.live = l.live || c > 0
				l.postings += int(min(c, math.MaxInt32))
			}
		}
		var df uint64
		for _, c := range cnt {
			postings += int(min(c, math.MaxInt32))
			df = max(df, c)
		}
		idfs[pos] = idf(st.n, float64(df))
	}
	segStart := make([]uint64, len(segs))
	var off uint64 // the first document number of segment si
	for si, seg := range segs {
		segStart[si] = off
		off += seg.Segment().Count()
	}
	if budget > 0 && postings > budget {
		over := &queryStats{fields: st, idf: idfs, postings: postings}
		if len(pool) == 0 {
			return nil, over, nil
		}
		docs, ok := x.locate(pool, segs)
		if !ok {
			return nil, over, nil
		}
		pass, done, err := passFunc(ctx, r, f)
		if err != nil {
			return nil, nil, err
		}
		defer done()
		// The search whose hits the pool is may have scored the pool
		// for the first words already (firstpass.go).
		first, starts := x.passes.starts(terms, &st, idfs, !f.NoCoverage, docs, func(si int) uint64 { return segs[si].Id() })
		if over.hits, over.scored, err = x.scoreLocated(ctx, segs, segStart, terms, over, lists, docs, first, starts, pass); err != nil {
			return nil, nil, err
		}
		return nil, over, nil
	}
	for pos, t := range terms {
		for si, seg := range segs {
			if l := &lists[pos][si]; l.live && l.p == nil {
				if l.p, err = x.segmentPostings(ctx, seg, t, nil); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	pass, done, err := passFunc(ctx, r, f)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	qs := newQueryScorer(&x.scoring, &st)
	var idfSum float64
	for _, v := range idfs {
		idfSum += v
	}
	memo := make([]*scoreMemo, len(terms))
	defer func() {
		for _, m := range memo {
			if m != nil {
				*m = scoreMemo{}
				memos.Put(m)
			}
		}
	}()
	// top and ties are kept for the next search (scoredBufs): the hits
	// returned are copies.
	topBuf, tieBuf := scoredBufs.Get().(*[]scoredDoc), scoredBufs.Get().(*[]scoredDoc)
	top := topHeap(slices.Grow((*topBuf)[:0], k))
	ties := (*tieBuf)[:0] // documents that tied with the k-th place when they came
	defer func() {
		*topBuf, *tieBuf = top[:0], ties[:0]
		scoredBufs.Put(topBuf)
		scoredBufs.Put(tieBuf)
	}()
	// floor stands for the k-th place until k documents are held: at
	// least k documents reach it (f.Floor), so none below it can enter.
	floor := scoredDoc{score: max(f.Floor, 0), doc: docEnd}
	// theta is the document to beat: the k-th, or the floor while fewer
	// are held; full once there is one.
	theta, full := floor, floor.score > 0
	// offer puts cand, complete and not below theta, in the top k if
	// the filter passes it, and reports whether theta may have risen.
	offer := func(cand scoredDoc) bool {
		if pass != nil && !pass(cand.doc) {
			return false
		}
		if len(top) == k {
			if cand.score == top[0].score {
				ties = keepTies(append(ties, cand), cand.score, k)
				return false
			}
			ties = keepTies(append(ties, top[0]), top[0].score, k)
			top[0] = cand
			top.fixRoot()
		} else {
			top.push(cand)
		}
		if len(top) < k {
			return false
		}
		full = true
		if worse(floor, top[0]) {
			theta = top[0]
		}
		return true
	}
	words := make([]*wordCursor, 0, len(terms))
	inQuery := make([]*wordCursor, 0, len(terms))
	cursorBuf := takeCursors(len(terms))
	defer func() {
		clear(*cursorBuf) // their postings and memos
		cursorBufs.Put(cursorBuf)
	}()
	cursors := *cursorBuf
	prefix := make([]float64, len(terms)+1) // prefix[i]: the bounds of words[:i]
	var acc *[accWindow]float64             // accumulate's scores, from accs
	defer func() {
		if acc != nil {
			// All zero again, whatever stopped the search.
			clear(acc[:])
			accs.Put(acc)
		}
	}()
	visited := 0
	for si, seg := range segs {
		segOff := segStart[si]
		words = words[:0]
		for pos := range terms {
			l := lists[pos][si]
			if !l.live || l.p.n == 0 {
				continue
			}
			if memo[pos] == nil {
				memo[pos] = memos.Get().(*scoreMemo)
			}
			w := &cursors[pos]
			w.pos, w.idf, w.memo, w.p, w.cursor, w.scored = pos, idfs[pos], memo[pos], l.p, l.p.start(), noDoc
			w.part, w.said, w.esc = 0, false, 0
			clear(w.kv[:len(l.p.dict)])
			w.setBound(qs)
			words = append(words, w)
		}
		if len(words) == 0 {
			continue
		}
		inQuery = append(inQuery[:0], words...) // the words in the query's order
		// The segment's deleted documents, sorted, and the first not
		// below the document at hand.
		if !listed[si] {
			delDocs[si], listed[si] = deletedDocs(seg), true
		}
		dels, dp := delDocs[si], 0
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
		for i, w := range words {
			prefix[i+1] = prefix[i] + w.bound
		}
		essential := 0 // words[:essential] only score documents the others bring
		rise := func(bar float64) {
			for essential < len(words) && prefix[essential+1] < bar {
				essential++
			}
		}
		rise(theta.score)
		if !forceMaxScore && (forceAccumulate || accumulateCheaper(words, essential, uint32(min(seg.Segment().Count(), noDoc)))) {
			if acc == nil {
				acc = accs.Get().(*[accWindow]float64)
			}
			// The least sum that can enter: theta's, or any but 0.
			least := func() float64 {
				if full {
					return theta.score
				}
				return math.SmallestNonzeroFloat64
			}
			if err := accumulate(ctx, inQuery, qs, acc, dels, uint32(min(seg.Segment().Count(), noDoc)), least(), func(doc uint32, score float64) float64 {
				offer(scoredDoc{score: score, doc: segOff + uint64(doc), cov: -1, seg: int32(si)})
				return least()
			}); err != nil {
				return nil, nil, err
			}
			continue
		}
		doc := uint32(noDoc) // the next document of the essential words
		for _, w := range words[essential:] {
			doc = min(doc, w.doc)
		}
		for doc != noDoc {
			if visited++; visited%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, nil, err
				}
			}
			cur, next := doc, uint32(noDoc)
			if dp < len(dels) && dels[dp] <= cur {
				dp = gallop(dels, dp, cur)
			}
			if dp < len(dels) && dels[dp] == cur {
				// Deleted in this snapshot: a posting of no document.
				for _, w := range words[essential:] {
					if w.doc == cur {
						w.next()
					}
					next = min(next, w.doc)
				}
				doc = next
				continue
			}
			var score float64
			for _, w := range words[essential:] {
				if w.doc == cur {
					w.part, w.said = w.score(qs)
					w.scored = cur
					score += w.part
					w.next()
				}
				next = min(next, w.doc)
			}
			doc = next
			gdoc := segOff + uint64(cur)
			// The words that only score, highest bound first, while the
			// document can still reach the k-th place.
			for i := essential - 1; i >= 0; i-- {
				if full && below(score+prefix[i+1], theta) {
					break
				}
				w := words[i]
				if w.advance(cur); w.doc == cur {
					w.part, w.said = w.score(qs)
					w.scored = cur
					score += w.part
				}
			}
			if score == 0 || full && below(score, theta) {
				continue
			}
			// Every word was looked up: the score, summed in the query's
			// order, and the coverage.
			cand := scoredDoc{doc: gdoc}
			for _, w := range inQuery {
				if w.scored == cur {
					cand.score += w.part
					if w.said {
						cand.cov += w.idf
					}
				}
			}
			if full && below(cand.score, theta) {
				continue
			}
			if offer(cand) {
				was := essential
				rise(theta.score)
				if essential != was {
					// Words left candidate generation: the next document
					// is the first of those that remain.
					doc = noDoc
					for _, w := range words[essential:] {
						doc = min(doc, w.doc)
					}
				}
			}
		}
	}
	if len(top) == k {
		// The documents tied with the k-th place compete: equal scores
		// go by record id (sortHits), and k are kept below.
		// Bleve numbers a batch's documents in the order its analysis
		// finished, so choosing by number would depend on timing.
		kth := top[0].score
		for _, t := range ties {
			if t.score == kth {
				top = append(top, t)
			}
		}
	}
	// The hits, kept with their places for a pooled search of them
	// (firstpass.go), best first as sortHits orders them.
	ph := make([]passHit, 0, len(top))
	locIDs, locSegs, locDocs := make([]uint64, 0, len(top)), make([]uint64, 0, len(top)), make([]uint64, 0, len(top))
	var iid [8]byte
	if !f.NoCoverage {
		coverAccumulated(top, terms, lists, idfs, segStart)
	}
	var files storedIDFiles // large segments' ids, read without mapping their pages (storedid.go)
	defer files.close()
	for _, t := range top {
		id, err := x.ids.recordID(segs[t.seg], t.doc-segStart[t.seg], func() (uint64, error) {
			if id, ok, err := files.recordID(segs[t.seg], t.doc-segStart[t.seg]); ok {
				return id, err
			}
			ext, err := r.ExternalID(index.NewIndexInternalID(iid[:], t.doc))
			if err != nil {
				return 0, err
			}
			id, err := strconv.ParseUint(ext, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%w (document id %q)", ErrCorrupt, ext)
			}
			return id, nil
		})
		if err != nil {
			return nil, nil, err
		}
		seg, doc := segs[t.seg].Id(), t.doc-segStart[t.seg]
		locIDs, locSegs, locDocs = append(locIDs, id), append(locSegs, seg), append(locDocs, doc)
		ph = append(ph, passHit{id: id, seg: seg, doc: doc, score: t.score, cov: t.cov})
	}
	x.locs.put(locIDs, locSegs, locDocs)
	sortPassHits(ph)
	hits = make([]engine.TextHit, len(ph))
	for i, t := range ph {
		hits[i] = engine.TextHit{ID: t.id, Score: t.score, Coverage: t.cov}
		if f.NoCoverage {
			hits[i].Coverage = 0
		} else if idfSum > 0 {
			hits[i].Coverage /= idfSum
		}
	}
	x.passes.put(&firstPass{terms: terms, st: st, idf: idfs, hits: ph, covered: !f.NoCoverage})
	return hits[:min(k, len(hits))], nil, nil
}

// coverAccumulated works out the coverage of the documents of top that
// accumulate scored (cov < 0): the idf of the words each says, looked up
// now and summed in the query's order. The documents are taken in their
// order, a cursor a word moving forward through a segment's lists.
func coverAccumulated(top []scoredDoc, terms []string, lists [][]termList, idfs []float64, segStart []uint64) {
	var order []int
	for i, t := range top {
		if t.cov < 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(top[a].doc, top[b].doc) })
	cur := make([]cursor, len(terms))
	seg := int32(-1)
	for _, i := range order {
		t := &top[i]
		if t.seg != seg {
			seg = t.seg
			for pos := range terms {
				cur[pos] = cursor{doc: noDoc}
				if l := lists[pos][seg]; l.live && l.p.n > 0 {
					cur[pos] = l.p.start()
				}
			}
		}
		t.cov = 0
		doc := uint32(t.doc - segStart[seg])
		for pos := range terms {
			c := &cur[pos]
			if c.doc == noDoc {
				continue // the word's list here is done, or empty
			}
			p := lists[pos][seg].p
			if p.seek(c, doc); c.doc == doc && p.said(c.i) {
				t.cov += idfs[pos]
			}
		}
	}
}

// termList is a word's postings in one segment, as topK found them.
type termList struct {
	p        *postings // nil until decoded
	live     bool      // the segment has live postings of the word
	postings int       // its live postings in the scored fields
}

// passFunc returns the filter of f as a test of a snapshot document
// number, nil when f filters nothing; the numbers must be asked in
// ascending order. done closes what it opened.
func passFunc(ctx context.Context, r index.IndexReader, f engine.TextFilter) (pass func(doc uint64) bool, done func(), err error) {
	filter, err := filterSearcher(ctx, r, f)
	if err != nil || filter == nil {
		return nil, func() {}, err
	}
	sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(filter.DocumentMatchPoolSize(), 0)}
	fn := filterFunc(filter)
	var m search.DocumentMatch
	var id [8]byte
	pass = func(doc uint64) bool {
		m.IndexInternalID = index.NewIndexInternalID(id[:], doc)
		return fn(sctx, &m)
	}
	return pass, func() { _ = filter.Close() }, nil
}

// The first search scores a segment by MaxScore (above) or, when every
// word's postings would be read anyway, by accumulating: the words'
// postings are walked one word after the other, in the query's order,
// adding each posting's contribution to its document's sum, over a
// window of accWindow documents at a time (a few hundred KiB, held in
// the processor's cache). A document's sum is then the same as
// MaxScore's, to the last bit: the same contributions, added from 0 in
// the query's order. Walking a list costs a few nanoseconds a posting;
// MaxScore's visit of a document, with its cursors to compare and
// advance, several times that, so MaxScore pays only where the bounds
// leave most postings out.

// accWindow is the documents accumulate sums at a time.
const accWindow = 1 << 14

var accs = sync.Pool{New: func() any { return new([accWindow]float64) }}

// The costs accumulateCheaper weighs, in nanoseconds, as measured on the
// 1M synthetic workload: a posting walked and added, a document of a
// window scanned for its sum, and MaxScore's visit of a posting of a
// word that brings candidates.
const (
	costAdd   = 4
	costScan  = 1
	costVisit = 30
)

// forceMaxScore and forceAccumulate choose the way every segment is
// searched, for the tests.
var forceMaxScore, forceAccumulate bool

// accumulateCheaper reports whether accumulating a segment of count
// documents is expected to cost less than MaxScore, whose words[essential:]
// bring candidates (words sorted by bound).
func accumulateCheaper(words []*wordCursor, essential int, count uint32) bool {
	var all, brought int
	for i, w := range words {
		all += w.p.n
		if i >= essential {
			brought += w.p.n
		}
	}
	return costAdd*all+costScan*int(min(count, uint32(all)*4)) < costVisit*brought
}

// accumulate sums the contributions of the words (in the query's order,
// their cursors at the segment's start) to each document of a segment
// of count documents, and calls found with each document whose sum is
// least or more and that dels (sorted) does not list, in ascending
// order; found returns the new least (positive). The cursors end
// exhausted. acc is all zero, and is so again on return.
func accumulate(ctx context.Context, words []*wordCursor, s *queryScorer, acc *[accWindow]float64, dels []uint32, count uint32, least float64, found func(doc uint32, score float64) float64) error {
	for _, w := range words {
		// Every code's contribution, worked out once.
		for c, e := range w.p.dict {
			if w.kv[c] == 0 {
				w.kv[c], _ = w.scoreEnc(s, e)
			}
		}
	}
	dp := 0
	for {
		lo := uint32(noDoc)
		for _, w := range words {
			lo = min(lo, w.doc)
		}
		if lo >= count {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		lo &^= accWindow - 1
		hi := min(count, lo+accWindow)
		for _, w := range words {
			w.addTo(acc, lo, hi, s)
		}
		for ; dp < len(dels) && dels[dp] < hi; dp++ {
			if dels[dp] >= lo {
				acc[dels[dp]-lo] = 0
			}
		}
		least = scan(acc[:hi-lo], lo, least, found)
	}
}

// scan calls found with each document of the window win (whose first is
// lo) that sums least or more, and zeroes win; it returns the last least.
// The sums below least are skipped and cleared sixteen at a time
// (floatscan.ClearBelow); each one found is compared with the least
// found returned for the one before, as one at a time would.
func scan(win []float64, lo uint32, least float64, found func(doc uint32, score float64) float64) float64 {
	for i := 0; ; i++ {
		i += floatscan.ClearBelow(win[i:], least)
		if i == len(win) {
			return least
		}
		v := win[i]
		win[i] = 0
		least = found(lo+uint32(i), v)
	}
}

// addTo adds w's contribution to acc[doc-lo] for each document of w
// below hi, from w's cursor on, and moves the cursor past them. lo is a
// multiple of accWindow and hi at most lo+accWindow.
func (w *wordCursor) addTo(acc *[accWindow]float64, lo, hi uint32, s *queryScorer) {
	p := w.p
	if p.code == nil {
		w.addEncsTo(acc, lo, hi, s)
		return
	}
	code, gaps, kv := p.code, p.gaps, &w.kv
	i, doc, gpos := w.i, w.doc, w.gpos
	for doc < hi {
		// Eight postings at once, when the gaps after them are a byte
		// each and the eighth stays in the window: the documents are doc
		// plus the gaps' running sums, each added to once, as one at a
		// time would. An escaped posting's code reads 0 in kv (x + 0 is
		// x), and its contribution is added after.
		if g8, i8 := gpos+8, i+8; g8 <= len(gaps) && i8 <= len(code) {
			x := binary.LittleEndian.Uint64(gaps[gpos:g8])
			if x&0x8080808080808080 == 0 {
				y := x&0x00ff00ff00ff00ff + x>>8&0x00ff00ff00ff00ff
				if sum := uint32(y * 0x0001000100010001 >> 48); doc+sum < hi {
					const m = accWindow - 1 // doc-lo is below accWindow: the mask only drops the bounds check
					g, c := (*[8]byte)(gaps[gpos:g8]), (*[8]byte)(code[i:i8])
					d := doc - lo
					acc[d&m] += kv[c[0]]
					d += uint32(g[0])
					acc[d&m] += kv[c[1]]
					d += uint32(g[1])
					acc[d&m] += kv[c[2]]
					d += uint32(g[2])
					acc[d&m] += kv[c[3]]
					d += uint32(g[3])
					acc[d&m] += kv[c[4]]
					d += uint32(g[4])
					acc[d&m] += kv[c[5]]
					d += uint32(g[5])
					acc[d&m] += kv[c[6]]
					d += uint32(g[6])
					acc[d&m] += kv[c[7]]
					// The escaped ones: bytes 0xff of c, zero bytes of its ^,
					// each of which sets its 0x80 bit in z (the lowest is
					// exact; those above it may also be set by a borrow
					// past a zero byte, and are checked), in ascending order.
					nc := ^binary.LittleEndian.Uint64(c[:])
					for z := (nc - 0x0101010101010101) &^ nc & 0x8080808080808080; z != 0; z &= z - 1 {
						if j := bits.TrailingZeros64(z) >> 3; c[j] == code8Escape {
							// The document j postings on: the gaps of the j before.
							dj := doc - lo
							for _, g := range gaps[gpos : gpos+j] {
								dj += uint32(g)
							}
							acc[dj&m] += w.escaped(s, i+j)
						}
					}
					i, doc, gpos = i8, doc+sum, g8
					continue
				}
			}
		}
		v := kv[code[i]]
		if code[i] == code8Escape {
			v = w.escaped(s, i)
		}
		acc[doc-lo] += v
		// The next document: a one-byte gap, or a longer uvarint.
		i++
		if gpos < len(gaps) && gaps[gpos] < 0x80 {
			doc += uint32(gaps[gpos])
			gpos++
			continue
		}
		w.cursor = cursor{i: i - 1, doc: doc, gpos: gpos}
		p.next(&w.cursor)
		i, doc, gpos = w.i, w.doc, w.gpos
	}
	w.cursor = cursor{i: i, doc: doc, gpos: gpos}
}

// escaped is the contribution of posting i, escaped, of w's list, whose
// escapes addTo meets in order.
func (w *wordCursor) escaped(s *queryScorer, i int) float64 {
	p := w.p
	if w.esc >= len(p.esc) || p.esc[w.esc] != uint32(i) {
		w.esc, _ = slices.BinarySearch(p.esc, uint32(i))
	}
	v, _ := w.scoreMulti(s, &p.multi[w.esc])
	w.esc++
	return v
}

// addEncsTo is addTo for a list without codes (p.enc).
func (w *wordCursor) addEncsTo(acc *[accWindow]float64, lo, hi uint32, s *queryScorer) {
	p := w.p
	for w.doc < hi {
		v, _ := w.scoreEnc(s, p.enc[w.i])
		acc[w.doc-lo] += v
		p.next(&w.cursor)
	}
}

// scoredBufs holds the top k's heap and ties of Index.topK for reuse.
var scoredBufs = sync.Pool{New: func() any { return new([]scoredDoc) }}

// cursorBufs holds Index.topK's word cursors for reuse (a cursor is about
// 2 KB, its kv table).
var cursorBufs = sync.Pool{New: func() any { return new([]wordCursor) }}

// takeCursors returns a buffer from cursorBufs of n zero cursors: a
// buffer is put back cleared (as topK does), so its room past any
// length is zero.
func takeCursors(n int) *[]wordCursor {
	b := cursorBufs.Get().(*[]wordCursor)
	if cap(*b) < n {
		*b = make([]wordCursor, n)
	} else {
		*b = (*b)[:n]
	}
	return b
}
