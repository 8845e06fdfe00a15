package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/hmo-dev/hmo/internal/vecscan"
	"github.com/hmo-dev/hmo/retrieve"
)

// view is a tier held in RAM: its records, their vectors in one
// contiguous matrix (scanned like the archive's, with SIMD) and a small
// lexical index over their indexed text. Tier 1's records are also
// indexed in Tier 2's lexical index (also), so that the search of tiers
// 1 and 2 together ranks them with one set of term statistics, as the
// archive's index would. The tier state's mu (tierState.mu) guards it.
type view struct {
	recs   map[uint64]*Record
	pos    map[uint64]int // id -> row of mat
	rows   []*Record      // row -> record (recs[rows[row].ID])
	scopes map[string]int // scope -> rows of that scope
	mat    []float32      // rows of dims floats
	dims   int            // set by the first vector added to an empty view
	text   TextIndex
	also   TextIndex // a second index the view's documents go to; nil for none
	// docs are the pipeline's analysed documents of the records ranked
	// while in the view (viewSource.Docs): kept as long as the record
	// is, so that a tier's ranking does not analyse its records again
	// each time the engine's doc cache, which the archive's searches
	// fill, starts over.
	docs map[uint64]*retrieve.Doc // not changed once kept: the pipeline reads them in place (viewSource.DocRefs)
	// queue is set while a recall's access changes the view: the changes
	// to its lexical indexes are queued for their next reader
	// (queuedText).
	queue bool
}

func newView(newText func() (TextIndex, error)) (*view, error) {
	t, err := newText()
	if err != nil {
		return nil, fmt.Errorf("hmo: tier text index: %w", err)
	}
	return &view{recs: map[uint64]*Record{}, pos: map[uint64]int{}, scopes: map[string]int{}, text: t, docs: map[uint64]*retrieve.Doc{}}, nil
}

// viewDoc is what a view needs of a record.
type viewDoc struct {
	rec  Record
	vec  []float32
	text TextDoc // the indexed document
}

// vec returns the vector of a record in the view.
func (v *view) vec(id uint64) ([]float32, bool) {
	r, ok := v.pos[id]
	if !ok {
		return nil, false
	}
	return v.mat[r*v.dims : (r+1)*v.dims], true
}

// reserve makes room for n more records of dims floats, so that filling
// a view at open does not copy its matrix and maps as they grow.
func (v *view) reserve(n, dims int) {
	if len(v.recs) == 0 && len(v.pos) == 0 {
		v.recs, v.pos = make(map[uint64]*Record, n), make(map[uint64]int, n)
	}
	v.rows = slices.Grow(v.rows, n)
	v.mat = slices.Grow(v.mat, n*dims)
}

func (v *view) add(docs []viewDoc) error {
	if len(docs) > 0 {
		v.reserve(len(docs), len(docs[0].vec))
	}
	tds := make([]TextDoc, len(docs))
	for i := range docs {
		d := &docs[i]
		if err := v.put(&d.rec, d.vec); err != nil {
			return err
		}
		tds[i] = d.text
	}
	for _, ix := range v.indexes() {
		if err := v.applyTo(ix, tds, nil); err != nil {
			return err
		}
	}
	return nil
}

// applyTo changes one of the view's lexical indexes: at once, or queued
// when the view queues its changes (queue).
func (v *view) applyTo(ix TextIndex, docs []TextDoc, dels []uint64) error {
	if q, ok := ix.(*queuedText); ok && v.queue {
		return q.enqueue(docs, dels)
	}
	if len(dels) == 0 {
		return applyParallel(ix, docs, 0)
	}
	return ix.Apply(docs, dels, 0)
}

// put places a copy of a record and its vector in the view's rows, not
// in its lexical indexes. The view keeps its own copy: records are read
// into slices of viewDocs, and a pointer into one would keep the whole
// slice alive as long as the record stays in the view (at open, Tier 2's
// 4,096 records with their decoded vectors), for the collector to mark
// at every cycle.
func (v *view) put(rec *Record, vec []float32) error {
	if len(v.rows) == 0 {
		v.dims = len(vec)
	}
	if len(vec) != v.dims {
		return fmt.Errorf("%w: tier vector of %d, view holds %d", ErrDims, len(vec), v.dims)
	}
	own := *rec
	rec = &own
	v.recs[rec.ID] = rec
	delete(v.docs, rec.ID)
	if r, ok := v.pos[rec.ID]; ok {
		copy(v.mat[r*v.dims:], vec)
		v.scopes[v.rows[r].Scope]--
		v.scopes[rec.Scope]++
		v.rows[r] = rec
	} else {
		v.scopes[rec.Scope]++
		v.pos[rec.ID] = len(v.rows)
		v.rows = append(v.rows, rec)
		v.mat = append(v.mat, vec...)
	}
	return nil
}

