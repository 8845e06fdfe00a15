package fts

import (
	"context"
	"fmt"
	"math/bits"
	"strconv"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/hmo-dev/hmo/engine"
)

var (
	_ engine.TermHolder = (*Index)(nil)
	_ engine.TermHolder = (*Memory)(nil)
)

// Analysis implements engine.TermHolder: the analyzer option.
func (x *Index) Analysis() string { return string(x.an.name) }

// Analysis implements engine.TermHolder: the analyzer option.
func (m *Memory) Analysis() string { return string(m.analysis) }

// HoldsAll implements engine.TermHolder. It walks the postings of the
// query's rarest term in the text field and seeks each document in the
// others'; only documents holding every term are looked up by id. Its
// cost is the rarest term's postings, not a ranking.
func (x *Index) HoldsAll(ctx context.Context, q string, keep func(uint64) bool) (held bool, err error) {
	defer recoverTo("holds all", &err)
	x.life.RLock()
	defer x.life.RUnlock()
	if x.closed.Load() {
		return false, fmt.Errorf("fts: holds all: %w", ErrClosed)
	}
	terms := distinct(x.terms(q))
	if len(terms) == 0 {
		return true, nil
	}
	r, err := x.s.Reader()
	if err != nil {
		return false, x.wrap("holds all", err)
	}
	defer closeReader(r, &err)
	cs := make([]*termCursor, 0, len(terms))
	defer func() {
		for _, c := range cs {
			_ = c.tfr.Close()
		}
	}()
	rarest := 0
	for _, t := range terms {
		tfr, err := r.TermFieldReader(ctx, []byte(t), fieldText, false, false, false)
		if err != nil {
			return false, x.wrap("holds all", err)
		}
		c := &termCursor{tfr: tfr}
		cs = append(cs, c)
		if tfr.Count() == 0 {
			return false, nil
		}
		if err := c.next(); err != nil {
			return false, x.wrap("holds all", err)
		}
		if tfr.Count() < cs[rarest].tfr.Count() {
			rarest = len(cs) - 1
		}
	}
	lead := cs[rarest]
	var iid [8]byte
	for ; lead.doc != docEnd; err = lead.next() {
		if err != nil {
			return false, x.wrap("holds all", err)
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
		all := true
		for _, c := range cs {
			if c == lead {
				continue
			}
			if err := c.advance(lead.doc); err != nil {
				return false, x.wrap("holds all", err)
			}
			if c.doc != lead.doc {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		ext, err := r.ExternalID(index.NewIndexInternalID(iid[:], lead.doc))
		if err != nil {
			return false, x.wrap("holds all", err)
		}
		id, err := strconv.ParseUint(ext, 10, 64)
		if err != nil {
			return false, fmt.Errorf("%w (document id %q)", ErrCorrupt, ext)
		}
		if keep(id) {
			return true, nil
		}
	}
	if err != nil {
		return false, x.wrap("holds all", err)
	}
	return false, nil
}

// HoldsAll implements engine.TermHolder over the documents held. The
// documents holding every term in the text field are found rarest term
// first. When the rarest has few documents against the next one's
// postings, each is looked up in the other terms (holdsByLookup).
// Otherwise the two rarest terms' postings mark their documents' slots
// on two bitmaps, intersected (a posting names its document by slot, so
// the walk loads no document), and each further term is looked up in the
// documents left, or marked and intersected in turn while more than one
// document in holdsLookup of its postings is left. Only the documents
// holding every term are handed to keep.
func (m *Memory) HoldsAll(ctx context.Context, q string, keep func(uint64) bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	terms := m.queryTerms(q)
	if len(terms) == 0 {
		return true, nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	ps := make([]*memTerm, len(terms))
	for i, t := range terms {
		if ps[i] = m.postings[t]; ps[i] == nil || ps[i].df[fText] == 0 {
			return false, nil
		}
	}
	// By document frequency, rarest first (a few terms: an insertion sort).
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].df[fText] < ps[j-1].df[fText]; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
	if len(ps) == 1 || ps[0].df[fText]*holdsLookup < ps[1].n {
		return m.holdsByLookup(ps, keep), nil
	}
	words := (len(m.slots) + 63) / 64
	buf := make([]uint64, 2*words)
	held, next := buf[:words], buf[words:]
	ps[0].mark(held)
	left := ps[0].df[fText]
	for _, t := range ps[1:] {
		if left*holdsLookup < t.n {
			left = m.lookUp(held, t)
		} else {
			clear(next)
			t.mark(next)
			left = 0
			for w := range held {
				held[w] &= next[w]
				left += bits.OnesCount64(held[w])
			}
		}
		if left == 0 {
			return false, nil
		}
	}
	for w, b := range held {
		for ; b != 0; b &= b - 1 {
			if keep(m.slots[w*64+bits.TrailingZeros64(b)].meta.ID) {
				return true, nil
			}
		}
	}
	return false, nil
}

// holdsByLookup is HoldsAll for a rarest term (ps[0]) of few postings:
// each of its documents is looked up in the other terms, rarest first.
func (m *Memory) holdsByLookup(ps []*memTerm, keep func(uint64) bool) bool {
	for _, list := range ps[0].scopes {
	docs:
		for i := range list.posts {
			p := &list.posts[i]
			if p.tf[fText] == 0 {
				continue
			}
			d := m.slots[p.slot]
			for _, t := range ps[1:] {
				if o := m.post(t, d); o == nil || o.tf[fText] == 0 {
					continue docs
				}
			}
			if keep(d.meta.ID) {
				return true
			}
		}
	}
	return false
}

// holdsLookup is about how many postings HoldsAll reads in the time of
// one lookup of a term in a document (a search of its refs, loading each).
const holdsLookup = 16

// mark sets the slots of the documents holding t in the text field.
func (t *memTerm) mark(set []uint64) {
	for _, list := range t.scopes {
		for i := range list.posts {
			if p := &list.posts[i]; p.tf[fText] > 0 {
				set[p.slot/64] |= 1 << (p.slot % 64)
			}
		}
	}
}

// lookUp clears from set the documents not holding t in the text field
// and returns how many are left.
func (m *Memory) lookUp(set []uint64, t *memTerm) int {
	left := 0
	for w, b := range set {
		for ; b != 0; b &= b - 1 {
			bit := bits.TrailingZeros64(b)
			if p := m.post(t, m.slots[w*64+bit]); p == nil || p.tf[fText] == 0 {
				set[w] &^= 1 << bit
			} else {
				left++
			}
		}
	}
	return left
}

// termCursor walks one word's postings in one field through bleve's
// iterator, by document number (the value of bleve's internal id).
type termCursor struct {
	tfr index.TermFieldReader
	buf index.TermFieldDoc
	doc uint64 // current document number; docEnd when exhausted
}

func (c *termCursor) set(d *index.TermFieldDoc) {
	if d == nil {
		c.doc = docEnd
		return
	}
	c.doc = d.ID.Value()
}

func (c *termCursor) next() error {
	d, err := c.tfr.Next(&c.buf)
	if err != nil {
		return err
	}
	c.set(d)
	return nil
}

// advance moves c to the first document at or after doc.
func (c *termCursor) advance(doc uint64) error {
	if c.doc >= doc {
		return nil
	}
	var id [8]byte
	d, err := c.tfr.Advance(index.NewIndexInternalID(id[:], doc), &c.buf)
	if err != nil {
		return err
	}
	c.set(d)
	return nil
}
