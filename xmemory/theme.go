// Package xmemory is xMemory's hierarchy (seed 002): messages are grouped
// into episodes, episodes yield semantic facts, and facts are organised
// into themes of at most Options.MaxFacts facts, split and merged so as to
// maximise the paper's sparsity–semantics objective f(P) (Eq. 1–3). At
// query time Select picks a compact, diverse set of units by the paper's
// greedy coverage-plus-relevance rule (Eq. 4) instead of plain top-k.
//
// The package is pure: it holds no store. The engine keeps a Partition per
// scope, rebuilt from bbolt on open and updated as records arrive and are
// forgotten.
package xmemory

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/hmo-dev/hmo/internal/vecscan"
)

// ErrInvalidOption is returned for options out of range.
var ErrInvalidOption = errors.New("xmemory: invalid option")

// Options shape a Partition. Zero values mean the defaults.
type Options struct {
	// MaxFacts is the most facts a theme holds; a theme that grows past
	// it is split. Default DefaultMaxFacts (the paper's bound, Table 8).
	MaxFacts int
	// Attach is the least cosine between a fact and a theme's centroid
	// for the fact to join the theme; below it the fact starts a new
	// theme. Default DefaultAttach.
	Attach float64
	// MinFacts: a theme with fewer facts is considered for merging into
	// one of its nearest themes. Default DefaultMinFacts.
	MinFacts int
	// Neighbours is how many nearest themes a split or merge is judged
	// against (the local part of f(P)). Default DefaultNeighbours.
	Neighbours int
	// MaintainEvery: every MaintainEvery-th Add (counted over the
	// partition's life) runs Maintain. Scheduling the merges by the count
	// of adds, not by the caller's batches, makes the partition a
	// function of the order of its adds alone: one kept up to date as
	// records arrive equals one rebuilt from them. Default
	// DefaultMaintainEvery adds.
	MaintainEvery int
}

// Defaults of Options.
const (
	DefaultMaxFacts   = 12
	DefaultAttach     = 0.6
	DefaultMinFacts   = 2
	DefaultNeighbours = 4
	// DefaultMaintainEvery is about five themes' worth of facts at the
	// cap: a theme started by a fact has that many adds to grow before
	// it is considered for a merge.
	DefaultMaintainEvery = 64
)

// WithDefaults fills zero fields and validates.
func (o Options) WithDefaults() (Options, error) {
	if o.MaxFacts == 0 {
		o.MaxFacts = DefaultMaxFacts
	}
	if o.Attach == 0 {
		o.Attach = DefaultAttach
	}
	if o.MinFacts == 0 {
		o.MinFacts = DefaultMinFacts
	}
	if o.Neighbours == 0 {
		o.Neighbours = DefaultNeighbours
	}
	if o.MaintainEvery == 0 {
		o.MaintainEvery = DefaultMaintainEvery
	}
	if o.MaintainEvery < 1 || o.MaxFacts < 2 || o.MinFacts < 1 || o.MinFacts > o.MaxFacts || o.Neighbours < 1 ||
		o.Attach < -1 || o.Attach > 1 || math.IsNaN(o.Attach) {
		return o, fmt.Errorf("%w: max facts %d, min facts %d, neighbours %d, attach %v, maintain every %d", ErrInvalidOption, o.MaxFacts, o.MinFacts, o.Neighbours, o.Attach, o.MaintainEvery)
	}
	return o, nil
}

// Theme is a group of facts with the sum of their (unit) vectors.
type Theme struct {
	ID    uint64
	Facts []uint64 // in arrival order
	Sum   []float32

	norm   float64 // |Sum|, when normOK
	normOK bool
	gone   bool // dropped from its partition, still in its list
}

// sumNorm is |Sum|, computed once per change of Sum.
func (t *Theme) sumNorm() float64 {
	if !t.normOK {
		t.norm, t.normOK = math.Sqrt(float64(vecscan.Dot(t.Sum, t.Sum))), true
	}
	return t.norm
}

// cosSum is the cosine of the theme's centroid with v.
func (t *Theme) cosSum(v []float32, vnorm float64) float64 {
	n := t.sumNorm()
	if n == 0 || vnorm == 0 {
		return 0
	}
	return float64(vecscan.Dot(t.Sum, v)) / (n * vnorm)
}

// Centroid is the theme's unit mean vector.
func (t *Theme) Centroid() []float32 { return unit(t.Sum) }

