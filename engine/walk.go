package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/retrieve"
	"github.com/hmo-dev/hmo/tiers"
)

// recallTiered is the HMO walk: Tier 1, then Tiers 1 and 2, then the
// archive, by similarity regardless of priority, stopping at the first
// sufficient result. Every returned record is accessed.
func (e *Engine) recallTiered(ctx context.Context, q *Query) ([]Result, error) {
	qv, err := e.embedQuery(ctx, q)
	if err != nil {
		if e.opts.NoText || !modelDown(err) {
			return nil, err
		}
		// The embedder's server is down: answer from the archive's
		// full-text index alone, as flat mode does, rather than not at
		// all. The tiers are neither searched nor updated.
		return e.recallLexical(ctx, q)
	}
	q.null = e.vectorNull(qv) // before the tier lock: it reads bbolt
	c := max(e.opts.Candidates, q.K)
	res, served, scored, err := e.searchTiers(ctx, q, qv, c)
	if err != nil {
		return nil, err
	}
	if served == TierArchive {
		// The archive search takes wmu when it opens the vector index,
		// and writers take wmu before the tier lock: search unlocked.
		if res, err = e.recallArchive(ctx, q, qv); err != nil {
			return nil, err
		}
		scored += 2 * c
	}
	ts := e.tiers
	ts.mu.Lock()
	e.countQuery(served, scored)
	// The results carry the headers the tier state has for them as the
	// recall answers, before its access.
	for i := range res {
		e.currentHeader(&res[i].Record)
	}
	err = ts.takeAccessErr() // the last recall's access's
	if q.NoAccess {
		ts.mu.Unlock()
		return res, err
	}
	// The access (the manager's counts, priorities and moves, the views'
	// changes) is made after the reply, on a goroutine that holds the
	// tier lock until it is made: whatever reads the tier state next (the
	// next walk, TierStats, Get, admission, a flush, Close) takes the
	// lock, so it waits for it, and every state change is made in the
	// order it was when the recall made it. Its error is reported by the
	// next recall, Access or Close.
	acc, readTx, now := slices.Clone(res), q.readTx, e.opts.Clock()
	ts.jobs.Add(1)
	go func() {
		defer ts.jobs.Done()
		defer ts.mu.Unlock()
		ts.accessErr = e.access(acc, readTx, now)
	}()
	return res, err
}

// currentHeader sets r's header to the one the tier state has for it:
// the manager's for a record in Tier 1 or 2, the one kept in memory for
// an archive record accessed or demoted since the last flush, else the
// stored one. ts.mu is held.
func (e *Engine) currentHeader(r *Record) {
	ts := e.tiers
	if en, ok := ts.mgr.Entry(r.ID); ok {
		r.Header = headerOf(en)
	} else if h, ok := ts.accessed[r.ID]; ok {
		r.Header = h
	}
}

// countQuery adds a query to the walk's counters. ts.mu is held.
func (e *Engine) countQuery(served uint8, scored int) {
	ts := e.tiers
	ts.stats.Queries++
	ts.stats.Served[served]++
	ts.stats.Scored += uint64(scored)
	ts.counted = true
}

// Access counts records as recalled, as Recall does for the results it
// returns: n += 1, t_last = now, P recomputed, an archive record ranked
// against the active tiers. It is for callers that recall with
// Query.NoAccess and show only part of the results. Unknown ids are
// skipped. It does nothing in flat mode. It also reports the error of
// the last recall's access (made after its reply), if no recall has.
func (e *Engine) Access(ids ...uint64) error {
	if err := e.checkOpen(); err != nil || e.tiers == nil {
		return err
	}
	res := make([]Result, 0, len(ids))
	for _, id := range ids {
		if r, err := e.Get(id); err == nil {
			res = append(res, Result{Record: r})
		}
	}
	ts := e.tiers
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return errors.Join(ts.takeAccessErr(), e.access(res, 0, e.opts.Clock()))
}

