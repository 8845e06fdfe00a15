package vecfile

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/hmo-dev/hmo/engine"
)

var _ engine.VectorReader = (*Index)(nil)

// KeepsVectors reports whether the rows are the vectors themselves
// (Float32 format), not an approximation (Int8).
func (x *Index) KeepsVectors() bool { return x.opts.Format == Float32 }

// Vector returns a copy of the live vector of id, as Apply stored it
// (normalised to unit length), and false when the index holds none or
// keeps only an approximation of it (Int8 format). It reads the one row
// (pread) and checks that row's checksum, whatever Options.SkipVerify says: a
// mismatch is an error wrapping ErrCorrupt.
func (x *Index) Vector(id uint64) (v []float32, ok bool, err error) {
	defer recoverTo("vector", &err)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, false, ErrClosed
	}
	if x.opts.Format != Float32 {
		return nil, false, nil
	}
	r, found := x.extra[id]
	if !found {
		r, found = x.findSorted(id)
	}
	if !found || r >= x.n || slotFlags(x.slotAt(r))&flagLive == 0 {
		return nil, false, nil
	}
	v, err = x.readRow(r)
	return v, err == nil, err
}

// NextVector returns the lowest live id at or above from and a copy of
// its vector, checked as Vector checks it; false when there is none or
// the index keeps only approximations (Int8 format).
func (x *Index) NextVector(from uint64) (id uint64, v []float32, ok bool, err error) {
	defer recoverTo("vector", &err)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return 0, nil, false, ErrClosed
	}
	if x.opts.Format != Float32 {
		return 0, nil, false, nil
	}
	row := -1
	for r := sort.Search(x.sorted, func(i int) bool { return slotID(x.slotAt(i)) >= from }); r < x.sorted; r++ {
		if slotFlags(x.slotAt(r))&flagLive != 0 {
			row, id = r, slotID(x.slotAt(r))
			break
		}
	}
	// Rows out of id order (none in the engine's use) are in extra.
	for eid, r := range x.extra {
		if eid >= from && (row < 0 || eid < id) && r < x.n && slotFlags(x.slotAt(r))&flagLive != 0 {
			row, id = r, eid
		}
	}
	if row < 0 {
		return 0, nil, false, nil
	}
	v, err = x.readRow(row)
	return id, v, err == nil, err
}

// readRow reads the float32 row r and checks its checksum. The row is
// read with pread, not through the mapping: a fault on the mapping would
// map the row's neighbours too (64 KiB of fault-around each), which a
// scan of the int8 companion never reads. The caller holds mu for
// reading.
func (x *Index) readRow(r int) ([]float32, error) {
	rb := x.rowBytes()
	row := make([]byte, rb)
	if _, err := x.matF.ReadAt(row, int64(pageSize+r*rb)); err != nil {
		return nil, fmt.Errorf("%w: row %d: %v", ErrCorrupt, r, err)
	}
	s := x.slotAt(r)
	if !rowOK(s, row) {
		return nil, fmt.Errorf("%w: row %d (id %d) checksum", ErrCorrupt, r, slotID(s))
	}
	v := make([]float32, x.opts.Dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(row[4*i:]))
	}
	return v, nil
}

var _ engine.RescoredVectorIndex = (*Index)(nil)

// RescoreCandidates is the candidates a search for k best asks an
// Int8Rescore index for, to rescore them from the caller's float32
// vectors: max(Options.Rescore*k, RescoreMin), the rows a Float32 index
// with ScanInt8 rescores itself. It is 0 for the other formats, whose
// scores are the ones they return (Int8's approximate, Float32's exact).
func (x *Index) RescoreCandidates(k int) int {
	if x.opts.Format != Int8Rescore || k <= 0 {
		return 0
	}
	return max(x.opts.Rescore*k, RescoreMin)
}
