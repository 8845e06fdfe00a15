package fts

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/keysort"
)

var _ engine.TextIndex = (*Memory)(nil)

// Memory is a small BM25F index held in RAM, analysed and scored exactly
// like Index (the same Scoring and statistics).
// It suits the bounded views over the archive (HMO's Tier 1 and Tier 2):
// no disk, no fsync, cheap updates. Its cost grows with its contents, so
// keep it bounded. Safe for concurrent use.
type Memory struct {
	analysis Analyzer // the option analyzer was built from
	analyzer analysis.Analyzer
	scoring  Scoring
	cache    *Analysed    // shared with other indexes; nil for none
	counter  *termCounter // analyzer's analysis of ASCII texts, nil when it has none (textTerms)

	mu        sync.RWMutex // guards the fields below
	postings  map[string]*memTerm
	docs      map[uint64]*memDoc
	slots     []*memDoc   // dense places of the documents, nil where free
	free      []int       // free places in slots
	lists     []*memPosts // every posting list by its place (memRef.list), nil where free
	freeLists []uint32    // free places in lists
	totalLen  [nFields]int
	watermark uint64
	terms     uint64 // memTerms made so far: the next one's number
	gen       uint64 // Applies so far: a searchMemo holds for one

	lastQuery  atomic.Pointer[queryMemo]  // the last question analysed (queryTerms)
	lastSearch atomic.Pointer[searchMemo] // the last search that scored every match (extend)
}

type memDoc struct {
	slot int            // the document's place in Memory.slots
	meta engine.TextDoc // text fields cleared
	// refs locate the document's posting of each of its distinct terms,
	// ordered by the term's number: removing the document, or looking up
	// its posting of a term (memTerm.post), needs no map.
	refs []memRef
	n    [nFields]int // field lengths in tokens
}

// memRef is where a document's posting of one term is:
// Memory.lists[list].posts[i], for the term numbered num (kept here, so
// that finding a ref reads no other object). It holds no pointer: the
// tiers' indexes hold a ref per distinct term of each document, and the
// collector would visit every pointer at each cycle.
type memRef struct {
	num  uint64
	list uint32
	i    uint32
}