// searchTiers searches Tier 1, then Tiers 1 and 2, and returns the first
// sufficient result with the tier that served it, or TierArchive when
// neither was sufficient; scored counts the records scored. The
// sufficiency test runs without the tier lock: it may be an LLM call.
func (e *Engine) searchTiers(ctx context.Context, q *Query, qv []float32, c int) ([]Result, uint8, int, error) {
	e.tiers.mu.Lock() // after the last recall's access (recallTiered)
	nowhere := e.answersNowhere(q)
	e.tiers.mu.Unlock()
	if nowhere {
		return nil, TierArchive, 0, nil // no tier can answer q: only the archive
	}
	var w tierSearch
	for tier := uint8(1); tier <= 2; tier++ {
		res, covered, err := e.searchTier(ctx, &w, q, qv, c, tier)
		if err != nil {
			return nil, 0, 0, err
		}
		if covered {
			return res, tier, w.scored, nil
		}
		if res == nil {
			continue // the tier could not be sufficient and was not ranked
		}
		if ok, err := e.opts.Sufficiency.Sufficient(ctx, q, tier, res); err == nil && ok {
			return res, tier, w.scored, nil
		}
	}
	return nil, TierArchive, w.scored, nil
}

// tierSearch accumulates the candidates of the tiers searched so far.
// The vectors of a tier are scanned only when a ranking needs them
// (scanned counts the tiers whose vectors are in vec).
type tierSearch struct {
	text, vec []scored
	scanned   uint8
	scored    int
}

// searchTier adds tier's candidates to w and returns the fused results of
// the tiers searched so far; covered reports that tiers 1 and 2 hold
// every record, so the archive has nothing more to offer. When the tiers
// searched so far cannot be sufficient (hopeless) and do not hold every
// record, they are not ranked: the results are nil.
func (e *Engine) searchTier(ctx context.Context, w *tierSearch, q *Query, qv []float32, c int, tier uint8) ([]Result, bool, error) {
	ts := e.tiers
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if tier == 2 && e.tiersLackTerms(ctx, q) {
		return nil, false, nil // hopeless, and Tier 2's index left unfilled
	}
	out, err := e.tierRuledOut(ctx, q, tier)
	if err != nil {
		return nil, false, err
	}
	if out {
		return nil, false, nil // neither searched nor scanned nor ranked
	}
	t, err := ts.views[tier].searchText(ctx, q, c)
	if err != nil {
		return nil, false, err
	}
	// Tier 2's lexical index also holds Tier 1 (view.also): its ranking
	// replaces Tier 1's.
	w.text = t
	w.scored += len(ts.views[tier].recs)
	covered := tier == 2 && e.tiersHoldAll()
	if !covered && e.hopeless(q, tier, t) {
		return nil, false, nil
	}
	// The ranking needs the vectors of every tier searched so far, in
	// tier order. The cosines are comparable across views: merge.
	for ; w.scanned < tier; w.scanned++ {
		v, err := ts.views[w.scanned+1].searchVector(q, qv, c)
		if err != nil {
			return nil, false, err
		}
		w.vec = mergeTop(w.vec, v, c)
	}
	src := &viewSource{e: e, q: q, index: ts.views[tier].text, views: ts.views[1:], text: w.text, vec: w.vec}
	cands, err := e.pipe.Run(ctx, e.pipeQuery(q, qv), src)
	if err != nil {
		return nil, false, err
	}
	return e.viewResults(cands, q.K), covered, nil
}

// answersNowhere reports that no ranking of Tiers 1 and 2 can answer q
// (the Sufficiency needs more than any coverage there) and that they do
// not hold every record: the walk then neither searches nor ranks them.
func (e *Engine) answersNowhere(q *Query) bool {
	b, ok := e.opts.Sufficiency.(CoverageBound)
	return ok && b.NeedsCoverage(q, 1) > 1 && b.NeedsCoverage(q, 2) > 1 && !e.tiersHoldAll()
}

