package engine

import (
	"context"
	"fmt"
)

// view is a tier held in RAM: its records, their vectors and a small
// lexical index over their indexed text. Tier 1's records are also
// indexed in Tier 2's lexical index (also), so that the search of tiers
// 1 and 2 together ranks them with one set of term statistics, as the
// archive's index would. The engine's tmu guards it.
type view struct {
	recs map[uint64]*Record
	vecs map[uint64][]float32
	text TextIndex
	also TextIndex // a second index the view's documents go to; nil for none
}

func newView(newText func() (TextIndex, error)) (*view, error) {
	t, err := newText()
	if err != nil {
		return nil, fmt.Errorf("hmo: tier text index: %w", err)
	}
	return &view{recs: map[uint64]*Record{}, vecs: map[uint64][]float32{}, text: t}, nil
}

// viewDoc is what a view needs of a record.
type viewDoc struct {
	rec  Record
	vec  []float32
	text TextDoc // the indexed document
}

func (v *view) add(docs []viewDoc) error {
	tds := make([]TextDoc, len(docs))
	for i := range docs {
		d := &docs[i]
		v.recs[d.rec.ID] = &d.rec
		v.vecs[d.rec.ID] = d.vec
		tds[i] = d.text
	}
	if v.also != nil {
		if err := v.also.Apply(tds, nil, 0); err != nil {
			return err
		}
	}
	return v.text.Apply(tds, nil, 0)
}

func (v *view) remove(ids []uint64) error {
	for _, id := range ids {
		delete(v.recs, id)
		delete(v.vecs, id)
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
	top := newTopK(c)
	for id, r := range v.recs {
		if q.match(r) {
			top.push(scored{id: id, score: float64(dot(qv, v.vecs[id]))})
		}
	}
	hits, err := v.text.Search(ctx, q.Text, c, TextFilter{Scope: q.Scope, Session: q.Session, From: q.From, To: q.To})
	if err != nil {
		return nil, nil, err
	}
	text = make([]scored, len(hits))
	for i, h := range hits {
		text[i] = scored{h.ID, h.Score, h.Coverage}
	}
	return text, top.sorted(), nil
}