// Partition assigns facts to themes. It is not safe for concurrent use.
type Partition struct {
	o      Options
	dims   int
	next   uint64
	adds   uint64 // Adds over the partition's life (the Maintain schedule)
	themes map[uint64]*Theme
	// list holds the themes in ascending id order, for the scans of
	// Add and nearest (iterating the map was about a fifth of Add's
	// CPU); dropped themes stay in it, marked gone, until they are the
	// greater half of it.
	list  []*Theme
	gone  int                  // dropped themes in list
	of    map[uint64]uint64    // fact -> theme
	vecs  map[uint64][]float32 // fact -> unit vector
	dirty map[uint64]bool      // themes changed, created or dropped since TakeDirty
	slab  []float32            // what is left of the slab newSum cuts sums from
}

// State is the partition's counters, which a stored partition keeps
// beside its themes (Restore).
type State struct {
	Next uint64 // the last theme id given out
	Adds uint64 // Adds so far
}

// State returns the partition's counters.
func (p *Partition) State() State { return State{Next: p.next, Adds: p.adds} }

// Restore returns a partition of dims-dimensional facts holding themes as
// they were stored (Theme.Sum included, so a restored partition continues
// exactly as the one that was stored), with vecs the facts' vectors (not
// necessarily unit) and st its counters. A theme without facts, a fact in
// two themes, a theme id above st.Next or a fact without a vector of dims
// dimensions is refused with ErrInvalidOption.
func Restore(dims int, o Options, st State, themes []Theme, vecs map[uint64][]float32) (*Partition, error) {
	p, err := New(dims, o)
	if err != nil {
		return nil, err
	}
	p.next, p.adds = st.Next, st.Adds
	for _, t := range themes {
		if t.ID == 0 || t.ID > st.Next || len(t.Facts) == 0 || len(t.Sum) != dims || p.themes[t.ID] != nil {
			return nil, fmt.Errorf("%w: stored theme %d", ErrInvalidOption, t.ID)
		}
		nt := &Theme{ID: t.ID, Facts: append([]uint64(nil), t.Facts...), Sum: p.newSum()}
		copy(nt.Sum, t.Sum)
		for _, f := range nt.Facts {
			v := vecs[f]
			if len(v) != dims || p.of[f] != 0 {
				return nil, fmt.Errorf("%w: stored theme %d, fact %d", ErrInvalidOption, t.ID, f)
			}
			p.of[f] = t.ID
			p.vecs[f] = unit(v)
		}
		p.themes[t.ID] = nt
		p.list = append(p.list, nt)
	}
	slices.SortFunc(p.list, func(a, b *Theme) int { return cmp.Compare(a.ID, b.ID) })
	return p, nil
}

// sumSlab is how many themes' sums newSum allocates at once.
const sumSlab = 64

// newSum returns a zero sum for a new theme. The sums are cut from
// slabs, in the order the themes are created, which is their order in
// p.list: Add's scan over every theme's sum then reads memory in
// sequence instead of one scattered allocation per theme (most of the
// scan's time was cache misses).
func (p *Partition) newSum() []float32 {
	if len(p.slab) < p.dims {
		p.slab = make([]float32, sumSlab*p.dims)
	}
	s := p.slab[:p.dims:p.dims]
	p.slab = p.slab[p.dims:]
	return s
}

// addTheme puts t, whose id is above every other's, in the partition.
func (p *Partition) addTheme(t *Theme) {
	p.themes[t.ID] = t
	p.list = append(p.list, t)
}

// dropTheme takes theme tid out of the partition.
func (p *Partition) dropTheme(tid uint64) {
	t := p.themes[tid]
	delete(p.themes, tid)
	p.dirty[tid] = true
	t.gone = true
	p.gone++
	if p.gone > len(p.list)/2 {
		live := p.list[:0]
		for _, t := range p.list {
			if !t.gone {
				live = append(live, t)
			}
		}
		clear(p.list[len(live):])
		p.list, p.gone = live, 0
	}
}