// tiersLackTerms reports, before Tier 2's lexical index is filled, that
// searching Tiers 1 and 2 cannot be sufficient: q needs a hit holding
// every one of its terms (a coverage of 1: ScoreTest's default) and the
// archive's index, which holds every record analysed as Tier 2's index
// analyses it, has no record of Tiers 1 and 2 holding them all. hopeless
// would then say so after the fill; the fill (the analysis of every
// record of both tiers, most of a cold tiered recall) is saved. The
// archive's index must be up to date with the change log, so that it
// holds every record placed in the tiers. Any doubt (a filled index, a
// decomposed question, the tiers holding every record, an error) says
// no: the walk then searches as before. ts.mu is held.
//
// "Every term" assumes each term of q weighs more than coverageSlack of
// the question; a term's weight is its IDF over the tiers, which is above
// that unless the tiers hold millions of records and the term is in
// nearly all of them.
func (e *Engine) tiersLackTerms(ctx context.Context, q *Query) bool {
	lazy := e.tiers.lazy()
	if lazy.isFilled() || e.tiersHoldAll() || e.pipe.Parts(q.Text) != nil {
		return false
	}
	b, ok := e.opts.Sufficiency.(CoverageBound)
	if !ok || b.NeedsCoverage(q, 2) < 1-coverageSlack {
		return false
	}
	archive, ok := e.text.(TermHolder)
	tier, tok := lazy.ix.(TermHolder)
	if !ok || !tok || archive.Analysis() != tier.Analysis() {
		return false
	}
	wm, err := e.text.Watermark()
	if err != nil {
		return false
	}
	var last uint64
	if err := e.db.View(func(tx *bolt.Tx) error { last = tx.Bucket(bucketChanges).Sequence(); return nil }); err != nil || wm < last {
		return false // records placed in the tiers may not be in the archive's index yet
	}
	held, err := archive.HoldsAll(ctx, q.Text, func(id uint64) bool { return activeTier(e.tiers.mgr.Tier(id)) })
	return err == nil && !held
}

// tierRuledOut reports, before tier is searched (Tier 1's lexical index,
// or Tier 2's, which holds both tiers), that no ranking of it can be
// sufficient, from the records of that index holding every term of q in
// their text:
//   - none does, and q needs a hit holding every one of its terms (a
//     coverage of 1, ScoreTest's default): a hit's coverage is the
//     IDF-weighted share of the question's terms its text holds, so a
//     document lacking a term is below 1 (the caveat of tiersLackTerms
//     applies); hopeless would say so after the search;
//   - more do than the Sufficiency's MatchBound allows (a record and the
//     one after it counting once): q is ambiguous in the tier.
//
// The search of the tier's index, its vector scan and its ranking are
// saved. Tier 2's index is filled first if it was not (the search would
// fill it next). An index that cannot tell (no TermHolder), a decomposed
// question, the tiers holding every record or an error of the test say
// no. The error is that of a queued change to the index failing when
// applied (settle reports it once), or of the fill: the recall reports
// it. ts.mu is held.
func (e *Engine) tierRuledOut(ctx context.Context, q *Query, tier uint8) (bool, error) {
	if e.tiersHoldAll() || e.pipe.Parts(q.Text) != nil {
		return false, nil
	}
	b, ok := e.opts.Sufficiency.(CoverageBound)
	whole := ok && b.NeedsCoverage(q, tier) >= 1-coverageSlack
	most := -1
	if mb, ok := e.opts.Sufficiency.(MatchBound); ok {
		most = mb.MaxFullMatches(q, tier)
	}
	if !whole && most < 0 {
		return false, nil
	}
	ix, err := e.tiers.queuedIndex(int(tier)).settle()
	if err != nil {
		return false, err
	}
	if lazy, ok := ix.(*lazyText); ok {
		if !lazy.isFilled() && most < 0 {
			return false, nil // tiersLackTerms asked the archive
		}
		if err := lazy.fill(); err != nil {
			return false, err
		}
		ix = lazy.ix
	}
	h, ok := ix.(TermHolder)
	if !ok {
		return false, nil
	}
	if most < 0 {
		held, err := h.HoldsAll(ctx, q.Text, func(uint64) bool { return true })
		return err == nil && !held, nil
	}
	// The records passing q's filters, as the tier's search would see
	// them. One not in the views (none should be) is left out: the count
	// can only be lower.
	ts := e.tiers
	var full []*Record
	held, err := h.HoldsAll(ctx, q.Text, func(id uint64) bool {
		if r, ok := ts.viewRecord(ts.mgr.Tier(id), id); ok && q.match(r) {
			full = append(full, r)
		}
		return false // every one
	})
	if err != nil {
		return false, nil
	}
	if whole && !held && len(full) == 0 {
		return true, nil
	}
	return chainHeads(full) > most, nil
}