// ref returns the index in d.refs of d's posting of t, or -1.
func (d *memDoc) ref(t *memTerm) int {
	lo, hi := 0, len(d.refs)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if d.refs[h].num < t.num {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo < len(d.refs) && d.refs[lo].num == t.num { // numbers are unique within an index
		return lo
	}
	return -1
}

// memTerm is a term's postings, in no order, grouped by the documents'
// scope (a search is most often for one scope), and its document
// frequency in each field over all scopes.
type memTerm struct {
	word   string
	num    uint64 // the term's number in its index, which orders memDoc.refs
	scopes map[string]*memPosts
	n      int // postings in all scopes
	df     [nFields]int
}

// memPosts are a term's postings in one scope.
type memPosts struct {
	t     *memTerm
	at    uint32 // its place in Memory.lists
	posts []memPost
}

// lists appends to buf the postings a search restricted to scope reads
// ("": all).
func (t *memTerm) lists(scope string, buf []*memPosts) []*memPosts {
	if scope == "" {
		for _, ps := range t.scopes {
			buf = append(buf, ps)
		}
		return buf
	}
	if ps := t.scopes[scope]; ps != nil {
		return append(buf, ps)
	}
	return buf
}

// post returns d's posting of the term, nil when d lacks it.
func (m *Memory) post(t *memTerm, d *memDoc) *memPost {
	r := d.ref(t)
	if r < 0 {
		return nil
	}
	ref := &d.refs[r]
	return &m.lists[ref.list].posts[ref.i]
}

// memPost is one document's posting of a term. It names the document
// by its place in Memory.slots and holds no pointer: a tier index holds a
// posting per distinct term of each document, and the collector skips
// their arrays (TestMemLayout).
type memPost struct {
	slot uint32
	tf   [nFields]int32
}

// add appends d's posting of t; the caller records where (the memRef
// it returns) in d.refs.
func (m *Memory) add(t *memTerm, d *memDoc, tf *[nFields]int32) memRef {
	ps := t.scopes[d.meta.Scope]
	if ps == nil {
		ps = &memPosts{t: t}
		if n := len(m.freeLists); n > 0 {
			ps.at, m.freeLists = m.freeLists[n-1], m.freeLists[:n-1]
			m.lists[ps.at] = ps
		} else {
			ps.at = uint32(len(m.lists))
			m.lists = append(m.lists, ps)
		}
		t.scopes[d.meta.Scope] = ps
	}
	ps.posts = append(ps.posts, memPost{slot: uint32(d.slot), tf: *tf})
	t.n++
	for f := range nFields {
		if tf[f] > 0 {
			t.df[f]++
		}
	}
	return memRef{num: t.num, list: ps.at, i: uint32(len(ps.posts) - 1)}
}

// removePost drops d's posting of t at ref (the last one of the list
// takes its place); it reports whether t has none left.
func (m *Memory) removePost(t *memTerm, d *memDoc, ref *memRef) bool {
	ps, i := m.lists[ref.list], int(ref.i)
	for f := range nFields {
		if ps.posts[i].tf[f] > 0 {
			t.df[f]--
		}
	}
	last := len(ps.posts) - 1
	if i != last {
		ps.posts[i] = ps.posts[last]
		moved := m.slots[ps.posts[i].slot]
		moved.refs[moved.ref(t)].i = uint32(i)
	}
	ps.posts[last] = memPost{}
	ps.posts = ps.posts[:last]
	if len(ps.posts) == 0 {
		delete(t.scopes, d.meta.Scope)
		m.lists[ps.at] = nil
		m.freeLists = append(m.freeLists, ps.at)
	}
	t.n--
	return t.n == 0
}

// NewMemory returns an empty in-memory index with the given analyzer
// (zero value: DefaultAnalyzer) and the default Scoring.
func NewMemory(a Analyzer) (*Memory, error) {
	return NewMemoryWith(&Options{Analyzer: a})
}

// NewMemoryWith returns an empty in-memory index with o's analyzer,
// scoring and shared analysis (Analysed); the other options do not apply.
// Nil o means defaults. The indexes sharing an Analysed must have the same
// analyzer.
func NewMemoryWith(o *Options) (*Memory, error) {
	c, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	an, err := newAnalyzers(c.Analyzer)
	if err != nil {
		return nil, err
	}
	if err := c.Analysed.bind(c.Analyzer); err != nil {
		return nil, err
	}
	// A view's index analyses the same words over and over: its stems
	// are cached (the persistent index's analysis is bleve's own).
	text := cacheStems(an.text)
	return &Memory{analysis: c.Analyzer, analyzer: text, counter: newTermCounter(text), scoring: c.Scoring, cache: c.Analysed, postings: map[string]*memTerm{}, docs: map[uint64]*memDoc{}}, nil
}

// Apply indexes docs (replacing those already present), removes deletes
// and records watermark.
func (m *Memory) Apply(docs []engine.TextDoc, deletes []uint64, watermark uint64) error {
	analysed := m.analyseAll(docs)
	m.mu.Lock()
	defer m.mu.Unlock()
	// Slots and list places are 32-bit (memPost.slot, memRef): a new
	// posting can open a list.
	newPosts := 0
	for _, an := range analysed {
		newPosts += len(an.tf)
	}
	if len(m.slots)+len(docs) > math.MaxUint32 || len(m.lists)+newPosts > math.MaxUint32 {
		return fmt.Errorf("fts: memory index: more than %d documents or posting lists", uint32(math.MaxUint32))
	}
	m.gen++
	for _, id := range deletes {
		m.remove(id)
	}
	for i, d := range docs {
		m.remove(d.ID)
		d.Text, d.Context, d.Role = "", "", ""
		an := analysed[i]
		md := &memDoc{meta: d, refs: make([]memRef, 0, len(an.tf)), n: an.lens}
		if n := len(m.free); n > 0 {
			md.slot, m.free = m.free[n-1], m.free[:n-1]
			m.slots[md.slot] = md
		} else {
			md.slot = len(m.slots)
			m.slots = append(m.slots, md)
		}
		for k := range an.tf {
			t := an.term(k)
			p := m.postings[t]
			if p == nil {
				// Its own copy: a substring would keep the analysis's
				// whole string of terms.
				t = strings.Clone(t)
				p = &memTerm{word: t, num: m.terms, scopes: map[string]*memPosts{}}
				m.terms++
				m.postings[t] = p
			}
			md.refs = append(md.refs, m.add(p, md, &an.tf[k]))
		}
		slices.SortFunc(md.refs, func(a, b memRef) int { return cmp.Compare(a.num, b.num) })
		m.docs[d.ID] = md
		for f := range nFields {
			m.totalLen[f] += analysed[i].lens[f]
		}
	}
	m.watermark = watermark
	return nil
}

// analyseAll returns the analysis of each of docs: from the shared
// cache where it holds it, the others analysed together, each distinct
// text once (a record's context is, by default, the text before it).
func (m *Memory) analyseAll(docs []engine.TextDoc) []*docAnalysis {
	out := make([]*docAnalysis, len(docs))
	sums := make([]uint64, len(docs))
	var miss []engine.TextDoc
	var at []int // index in docs of each of miss
	for i := range docs {
		if m.cache != nil {
			sums[i] = m.cache.hash(&docs[i])
			if an := m.cache.get(&docs[i], sums[i]); an != nil {
				out[i] = an
				continue
			}
		}
		miss, at = append(miss, docs[i]), append(at, i)
	}
	if len(miss) == 0 {
		return out
	}
	texts, idx := distinctTexts(miss)
	streams := m.textTerms(texts)
	place := map[string]int{} // term -> its index in an.tf, per document
	var terms []byte
	for j, i := range at {
		an := &docAnalysis{sum: sums[i]}
		fields := docFields(&miss[j])
		words := 0 // a bound on the distinct terms: the arrays grow once
		for _, text := range fields {
			if text != "" {
				words += len(streams[idx[text]])
			}
		}
		an.tf, an.ends = make([][nFields]int32, 0, words), make([]uint32, 0, words)
		clear(place)
		terms = terms[:0]
		for f, text := range fields {
			if text == "" {
				continue
			}
			ts := streams[idx[text]]
			for _, t := range ts {
				k, ok := place[t]
				if !ok {
					k = len(an.tf)
					place[t] = k
					terms = append(terms, t...)
					an.ends = append(an.ends, uint32(len(terms)))
					an.tf = append(an.tf, [nFields]int32{})
				}
				an.tf[k][f]++
			}
			an.lens[f] = len(ts)
		}
		an.terms = string(terms)
		if m.cache != nil {
			m.cache.put(docs[i].ID, an)
		}
		out[i] = an
	}
	return out
}

// probeFactor: once no new document can enter, a word's postings are read
// through unless they are this many times longer than the documents
// scored, which are then looked up one by one (a map probe costs several
// times a posting read).
const probeFactor = 8

// kth is the k-th best score of acc (k <= len(acc)); buf is scratch
// space, returned for the next call.
func kth(acc []scoredDoc, k int, buf []float64) (float64, []float64) {
	h := buf[:0]
	for _, c := range acc {
		switch {
		case len(h) < k:
			h = append(h, c.score)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if h[p] <= h[i] {
					break
				}
				h[p], h[i] = h[i], h[p]
				i = p
			}
		case c.score > h[0]:
			h[0] = c.score
			siftDown(len(h), func(i, j int) bool { return h[i] < h[j] }, func(i, j int) { h[i], h[j] = h[j], h[i] })
		}
	}
	return h[0], h
}

