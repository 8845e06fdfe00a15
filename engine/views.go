package engine

import (
	"context"
	"fmt"

	"github.com/hmo-dev/hmo/internal/vecscan"
)

// view is a tier held in RAM: its records, their vectors in one
// contiguous matrix (scanned like the archive's, with SIMD) and a small
// lexical index over their indexed text. Tier 1's records are also
// indexed in Tier 2's lexical index (also), so that the search of tiers
// 1 and 2 together ranks them with one set of term statistics, as the
// archive's index would. The engine's tmu guards it.
type view struct {
	recs map[uint64]*Record
	pos  map[uint64]int // id -> row of mat
	ids  []uint64       // row -> id
	mat  []float32      // rows of dims floats
	dims int            // set by the first vector added to an empty view
	text TextIndex
	also TextIndex // a second index the view's documents go to; nil for none
}

func newView(newText func() (TextIndex, error)) (*view, error) {
	t, err := newText()
	if err != nil {
		return nil, fmt.Errorf("hmo: tier text index: %w", err)
	}
	return &view{recs: map[uint64]*Record{}, pos: map[uint64]int{}, text: t}, nil
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

func (v *view) add(docs []viewDoc) error {
	tds := make([]TextDoc, len(docs))
	for i := range docs {
		d := &docs[i]
		if len(v.ids) == 0 {
			v.dims = len(d.vec)
		}
		if len(d.vec) != v.dims {
			return fmt.Errorf("%w: tier vector of %d, view holds %d", ErrDims, len(d.vec), v.dims)
		}
		v.recs[d.rec.ID] = &d.rec
		if r, ok := v.pos[d.rec.ID]; ok {
			copy(v.mat[r*v.dims:], d.vec)
		} else {
			v.pos[d.rec.ID] = len(v.ids)
			v.ids = append(v.ids, d.rec.ID)
			v.mat = append(v.mat, d.vec...)
		}
		tds[i] = d.text
	}
	for _, ix := range []TextIndex{v.also, v.text} {
		if ix == nil {
			continue
		}
		if err := applyParallel(ix, tds, 0); err != nil {
			return err
		}
	}
	return nil
}

func (v *view) remove(ids []uint64) error {
	for _, id := range ids {
		delete(v.recs, id)
		r, ok := v.pos[id]
		if !ok {
			continue
		}
		// The last row fills the hole.
		last := len(v.ids) - 1
		if r != last {
			moved := v.ids[last]
			copy(v.mat[r*v.dims:(r+1)*v.dims], v.mat[last*v.dims:])
			v.ids[r], v.pos[moved] = moved, r
		}
		v.ids, v.mat = v.ids[:last], v.mat[:last*v.dims]
		delete(v.pos, id)
	}
	if v.also != nil {
		if err := v.also.Apply(nil, ids, 0); err != nil {
			return err
		}
	}
	return v.text.Apply(nil, ids, 0)
}

// search scores every record of the view exactly (cosine) and asks its
// lexical index, both restricted by q's filters.
func (v *view) search(ctx context.Context, q *Query, qv []float32, c int) (text, vec []scored, err error) {
	var keep func(int) bool
	if q.filtered() {
		keep = func(r int) bool { return q.match(v.recs[v.ids[r]]) }
	}
	rows, err := vecscan.Scan(v.mat, v.dims, qv, c, keep)
	if err != nil {
		return nil, nil, fmt.Errorf("hmo: tier vector scan: %w", err)
	}
	vec = make([]scored, len(rows))
	for i, h := range rows {
		vec[i] = scored{id: v.ids[h.Row], score: float64(h.Score)}
	}
	hits, err := v.text.Search(ctx, q.Text, c, TextFilter{Scope: q.Scope, Session: q.Session, From: q.From, To: q.To})
	if err != nil {
		return nil, nil, err
	}
	text = make([]scored, len(hits))
	for i, h := range hits {
		text[i] = scored{h.ID, h.Score, h.Coverage}
	}
	return text, vec, nil
}