// tiersHoldAll reports that Tiers 1 and 2 hold every record.
func (e *Engine) tiersHoldAll() bool {
	return e.tiers.mgr.Len(1)+e.tiers.mgr.Len(2) >= int(e.records.Load())
}

// hopeless reports that tier's results cannot be sufficient, from its
// lexical hits alone: the Sufficiency needs a best result of some
// coverage (CoverageBound) and no hit reaches it. A result's coverage is
// its hit's for the whole question; the parts of a decomposed question
// bring hits of their own coverage, so such a question is ranked.
func (e *Engine) hopeless(q *Query, tier uint8, text []scored) bool {
	b, ok := e.opts.Sufficiency.(CoverageBound)
	if !ok {
		return false
	}
	need := b.NeedsCoverage(q, tier)
	if e.pipe.Parts(q.Text) != nil {
		return false
	}
	for _, h := range text {
		if h.cov >= need {
			return false
		}
	}
	return true
}

// topOf keeps the best c of a merged candidate list.
func topOf(list []scored, c int) []scored {
	t := newTopK(c)
	for _, s := range list {
		t.push(s)
	}
	return t.sorted()
}

// mergeTop is topOf(append(a, b...), c) for the views' scans, which
// come sorted best first, without topOf's heap and sort where the merge
// of the two lists tells their result: when both are sorted, none holds
// a NaN, and the merge's c best have distinct scores, each below the one
// before and above every score after the c-th, topOf keeps those c and
// orders them the same way (it orders by score alone). Otherwise (equal
// scores, whose order topOf's heap and unstable sort decide) it is topOf.
func mergeTop(a, b []scored, c int) []scored {
	if c <= 0 || !sortedDesc(a) || !sortedDesc(b) {
		return topOf(append(a, b...), c)
	}
	n := min(len(a)+len(b), c)
	if n == 0 {
		return topOf(nil, c)
	}
	out := make([]scored, 0, n)
	i, j := 0, 0
	for len(out) < n {
		switch {
		case j == len(b) || (i < len(a) && a[i].score > b[j].score):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].score > a[i].score:
			out = append(out, b[j])
			j++
		default: // equal heads
			return topOf(append(a, b...), c)
		}
		if k := len(out); k > 1 && !(out[k-2].score > out[k-1].score) {
			return topOf(append(a, b...), c)
		}
	}
	// A score after the c-th equal to it: which of them topOf keeps is
	// its heap's choice.
	if last := out[n-1].score; (i < len(a) && !(a[i].score < last)) || (j < len(b) && !(b[j].score < last)) {
		return topOf(append(a, b...), c)
	}
	return out
}

// sortedDesc reports that list is sorted best first and holds no NaN.
func sortedDesc(list []scored) bool {
	for k, s := range list {
		if s.score != s.score || (k > 0 && list[k-1].score < s.score) {
			return false
		}
	}
	return true
}