// best appends to top the places in acc of its k best (k < len(acc)),
// in no order: a heap whose root is the worst kept (worse).
func best(acc []scoredDoc, k int, top []int32) []int32 {
	less := func(i, j int) bool { return worse(acc[top[i]], acc[top[j]]) }
	swap := func(i, j int) { top[i], top[j] = top[j], top[i] }
	for c := range acc {
		switch {
		case len(top) < k:
			top = append(top, int32(c))
			for i := len(top) - 1; i > 0; {
				p := (i - 1) / 2
				if !less(i, p) {
					break
				}
				swap(i, p)
				i = p
			}
		case worse(acc[top[0]], acc[c]):
			top[0] = int32(c)
			siftDown(len(top), less, swap)
		}
	}
	return top
}

// siftDown restores a heap of n elements whose root changed.
func siftDown(n int, less func(i, j int) bool, swap func(i, j int)) {
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && less(r, l) {
			m = r
		}
		if !less(m, i) {
			return
		}
		swap(i, m)
		i = m
	}
}

// queryTerms are q's distinct terms, in order; the caller must not
// change them. A tier's question is analysed by the same index more than
// once (whether it holds all the terms, then the search): the last
// question's terms are kept (lastQuery), since the analysis of a text
// depends on the analyzer alone.
//
// A question that is the last one, a space and more words (the prf
// stage's feedback search) has the last one's terms, then those of the
// words after that it lacks: only the words after are analysed. That
// holds for an ASCII text and an analyzer the termCounter reproduces
// (its tokenizer never joins two words across a space, and its token
// filters see one token at a time); others are analysed whole.
func (m *Memory) queryTerms(q string) []string {
	lq := m.lastQuery.Load()
	if lq != nil && lq.q == q {
		return lq.terms
	}
	var terms []string
	if n := len(lq.prefix()); n > 0 && len(q) > n && q[n] == ' ' && q[:n] == lq.q && m.counter != nil && isASCIIText(q) {
		terms = slices.Clip(lq.terms)
		for _, t := range m.analyseQuery(q[n+1:]) {
			if !slices.Contains(lq.terms, t) {
				terms = append(terms, t)
			}
		}
	} else {
		terms = m.analyseQuery(q)
	}
	m.lastQuery.Store(&queryMemo{q: q, terms: terms})
	return terms
}