// TakeDirty returns the themes created, changed or dropped (Theme returns
// nil) since the last call, ascending, and forgets them: what a caller
// that stores the partition writes after a change.
func (p *Partition) TakeDirty() []uint64 {
	out := make([]uint64, 0, len(p.dirty))
	for id := range p.dirty {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	clear(p.dirty)
	return out
}

// Rep returns the fact of theme tid nearest its centroid (the first such
// in arrival order), 0 for no theme: the fact its summary is drawn from.
func (p *Partition) Rep(tid uint64) uint64 {
	t := p.themes[tid]
	if t == nil {
		return 0
	}
	best, bestCos := uint64(0), math.Inf(-1)
	for _, f := range t.Facts {
		if c := cos(t.Sum, p.vecs[f]); c > bestCos {
			best, bestCos = f, c
		}
	}
	return best
}

// Equal reports whether p and q hold the same themes (ids, facts in
// order, sums) and counters.
func (p *Partition) Equal(q *Partition) bool {
	if p.State() != q.State() || len(p.themes) != len(q.themes) || len(p.of) != len(q.of) {
		return false
	}
	for id, t := range p.themes {
		u := q.themes[id]
		if u == nil || !slices.Equal(t.Facts, u.Facts) || !slices.Equal(t.Sum, u.Sum) {
			return false
		}
	}
	return true
}

// New returns an empty partition of dims-dimensional facts.
func New(dims int, o Options) (*Partition, error) {
	c, err := o.WithDefaults()
	if err != nil {
		return nil, err
	}
	if dims < 1 {
		return nil, fmt.Errorf("%w: dims %d", ErrInvalidOption, dims)
	}
	return &Partition{o: c, dims: dims, themes: map[uint64]*Theme{}, of: map[uint64]uint64{}, vecs: map[uint64][]float32{}, dirty: map[uint64]bool{}}, nil
}

// Len is the number of facts.
func (p *Partition) Len() int { return len(p.of) }

// ThemeOf returns the theme of fact id, 0 when it has none.
func (p *Partition) ThemeOf(id uint64) uint64 { return p.of[id] }

// Theme returns theme id, nil when there is none. The caller must not
// change it.
func (p *Partition) Theme(id uint64) *Theme { return p.themes[id] }

// Themes returns the ids of every theme, ascending.
func (p *Partition) Themes() []uint64 {
	out := make([]uint64, 0, len(p.themes))
	for _, t := range p.list {
		if !t.gone {
			out = append(out, t.ID)
		}
	}
	return out
}

// Add attaches fact id with vector vec to the most similar theme by
// centroid cosine, or starts a theme when none reaches Options.Attach,
// then splits the theme if it outgrew Options.MaxFacts; every
// Options.MaintainEvery-th Add then runs Maintain. Adding a fact that is
// there already moves it.
func (p *Partition) Add(id uint64, vec []float32) error {
	if len(vec) != p.dims {
		return fmt.Errorf("%w: fact %d has %d dims, want %d", ErrInvalidOption, id, len(vec), p.dims)
	}
	if _, ok := p.of[id]; ok {
		p.Remove(id)
	}
	v := unit(vec)
	p.vecs[id] = v
	// The centroid's cosine is the sum's: no centroid is materialised.
	// Ties go to the lower theme id, as in ascending order.
	best, bestCos := uint64(0), p.o.Attach
	vn := math.Sqrt(float64(vecscan.Dot(v, v)))
	for _, t := range p.list {
		if t.gone {
			continue
		}
		if c := t.cosSum(v, vn); c > bestCos || (c == bestCos && (best == 0 || t.ID < best)) {
			best, bestCos = t.ID, c
		}
	}
	if best == 0 {
		p.next++
		best = p.next
		p.addTheme(&Theme{ID: best, Sum: p.newSum()})
	}
	p.join(best, id)
	if len(p.themes[best].Facts) > p.o.MaxFacts {
		p.split(best)
	}
	p.adds++
	if p.adds%uint64(p.o.MaintainEvery) == 0 {
		p.Maintain()
	}
	return nil
}

// Remove takes fact id out of its theme; a theme left with fewer than
// Options.MinFacts facts is considered for a merge, and an empty one is
// dropped.
func (p *Partition) Remove(id uint64) {
	tid, ok := p.of[id]
	if !ok {
		return
	}
	t := p.themes[tid]
	for i, f := range t.Facts {
		if f == id {
			t.Facts = append(t.Facts[:i], t.Facts[i+1:]...)
			break
		}
	}
	addTo(t.Sum, p.vecs[id], -1)
	t.normOK = false
	delete(p.of, id)
	delete(p.vecs, id)
	p.dirty[tid] = true
	if len(t.Facts) == 0 {
		p.dropTheme(tid)
		return
	}
	p.MaybeMerge(tid)
}

func (p *Partition) join(tid, id uint64) {
	t := p.themes[tid]
	t.Facts = append(t.Facts, id)
	addTo(t.Sum, p.vecs[id], 1)
	t.normOK = false
	p.of[id] = tid
	p.dirty[tid] = true
}

// Maintain considers every theme smaller than Options.MinFacts for a
// merge, in id order. Call it after a batch of Adds.
func (p *Partition) Maintain() {
	for _, tid := range p.Themes() {
		if t := p.themes[tid]; t != nil && len(t.Facts) < p.o.MinFacts {
			p.MaybeMerge(tid)
		}
	}
}

// MaybeMerge merges theme tid, if it is tiny, into the nearest theme
// (among Options.Neighbours) whose merge maximises f(P) over the themes
// concerned, when that beats leaving it alone and the merged theme stays
// within Options.MaxFacts.
func (p *Partition) MaybeMerge(tid uint64) {
	t := p.themes[tid]
	if t == nil || len(t.Facts) >= p.o.MinFacts {
		return
	}
	near := p.nearest(tid, p.o.Neighbours)
	local := append([]uint64{tid}, near...)
	groups := p.groups(local)
	bestScore, best := Objective(groups), -1
	for i := range near {
		if len(t.Facts)+len(groups[i+1]) > p.o.MaxFacts {
			continue
		}
		cand := make([][][]float32, 0, len(groups)-1)
		for j := 1; j < len(groups); j++ {
			g := groups[j]
			if j == i+1 {
				g = append(append([][]float32{}, g...), groups[0]...)
			}
			cand = append(cand, g)
		}
		if s := Objective(cand); s > bestScore {
			bestScore, best = s, i
		}
	}
	if best < 0 {
		return
	}
	into := near[best]
	for _, f := range t.Facts {
		p.join(into, f)
	}
	p.dropTheme(tid)
}

// split divides an overcrowded theme: candidate splits come from 2- and
// 3-means over its facts, and the one that maximises f(P) over the theme
// and its nearest themes is taken; a part still too large is split again.
func (p *Partition) split(tid uint64) {
	t := p.themes[tid]
	near := p.nearest(tid, p.o.Neighbours)
	rest := p.groups(near)
	vecs := make([][]float32, len(t.Facts))
	for i, f := range t.Facts {
		vecs[i] = p.vecs[f]
	}
	var best [][]int
	bestScore := math.Inf(-1)
	for k := 2; k <= 3 && k <= len(vecs); k++ {
		parts := kmeans(vecs, k)
		cand := append([][][]float32{}, rest...)
		for _, part := range parts {
			g := make([][]float32, len(part))
			for i, j := range part {
				g[i] = vecs[j]
			}
			cand = append(cand, g)
		}
		if s := Objective(cand); s > bestScore {
			bestScore, best = s, parts
		}
	}
	facts := t.Facts
	p.dropTheme(tid)
	first := p.next + 1
	for _, part := range best {
		p.next++
		nt := &Theme{ID: p.next, Sum: p.newSum()}
		p.addTheme(nt)
		for _, j := range part {
			p.join(nt.ID, facts[j])
		}
	}
	// Parts still over the cap are split again (ids ascending, so the
	// order is deterministic).
	for id, last := first, p.next; id <= last; id++ {
		if t := p.themes[id]; t != nil && len(t.Facts) > p.o.MaxFacts {
			p.split(id)
		}
	}
}

// nearest returns up to n themes other than tid, most similar centroid
// first (ties: lower id).
func (p *Partition) nearest(tid uint64, n int) []uint64 {
	ct := p.themes[tid]
	type sim struct {
		id uint64
		s  float64
	}
	// The n best by (similarity descending, id ascending), kept sorted
	// by insertion: no sort of every theme.
	before := func(a, b sim) bool { return a.s > b.s || (a.s == b.s && a.id < b.id) }
	best := make([]sim, 0, n+1)
	cn := ct.sumNorm()
	for _, t := range p.list {
		if t.gone || t.ID == tid {
			continue
		}
		c := sim{t.ID, t.cosSum(ct.Sum, cn)}
		if len(best) == n && !before(c, best[n-1]) {
			continue
		}
		i := len(best)
		for i > 0 && before(c, best[i-1]) {
			i--
		}
		best = slices.Insert(best, i, c)
		if len(best) > n {
			best = best[:n]
		}
	}
	out := make([]uint64, len(best))
	for i, b := range best {
		out[i] = b.id
	}
	return out
}

func (p *Partition) groups(ids []uint64) [][][]float32 {
	out := make([][][]float32, len(ids))
	for i, id := range ids {
		for _, f := range p.themes[id].Facts {
			out[i] = append(out[i], p.vecs[f])
		}
	}
	return out
}