// viewSource serves the pipeline the candidates the tier views produced
// (tierSearch) and the views' records. ts.mu is held while it is used.
type viewSource struct {
	e         *Engine
	q         *Query
	index     TextIndex // the lexical index of the tiers searched so far
	views     []*view
	text, vec []scored
}

// Text returns the tiers' lexical candidates, or searches the tiers'
// index again for a question the pipeline expanded.
func (s *viewSource) Text(ctx context.Context, rq *retrieve.Query, c int) ([]retrieve.Hit, error) {
	if rq.Text == s.q.Text {
		return toHits(s.text), nil
	}
	q := s.q
	hits, err := s.index.Search(ctx, rq.Text, c, TextFilter{Scope: q.Scope, Session: q.Session, From: q.From, To: q.To, Floor: rq.TextFloor})
	if err != nil {
		return nil, err
	}
	out := make([]retrieve.Hit, len(hits))
	for i, h := range hits {
		out[i] = retrieve.Hit{ID: h.ID, Score: h.Score, Coverage: h.Coverage}
	}
	return out, nil
}

func (s *viewSource) Vector(context.Context, *retrieve.Query, int) ([]retrieve.Hit, error) {
	return toHits(s.vec), nil
}

// Docs returns the views' records' documents (DocRefs), copied.
func (s *viewSource) Docs(ids []uint64) ([]retrieve.Doc, error) {
	refs := s.DocRefs(ids)
	out := make([]retrieve.Doc, len(ids))
	for i, d := range refs {
		if d != nil {
			out[i] = *d
		}
	}
	return out, nil
}

// DocRefs returns the documents the views keep of their records
// (view.docs), nil for an id they do not hold: a record's is taken from
// the doc cache, or analysed from the view's record, the first time it
// is asked, then kept by the view that holds it.
func (s *viewSource) DocRefs(ids []uint64) []*retrieve.Doc {
	out := make([]*retrieve.Doc, len(ids))
	gen := s.e.docCache.generation()
next:
	for i, id := range ids {
		for _, v := range s.views {
			if d, ok := v.docs[id]; ok {
				out[i] = d
				continue next
			}
		}
		for _, v := range s.views {
			r, ok := v.recs[id]
			if !ok {
				continue
			}
			d, ok := s.e.docCache.get(id)
			if !ok {
				d = s.e.cacheDoc(r, gen)
			}
			out[i] = &d
			v.docs[id] = out[i]
			break
		}
	}
	return out
}

// Segments reads the archive's segment tree: the views hold no tree of
// their own, and a segment's records outside the views are skipped when
// the results are read from the views.
func (s *viewSource) Segments(leaves []uint64, levels int) (*retrieve.Forest, error) {
	return s.e.segments(leaves, levels)
}

func (s *viewSource) WordVectors(words []string) ([][]float32, error) {
	return s.e.wordVectors(words)
}

// viewResults turns ranked candidates into results from the views; each
// result names the tier that holds it.
func (e *Engine) viewResults(cands []retrieve.Candidate, k int) []Result {
	out := make([]Result, 0, min(k, len(cands)))
	for _, f := range cands {
		if len(out) == k {
			break
		}
		for t := 1; t <= 2; t++ {
			if r, ok := e.tiers.views[t].recs[f.ID]; ok {
				out = append(out, Result{Record: *r, Score: f.Score, TextScore: f.Text, VectorScore: f.Vector, Coverage: f.Coverage,
					Relevance: f.Relevance, VectorZ: f.VectorZ, SoftMatch: f.SoftMatch, Tier: uint8(t)})
				break
			}
		}
	}
	return out
}