// queryMemo is a question and its terms (Memory.queryTerms).
type queryMemo struct {
	q     string
	terms []string
}

// prefix is the memo's question, "" for none.
func (lq *queryMemo) prefix() string {
	if lq == nil {
		return ""
	}
	return lq.q
}

// analyseQuery returns q's distinct terms, in order: its terms as
// textTerms finds them (the cached stems of an ASCII text's words, else
// the analyzer's), the first of each kept. A question's few terms are
// checked against those kept so far; a map takes over past
// queryTermsScan of them.
func (m *Memory) analyseQuery(q string) []string {
	all := m.textTerms([]string{q})[0]
	var terms []string
	var seen map[string]bool
	for _, t := range all {
		if seen == nil && len(terms) < queryTermsScan {
			if !slices.Contains(terms, t) {
				terms = append(terms, t)
			}
			continue
		}
		if seen == nil {
			seen = make(map[string]bool, 2*len(terms))
			for _, w := range terms {
				seen[w] = true
			}
		}
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	return terms
}

// queryTermsScan is how many distinct terms queryTerms checks a term
// against by scanning them.
const queryTermsScan = 32

// remove drops a document; the caller holds mu.
func (m *Memory) remove(id uint64) {
	d, ok := m.docs[id]
	if !ok {
		return
	}
	for i := range d.refs {
		if t := m.lists[d.refs[i].list].t; m.removePost(t, d, &d.refs[i]) {
			delete(m.postings, t.word)
		}
	}
	for f := range nFields {
		m.totalLen[f] -= d.n[f]
	}
	m.slots[d.slot] = nil
	m.free = append(m.free, d.slot)
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
	hits, err := m.search(q, k, f)
	if err == nil && f.Floor > 0 && (len(hits) < k || hits[k-1].Score < f.Floor) {
		// Fewer than k documents reach the floor (the index changed
		// since it was taken): search again without it.
		f.Floor = 0
		hits, err = m.search(q, k, f)
	}
	return hits, err
}

// memSearchBufs is Memory.search's scratch, kept between searches in
// memSearchPool. Every slice is handed back with length 0.
type memSearchBufs struct {
	acc     []scoredDoc
	accSlot []int
	has     []uint64
	txt     []uint64
	part    []float64
	at      []int32
	kbuf    []float64
	top     []int32
	lists   []*memPosts
}

var memSearchPool = sync.Pool{New: func() any { return new(memSearchBufs) }}

// search is Search; a positive f.Floor closes the search to new
// documents as soon as the words left cannot lift one to it.
func (m *Memory) search(q string, k int, f engine.TextFilter) ([]engine.TextHit, error) {
	terms := m.queryTerms(q)
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(m.docs) == 0 {
		return nil, nil
	}
	st := fieldStats{n: float64(len(m.docs))}
	for fi := range nFields {
		st.total[fi] = float64(m.totalLen[fi])
	}
	floor := f.Floor
	f.Floor = 0 // a hint, not a filter
	if sm := m.lastSearch.Load(); sm != nil && sm.extendedBy(m.gen, terms, f) {
		if hits, ok := m.extend(sm, terms[len(sm.terms):], k, f, &st); ok {
			return hits, nil
		}
	}
	match := f != engine.TextFilter{}
	// Term at a time, rarest first (Turtle and Flood's "continue"
	// strategy): once the bounds of the words left, idf·(k1+1) each, sum
	// below the k-th best score so far, no document they alone match can
	// reach the top k; the words left then only add to the documents
	// already scored, looked up by id when their postings are much longer
	// (probeFactor). A floor (engine.TextFilter.Floor) closes it sooner.
	type word struct {
		p *memTerm
		w float64
		q int // its place among the question's indexed words
	}
	var words []word
	var idfSum, rest float64
	for _, t := range terms {
		p := m.postings[t]
		w := idf(st.n, 0)
		if p != nil {
			w = idf(st.n, float64(max(p.df[fText], p.df[fContext], p.df[fRole])))
			words = append(words, word{p, w, len(words)})
			rest += w * (m.scoring.K1 + 1)
		}
		idfSum += w
	}
	inOrder := slices.Clone(words) // the question's order, for the final sums
	slices.SortStableFunc(words, func(a, b word) int { return cmp.Compare(b.w, a.w) })
	// The scratch slices come from a pool: a tier's index matches most of
	// its documents on a common word, and growing them anew on every
	// search was most of the tier walk's garbage.
	sb := memSearchPool.Get().(*memSearchBufs)
	defer memSearchPool.Put(sb)
	acc := sb.acc[:0]         // the documents scored, with their scores so far
	accSlot := sb.accSlot[:0] // their slots
	// has: per document scored, the words (by q) it holds, when there are
	// at most 64 of them; the final sums look up only those.
	has := sb.has[:0]
	// With at most 64 words, each document scored also keeps each word's
	// score (part[j*nw+q]) and, in txt, whether the word is in its text
	// field: the final sums read them instead of looking the postings up
	// again. The values are sc.score's, so the sums are the same to the bit.
	nw := len(words)
	keep := nw <= 64
	txt, part := sb.txt[:0], sb.part[:0]
	mark := func(j, q int, s float64, post *memPost) {
		if q < 64 {
			has[j] |= 1 << q
		}
		if keep {
			part[j*nw+q] = s
			if post.tf[fText] > 0 {
				txt[j] |= 1 << q
			}
		}
	}
	kbuf := sb.kbuf[:0]
	// at: document slot -> 1 + index in acc; 0: not seen; -1: filtered out.
	at := slices.Grow(sb.at[:0], len(m.slots))[:len(m.slots)]
	clear(at)
	sc := newMemScorer(&m.scoring, &st)
	closed, high := false, 0.0 // closed: no new document can make the top k; high: the best score so far
	for _, wd := range words {
		if !closed && floor > 0 && rest < floor {
			closed = true // at least k documents reach the floor
		}
		if !closed && len(acc) >= k && rest < high {
			var kt float64
			kt, kbuf = kth(acc, k, kbuf)
			closed = rest < kt
		}
		rest -= wd.w * (m.scoring.K1 + 1)
		lists := wd.p.lists(f.Scope, sb.lists[:0])
		sb.lists = lists[:0]
		if closed {
			n := 0
			for _, ps := range lists {
				n += len(ps.posts)
			}
			if n > probeFactor*len(acc) {
				for i := range acc {
					d := m.slots[accSlot[i]]
					if post := m.post(wd.p, d); post != nil {
						s := sc.score(wd.w, post, d)
						acc[i].score += s
						high = max(high, acc[i].score)
						mark(i, wd.q, s, post)
					}
				}
				continue
			}
		}
		for _, ps := range lists {
			for i := range ps.posts {
				post := &ps.posts[i]
				slot := int(post.slot) // postings skipped load no document
				if at[slot] < 0 {
					continue
				}
				j := int(at[slot]) - 1
				ok := j >= 0
				if !ok && closed {
					continue
				}
				d := m.slots[slot]
				if !ok && match && !memMatch(&d.meta, f) {
					at[slot] = -1
					continue
				}
				s := sc.score(wd.w, post, d)
				if s == 0 {
					continue
				}
				if !ok {
					j = len(acc)
					at[slot] = int32(j + 1)
					acc = append(acc, scoredDoc{doc: d.meta.ID})
					accSlot = append(accSlot, slot)
					has = append(has, 0)
					if keep {
						txt = append(txt, 0)
						part = slices.Grow(part, nw)[:len(part)+nw] // no need to clear: has says what is set
					}
				}
				acc[j].score += s
				high = max(high, acc[j].score)
				mark(j, wd.q, s, post)
			}
		}
	}
	// The k best (rather than sorting every match), by their place in acc.
	top := sb.top[:0]
	if len(acc) > k {
		top = best(acc, k, top)
	} else {
		for j := range acc {
			top = append(top, int32(j))
		}
	}
	// The scores and coverage of the k best, summed in the question's
	// order as Index sums them.
	hits := make([]engine.TextHit, 0, len(top))
	// A search that scored every document its words match, all of them
	// kept (fewer than k), and summed on the path of at most 64 words
	// leaves them for a search of its question extended (extend).
	var sm *searchMemo
	if !closed && len(acc) < k && keep {
		sm = &searchMemo{gen: m.gen, terms: terms, filter: f, words: nw, idfSum: idfSum, docs: make([]memoDoc, 0, len(acc))}
	}
	for _, j := range top {
		h := engine.TextHit{ID: acc[j].doc}
		held := has[j]
		if keep {
			// The words held, in the question's order: inOrder[q].q is
			// q, so the set bits of held, lowest first, name them.
			row, in := part[int(j)*nw:int(j)*nw+nw], txt[j]
			for b := held; b != 0; b &= b - 1 {
				q := bits.TrailingZeros64(b)
				h.Score += row[q]
				if in&(1<<q) != 0 {
					h.Coverage += inOrder[q].w
				}
			}
		} else {
			d := m.slots[accSlot[j]]
			for _, wd := range inOrder {
				if wd.q < 64 && held&(1<<wd.q) == 0 {
					continue
				}
				post := m.post(wd.p, d)
				if post == nil {
					continue
				}
				h.Score += sc.score(wd.w, post, d)
				if post.tf[fText] > 0 {
					h.Coverage += wd.w
				}
			}
		}
		if sm != nil {
			sm.docs = append(sm.docs, memoDoc{slot: accSlot[j], score: h.Score, cov: h.Coverage})
		}
		if idfSum > 0 {
			h.Coverage /= idfSum
		}
		hits = append(hits, h)
	}
	if sm != nil {
		m.lastSearch.Store(sm)
	}
	// Back to the pool as grown (the deferred Put runs after the last use).
	sb.acc, sb.accSlot, sb.has, sb.at, sb.kbuf = acc[:0], accSlot[:0], has[:0], at[:0], kbuf[:0]
	sb.txt, sb.part, sb.top = txt[:0], part[:0], top[:0]
	clear(sb.lists[:cap(sb.lists)]) // no postings kept alive by the pool
	sortMemHits(hits)
	return hits, nil
}

// searchMemo is what a search that scored every document its words
// match leaves for a search of the same question with more words after
// it (the prf stage's feedback search asks the question followed by
// the words of its best records): each document matched, with its score
// and text coverage summed over the question's words in their order.
// BM25F adds a word's score to a document's: the extended question's
// sums, taken in its order, start with the same additions, so they
// continue from these, to the bit, and only the new words' postings are
// read. It holds while the index is unchanged (gen) and for the same
// filter. Not changed once stored.
type searchMemo struct {
	gen    uint64
	terms  []string          // the question's distinct terms (queryTerms: not changed)
	filter engine.TextFilter // its Floor 0
	words  int               // the terms the index holds
	idfSum float64           // the sum of the terms' IDFs, in their order
	docs   []memoDoc         // every document matched, fewer than the search's k
}

// memoDoc is one document a searchMemo's search matched: its slot, its
// score and the IDFs of the words its text holds (the coverage before
// it is divided by the IDFs' sum), each summed in the question's order.
type memoDoc struct {
	slot       int
	score, cov float64
}

// extendedBy reports that a search for terms with filter f, the index
// at generation gen, is the memo's question extended by more terms.
func (sm *searchMemo) extendedBy(gen uint64, terms []string, f engine.TextFilter) bool {
	return sm.gen == gen && sm.filter == f && len(terms) > len(sm.terms) && slices.Equal(terms[:len(sm.terms)], sm.terms)
}

// extend is search for sm's question extended by the terms more (none of
// which sm's question holds), from sm's sums: the documents sm matched
// start at its sums, every posting of the new terms is scored, in the
// question's order, and added. It reports false, for search to do the
// work, when the extended question would take another path there: a
// document count of k or more (search may then close early, and picks
// its top k on sums in another order) or more than 64 words. mu is held
// (read); f has no Floor. The results are search's: with fewer than k
// documents, search scores every posting of every word, and sums each
// document's scores, and the IDFs of the words in its text, in the
// question's order; a Floor it is given does not change that (it finds
// fewer than k documents reaching it, and Search searches again
// without).
func (m *Memory) extend(sm *searchMemo, more []string, k int, f engine.TextFilter, st *fieldStats) ([]engine.TextHit, bool) {
	if len(sm.docs) >= k {
		return nil, false
	}
	words, idfSum := sm.words, sm.idfSum
	type word struct {
		p *memTerm
		w float64
	}
	var add []word
	for _, t := range more {
		p := m.postings[t]
		w := idf(st.n, 0)
		if p != nil {
			w = idf(st.n, float64(max(p.df[fText], p.df[fContext], p.df[fRole])))
			add = append(add, word{p, w})
			words++
		}
		idfSum += w
	}
	if words > 64 {
		return nil, false
	}
	sb := memSearchPool.Get().(*memSearchBufs)
	defer memSearchPool.Put(sb)
	acc, cov := sb.acc[:0], sb.part[:0] // the documents and their coverage so far
	accSlot := sb.accSlot[:0]
	// at: document slot -> 1 + index in acc; 0: not seen; -1: filtered out.
	at := slices.Grow(sb.at[:0], len(m.slots))[:len(m.slots)]
	clear(at)
	for i, d := range sm.docs {
		at[d.slot] = int32(i + 1)
		acc = append(acc, scoredDoc{doc: m.slots[d.slot].meta.ID, score: d.score})
		cov = append(cov, d.cov)
		accSlot = append(accSlot, d.slot)
	}
	defer func() {
		sb.acc, sb.part, sb.accSlot, sb.at = acc[:0], cov[:0], accSlot[:0], at[:0]
		clear(sb.lists[:cap(sb.lists)])
	}()
	match := f != engine.TextFilter{}
	sc := newMemScorer(&m.scoring, st)
	for _, wd := range add {
		lists := wd.p.lists(f.Scope, sb.lists[:0])
		sb.lists = lists[:0]
		for _, ps := range lists {
			for i := range ps.posts {
				post := &ps.posts[i]
				slot := int(post.slot)
				if at[slot] < 0 {
					continue
				}
				j := int(at[slot]) - 1
				d := m.slots[slot]
				if j < 0 && match && !memMatch(&d.meta, f) {
					at[slot] = -1
					continue
				}
				s := sc.score(wd.w, post, d)
				if s == 0 {
					continue
				}
				if j < 0 {
					if len(acc)+1 >= k {
						return nil, false
					}
					j = len(acc)
					at[slot] = int32(j + 1)
					acc = append(acc, scoredDoc{doc: d.meta.ID})
					cov = append(cov, 0)
					accSlot = append(accSlot, slot)
				}
				acc[j].score += s
				if post.tf[fText] > 0 {
					cov[j] += wd.w
				}
			}
		}
	}
	hits := make([]engine.TextHit, len(acc))
	for j := range acc {
		hits[j] = engine.TextHit{ID: acc[j].doc, Score: acc[j].score, Coverage: cov[j]}
		if idfSum > 0 {
			hits[j].Coverage /= idfSum
		}
	}
	sortMemHits(hits)
	return hits, true
}

// sortMemHits is sortHits (score descending, then id) on keys: the ids
// are distinct, so the keys are, and any sort leaves sortHits' order. A
// NaN score, which has no key, takes sortHits itself.
func sortMemHits(hits []engine.TextHit) {
	if !keysort.SortDescending(hits, func(i int) (float64, uint64) { return hits[i].Score, hits[i].ID }) {
		sortHits(hits)
	}
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

// memScorer is Scoring.termScore for the postings of one Memory search:
// the fields' weights and average lengths are taken once per search, not
// once per posting, and the arithmetic is termScore's, operation for
// operation, so that the scores are the same to the last bit.
type memScorer struct {
	k1, b float64
	w     [nFields]float64
	avg   [nFields]float64
}

func newMemScorer(s *Scoring, st *fieldStats) *memScorer {
	sc := &memScorer{k1: s.K1, b: s.B, w: s.weights()}
	for f := range nFields {
		sc.avg[f] = st.avg(f)
	}
	return sc
}

// score is termScore(idf, st, tf, dl) for post's term frequencies and
// the field lengths of its document, d.
func (sc *memScorer) score(idf float64, post *memPost, d *memDoc) float64 {
	var t float64
	for f := range nFields {
		tf := float64(post.tf[f])
		if tf == 0 {
			continue
		}
		norm := 1.0
		if avg := sc.avg[f]; avg > 0 {
			norm = 1 - sc.b + sc.b*float64(d.n[f])/avg
		}
		t += sc.w[f] * tf / norm
	}
	if t == 0 {
		return 0
	}
	return idf * t * (sc.k1 + 1) / (sc.k1 + t)
}