func (v *view) remove(ids []uint64) error {
	for _, id := range ids {
		v.drop(id)
	}
	for _, ix := range v.indexes() {
		if err := v.applyTo(ix, nil, ids); err != nil {
			return err
		}
	}
	return nil
}

// drop takes a record and its row out of the view, not out of its
// lexical indexes, and returns them (nil when the view does not hold it).
// The vector returned is a copy.
func (v *view) drop(id uint64) (*Record, []float32) {
	rec := v.recs[id]
	delete(v.recs, id)
	delete(v.docs, id)
	r, ok := v.pos[id]
	if !ok {
		return rec, nil
	}
	vec := append([]float32(nil), v.mat[r*v.dims:(r+1)*v.dims]...)
	if sc := v.rows[r].Scope; v.scopes[sc] <= 1 {
		delete(v.scopes, sc)
	} else {
		v.scopes[sc]--
	}
	// The last row fills the hole.
	last := len(v.rows) - 1
	if r != last {
		moved := v.rows[last]
		copy(v.mat[r*v.dims:(r+1)*v.dims], v.mat[last*v.dims:])
		v.rows[r], v.pos[moved.ID] = moved, r
	}
	v.mat, v.rows = v.mat[:last*v.dims], v.rows[:last]
	delete(v.pos, id)
	return rec, vec
}

// allIn reports that every record of the view passes q's filters
// because q filters by scope alone and the view holds no other scope.
func (v *view) allIn(q *Query) bool {
	return q.Session == "" && q.From.IsZero() && q.To.IsZero() && v.scopes[q.Scope] == len(v.rows)
}

// indexes are the lexical indexes the view's documents go to.
func (v *view) indexes() []TextIndex {
	if v.also == nil {
		return []TextIndex{v.text}
	}
	return []TextIndex{v.also, v.text}
}

// transfer moves a record from v to dst with its vector. Only the
// lexical indexes that one of the two views feeds and the other does not
// change: the index both feed (Tier 2's, which also holds Tier 1) keeps
// the document. doc builds the indexed document when dst needs it. It
// reports false, changing nothing, when v does not hold the record.
func (v *view) transfer(id uint64, dst *view, doc func(*Record) TextDoc) (bool, error) {
	if _, ok := v.pos[id]; !ok {
		return false, nil
	}
	pd, analysed := v.docs[id]
	rec, vec := v.drop(id)
	from, to := v.indexes(), dst.indexes()
	for _, ix := range from {
		if !slices.Contains(to, ix) {
			if err := v.applyTo(ix, nil, []uint64{id}); err != nil {
				return true, err
			}
		}
	}
	if err := dst.put(rec, vec); err != nil {
		return true, err
	}
	if analysed {
		dst.docs[id] = pd // the same record
	}
	for _, ix := range to {
		if !slices.Contains(from, ix) {
			if err := v.applyTo(ix, []TextDoc{doc(rec)}, nil); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

// searchVector scores every record of the view exactly (cosine),
// restricted by q's filters, and returns the c best.
func (v *view) searchVector(q *Query, qv []float32, c int) ([]scored, error) {
	var keep func(int) bool
	if q.filtered() && !v.allIn(q) {
		keep = func(r int) bool { return q.match(v.rows[r]) }
	}
	rows, err := vecscan.Scan(v.mat, v.dims, qv, c, keep)
	if err != nil {
		return nil, fmt.Errorf("hmo: tier vector scan: %w", err)
	}
	vec := make([]scored, len(rows))
	for i, h := range rows {
		vec[i] = scored{id: v.rows[h.Row].ID, score: float64(h.Score)}
	}
	return vec, nil
}

// searchText asks the view's lexical index for q's c best, restricted by
// q's filters.
func (v *view) searchText(ctx context.Context, q *Query, c int) ([]scored, error) {
	hits, err := v.text.Search(ctx, q.Text, c, TextFilter{Scope: q.Scope, Session: q.Session, From: q.From, To: q.To})
	if err != nil {
		return nil, err
	}
	text := make([]scored, len(hits))
	for i, h := range hits {
		text[i] = scored{h.ID, h.Score, h.Coverage}
	}
	return text, nil
}

// PrecomputedVector reports that the source's vector candidates are the
// views' scans, done before the pipeline runs (retrieve.Precomputed): a
// tier's ranking runs its lexical searches on the recall's goroutine.
func (s *viewSource) PrecomputedVector() bool { return true }