// access counts every returned record as recalled: n += 1, t_last = now,
// P recomputed, and a tier-3 record ranked against the active tiers.
// readTx is the bbolt transaction the results' records were read in
// (Tx.ID), 0 if unknown: when no commit came since, a record promoted
// into a view is taken from its result rather than read again; now is
// the time of the access. ts.mu is held.
func (e *Engine) access(res []Result, readTx int, now time.Time) error {
	ts := e.tiers
	// The changes to the views' lexical indexes wait for their next
	// reader (queuedText), which applies those of every access since in
	// one run.
	for _, v := range ts.views[1:] {
		v.queue = true
	}
	defer func() {
		for _, v := range ts.views[1:] {
			v.queue = false
		}
	}()
	err := e.db.View(func(tx *bolt.Tx) error {
		same := readTx != 0 && tx.ID() == readTx
		rd := e.readers(tx)
		for i := range res {
			if err := e.accessOne(rd, &res[i], now, same); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(ts.dirty)+len(ts.accessed) >= e.opts.FlushAccesses {
		return e.flushDueSoon()
	}
	return nil
}

// accessOne counts one result. same reports that tx sees the commits the
// result's record was read after, and no other: the record is as stored.
func (e *Engine) accessOne(rd *txReaders, res *Result, now time.Time, same bool) error {
	ts, tx := e.tiers, rd.tx
	id := res.Record.ID
	en, ok := ts.mgr.Entry(id)
	var known *knownDoc
	if !ok {
		r := &res.Record
		vs := rd.vectors()
		if !vs.has(id) {
			// A history version, or forgotten since the caller saw it:
			// it has no vector and nothing to count.
			return nil
		}
		vec, err := vs.get(id)
		if err != nil {
			return fmt.Errorf("record %d: %w", id, err)
		}
		h := r.Header
		if !same {
			// A flush may have written the header back since the result
			// was read, and dropped it from ts.accessed: as stored now.
			if b := peekValue(rd.records(), u64key(id)); b != nil {
				if sh, err := recordHeader(b); err == nil {
					h = sh
				}
			}
		}
		if a, ok := ts.accessed[id]; ok {
			h = a
		}
		seq := keyU64(tx.Bucket(bucketSessSeq).Get(sessionKey(r.Scope, r.Session)))
		en = tiers.Entry{ID: id, Session: r.Session, SessionSeq: seq, I0: h.I0, N: h.N, LastUsed: h.LastUsed, Sp: ts.pers.Alignment(vec)}
		// A promotion loads the record into a view: with the vector
		// read here, and the record as the result holds it (read
		// before the header below is set) when nothing was written since.
		known = &knownDoc{id: id, vec: vec}
		if same {
			rec := *r
			known.rec = &rec
		}
	}
	upd, moves, err := ts.mgr.Access(en, now)
	if err != nil {
		return fmt.Errorf("hmo: tiers: %w", err)
	}
	h := Header{I0: upd.I0, N: upd.N, LastUsed: upd.LastUsed, P: upd.P, Tier: upd.Tier}
	if upd.Tier == TierArchive {
		ts.accessed[id] = h
	}
	ts.dirty[id] = true
	res.Record.Header = h
	if err := e.applyKnown(rd, moves, known); err != nil {
		return err
	}
	for t := 1; t <= 2; t++ {
		if r, ok := ts.views[t].recs[id]; ok {
			r.Header = h
		}
	}
	return nil
}

// embedQuery embeds the topic words of a query (retrieve.TopicWords),
// or the whole query when it has none: records are statements, and a
// question's "what ... should I" drew its vector away from the statement
// that answers it ("what food should I avoid" and "I'm allergic to
// shellfish and peanuts": z 2.17 whole, 2.62 without; LoCoMo dev R@10
// unchanged, BENCHMARKS.md issue 12).
func (e *Engine) embedQuery(ctx context.Context, q *Query) ([]float32, error) {
	text := q.Text
	if t := strings.Join(q.topicWords(), " "); t != "" {
		text = t
	}
	vecs, err := e.opts.Embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("hmo: embed query: %w", err)
	}
	if len(vecs) != 1 || len(vecs[0]) != e.dims {
		return nil, fmt.Errorf("%w: query vector", ErrDims)
	}
	return vecs[0], nil
}
