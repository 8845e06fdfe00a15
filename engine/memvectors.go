package engine

import (
	"fmt"
	"sync"

	"github.com/hmo-dev/hmo/internal/vecscan"
)

// memVectors is an exact vector index held in memory: the archive's
// vector index of a store opened read-only whose index on disk is behind
// its records or unreadable. Nothing of it is written. It is safe for
// concurrent use.
type memVectors struct {
	mu   sync.RWMutex // guards the fields below
	dims int
	pos  map[uint64]int // id -> row of mat
	ids  []uint64       // row -> id
	mat  []float32
	wm   uint64
}

var _ VectorIndex = (*memVectors)(nil)

func newMemVectors(dims int) *memVectors { return &memVectors{dims: dims, pos: map[uint64]int{}} }

func (m *memVectors) Apply(adds []VectorDoc, deletes []uint64, wm uint64) error {
	for _, d := range adds {
		if len(d.Vector) != m.dims {
			return fmt.Errorf("%w: vector of %d, index holds %d", ErrDims, len(d.Vector), m.dims)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range adds {
		if r, ok := m.pos[d.ID]; ok {
			copy(m.mat[r*m.dims:], d.Vector)
			continue
		}
		m.pos[d.ID] = len(m.ids)
		m.ids = append(m.ids, d.ID)
		m.mat = append(m.mat, d.Vector...)
	}
	for _, id := range deletes {
		r, ok := m.pos[id]
		if !ok {
			continue
		}
		last := len(m.ids) - 1
		if r != last {
			moved := m.ids[last]
			copy(m.mat[r*m.dims:(r+1)*m.dims], m.mat[last*m.dims:])
			m.ids[r], m.pos[moved] = moved, r
		}
		m.ids, m.mat = m.ids[:last], m.mat[:last*m.dims]
		delete(m.pos, id)
	}
	m.wm = wm
	return nil
}

// Search scores every vector; the stored vectors are unit length.
func (m *memVectors) Search(q []float32, k int) ([]VectorHit, error) {
	if k <= 0 || len(q) != m.dims {
		return nil, fmt.Errorf("%w: query of %d, k %d", ErrInvalidQuery, len(q), k)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	rows, err := vecscan.Scan(m.mat, m.dims, q, k, nil)
	if err != nil {
		return nil, err
	}
	out := make([]VectorHit, len(rows))
	for i, h := range rows {
		out[i] = VectorHit{ID: m.ids[h.Row], Score: h.Score}
	}
	return out, nil
}

func (m *memVectors) Watermark() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.wm
}

func (m *memVectors) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.ids)
}

func (m *memVectors) Save() error  { return nil }
func (m *memVectors) Close() error { return nil }
