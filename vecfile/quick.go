package vecfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/dot4"
	"github.com/hmo-dev/hmo/internal/dot8"
	"github.com/hmo-dev/hmo/internal/vecscan"
)

// The 4-bit first pass of an Int8Rescore index (Options.QuickAbove): a
// third file, "q4", holding each row of the matrix again as 4-bit codes
// of its offset from the centre of the rows (their mean when the file was
// built). A search of at least QuickAbove rows ranks every row by its
// codes (internal/dot4: 64 bytes a row at 100 dims against the int8
// row's 112, and the scan is bound by the bytes it reads), keeps the best
// QuickCandidates(cands) of them, reads those rows' int8 rows by pread and
// ranks them exactly as the int8 scan would: the int8 candidates, and so
// the final hits, are the int8 scan's whenever its best cands are among
// the 4-bit pass's best (the recall is measured in the tests and
// BENCHMARKS.md). The int8 rows then stay out of the resident set: only
// the q4 file is mapped and read whole.
//
// Like the companion of a Float32 index, the file is derived data, never
// synced: each row carries a checksum of its bytes and of the CRC of the
// slot it was made from, so Open regenerates, row by row, a row that is
// torn, lost in a crash or left from an older vector; a header that names
// another matrix file or other dims, or a centre computed from fewer than
// half of today's rows, regenerates them all. A read-only Open that finds
// anything stale scans the int8 rows instead.
//
//	q4      a 4 KiB header page (magic, version, dims, matrix identity,
//	        rows the centre was computed from, the centre: dims float32,
//	        CRC), then one row of q4Stride(dims) bytes per matrix row:
//	        ceil(dims/2) bytes of codes (component 2j in the low nibble of
//	        byte j, 2j+1 in the high one), zeros to a multiple of 4, the
//	        float32 offset of code 0 and step between codes, a CRC-32C of
//	        the slot's CRC and those bytes, zeros to the stride
//
// Component i of a row is about lo + code_i*step + centre_i; its dot
// product with a query q, less the centre's (the same for every row), is
// about lo*sum(q) + step*(codes . q).
const (
	q4Name      = "q4"
	q4HeadFixed = 32 // magic, version, dims, matrix id, rows of the centre
	q4MaxDims   = (pageSize - q4HeadFixed - 4) / 4
)

var q4Magic = [8]byte{'h', 'm', 'o', 'v', 'e', 'c', '4', '1'}

// q4Codes is the bytes of a row's codes; q4Fields the offset of its
// float32 fields (lo, step, check); q4Kernel the code bytes the kernel
// reads, whole dot4 chunks (the fields may sit in the last: the query's
// zero padding makes them count for nothing).
func q4Codes(dims int) int  { return (dims + 1) / 2 }
func q4Fields(dims int) int { return (q4Codes(dims) + 3) &^ 3 }
func q4Kernel(dims int) int { return (q4Codes(dims) + dot4.Chunk - 1) / dot4.Chunk * dot4.Chunk }

// q4Stride is the bytes per q4 row: 64 at 100 dims.
func q4Stride(dims int) int { return (max(q4Fields(dims)+12, q4Kernel(dims)) + 15) &^ 15 }

// q4Header is the q4 file's header.
type q4Header struct {
	dims     int
	matrixID uint64
	built    uint64 // rows the centre was computed from
	centre   []float32
}

func (h *q4Header) encode() []byte {
	b := make([]byte, q4HeadFixed+4*h.dims+4)
	copy(b, q4Magic[:])
	binary.LittleEndian.PutUint32(b[8:], formatVer)
	binary.LittleEndian.PutUint32(b[12:], uint32(h.dims))
	binary.LittleEndian.PutUint64(b[16:], h.matrixID)
	binary.LittleEndian.PutUint64(b[24:], h.built)
	for i, c := range h.centre {
		binary.LittleEndian.PutUint32(b[q4HeadFixed+4*i:], math.Float32bits(c))
	}
	end := q4HeadFixed + 4*h.dims
	binary.LittleEndian.PutUint32(b[end:], crc32.Checksum(b[:end], castagnoli))
	return b
}

// decodeQ4Header reads the header page of a q4 file. It never panics.
func decodeQ4Header(b []byte) (q4Header, bool) {
	if len(b) < q4HeadFixed+4 || [8]byte(b[:8]) != q4Magic || binary.LittleEndian.Uint32(b[8:]) != formatVer {
		return q4Header{}, false
	}
	dims := int(binary.LittleEndian.Uint32(b[12:]))
	if dims <= 0 || dims > q4MaxDims || len(b) < q4HeadFixed+4*dims+4 {
		return q4Header{}, false
	}
	end := q4HeadFixed + 4*dims
	if crc32.Checksum(b[:end], castagnoli) != binary.LittleEndian.Uint32(b[end:]) {
		return q4Header{}, false
	}
	h := q4Header{
		dims:     dims,
		matrixID: binary.LittleEndian.Uint64(b[16:]),
		built:    binary.LittleEndian.Uint64(b[24:]),
		centre:   make([]float32, dims),
	}
	for i := range h.centre {
		c := math.Float32frombits(binary.LittleEndian.Uint32(b[q4HeadFixed+4*i:]))
		if math.IsNaN(float64(c)) || math.IsInf(float64(c), 0) {
			return q4Header{}, false
		}
		h.centre[i] = c
	}
	return h, true
}

// wantQ4 reports whether this index keeps a q4 file.
func (o *Options) wantQ4() bool {
	return o.Format == Int8Rescore && o.QuickAbove > 0 && o.Dims <= q4MaxDims
}

// q4Row writes into dst (q4Stride bytes) the q4 row of the int8 row row
// (an Int8Rescore matrix row: dims int8 components, then their scale)
// around centre, with the checksum of it and of the slot's CRC. scratch
// holds dims float64s.
func q4Row(row []byte, centre []float32, slot []byte, scratch []float64, dst []byte) {
	dims := len(centre)
	scale := math.Float32frombits(binary.LittleEndian.Uint32(row[dims:]))
	d := scratch[:dims]
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range d {
		d[i] = float64(float32(int8(row[i]))*scale) - float64(centre[i])
		lo, hi = min(lo, d[i]), max(hi, d[i])
	}
	clear(dst)
	step := (hi - lo) / 15
	if !(step > 0) || math.IsInf(step, 0) {
		step = 0
	} else {
		for i, v := range d {
			c := byte(max(0, min(15, math.Round((v-lo)/step))))
			dst[i/2] |= c << (4 * (i & 1))
		}
	}
	f := q4Fields(dims)
	binary.LittleEndian.PutUint32(dst[f:], math.Float32bits(float32(lo)))
	binary.LittleEndian.PutUint32(dst[f+4:], math.Float32bits(float32(step)))
	binary.LittleEndian.PutUint32(dst[f+8:], q4Check(dst, slot, dims))
}

// q4Check is the checksum of a q4 row: CRC-32C of the slot's CRC, the
// codes and the two fields.
func q4Check(row, slot []byte, dims int) uint32 {
	return crc32.Update(crc32.Checksum(slot[40:44], castagnoli), castagnoli, row[:q4Fields(dims)+8])
}

// q4CheckCRC is q4Check of a slot whose CRC is crc.
func q4CheckCRC(row []byte, crc uint32, dims int) uint32 {
	return q4Check(row, binary.LittleEndian.AppendUint32(make([]byte, 40, 44), crc), dims)
}

// q4RowOK reports whether the q4 row b is intact and made from the slot's
// current row.
func q4RowOK(b, slot []byte, dims int) bool {
	return binary.LittleEndian.Uint32(b[q4Fields(dims)+8:]) == q4Check(b, slot, dims)
}

// q4At is the q4 row of row r. The caller holds mu or applyMu.
func (x *Index) q4At(r int) []byte {
	st := q4Stride(x.opts.Dims)
	off := pageSize + r*st
	return x.q4[off : off+st]
}

// openQ4 opens the q4 file of an Int8Rescore index whose matrix and
// slots are open and counted, regenerating what is stale or damaged, or
// removes it when the index keeps none (fewer live rows than QuickAbove
// at Open, another format, or QuickAbove negative): a later Open that
// keeps one rebuilds it.
func (x *Index) openQ4() error {
	if err := x.openQ4Rows(); err != nil {
		return err
	}
	return x.openIVF()
}

// openQ4Rows opens the q4 file (openQ4), without the partition.
func (x *Index) openQ4Rows() error {
	// None in a read-only index: scan the int8 rows.
	f, err := x.openDerived(q4Name, x.opts.wantQ4() && x.live >= x.opts.QuickAbove)
	if f == nil || err != nil {
		return err
	}
	x.q4F = f
	st, err := f.Stat()
	if err != nil {
		return err
	}
	dims := x.opts.Dims
	need := pageSize + x.n*q4Stride(dims)
	page := make([]byte, pageSize)
	_, rerr := io.ReadFull(io.NewSectionReader(f, 0, pageSize), page)
	h, ok := decodeQ4Header(page)
	valid := rerr == nil && ok && h.dims == dims && h.matrixID == x.matrixID &&
		st.Size() >= int64(need) && 2*h.built >= uint64(x.live)
	if x.opts.ReadOnly && !valid {
		return x.dropQ4()
	}
	if err := x.mapQ4(need); err != nil {
		return err
	}
	if !valid {
		return x.buildQ4()
	}
	x.q4Centre, x.q4Built = h.centre, int(h.built)
	var bad []int
	for r := range x.n {
		if !q4RowOK(x.q4At(r), x.slotAt(r), dims) {
			if x.opts.ReadOnly {
				return x.dropQ4()
			}
			bad = append(bad, r)
		}
	}
	return x.regenQ4(bad)
}

// buildQ4 computes the centre of the live rows and writes every q4 row
// and the header. The matrix is read by pread, so that its pages stay
// out of the resident set.
func (x *Index) buildQ4() error {
	dims := x.opts.Dims
	sum := make([]float64, dims)
	live := 0
	err := x.eachRow(0, x.n, func(r int, row []byte) {
		if slotFlags(x.slotAt(r))&flagLive == 0 {
			return
		}
		scale := math.Float32frombits(binary.LittleEndian.Uint32(row[dims:]))
		for i := range sum {
			sum[i] += float64(float32(int8(row[i])) * scale)
		}
		live++
	})
	if err != nil {
		return err
	}
	centre := make([]float32, dims)
	for i := range centre {
		if live > 0 {
			centre[i] = float32(sum[i] / float64(live))
		}
	}
	x.q4Centre = centre
	all := make([]int, x.n)
	for r := range all {
		all[r] = r
	}
	if err := x.regenQ4(all); err != nil {
		return err
	}
	x.q4Built = live
	h := q4Header{dims: dims, matrixID: x.matrixID, built: uint64(live), centre: centre}
	return writeAt(x.q4F, x.q4, h.encode(), 0)
}

// eachRow calls fn with each matrix row in [lo, hi), read by pread in
// runs; row is valid only during the call.
func (x *Index) eachRow(lo, hi int, fn func(r int, row []byte)) error {
	rb := x.rowBytes()
	const run = 1024
	buf := make([]byte, run*rb)
	for r := lo; r < hi; r += run {
		m := min(run, hi-r)
		if _, err := x.matF.ReadAt(buf[:m*rb], int64(pageSize+r*rb)); err != nil {
			return fmt.Errorf("%w: rows %d-%d: %v", ErrCorrupt, r, r+m, err)
		}
		for i := range m {
			fn(r+i, buf[i*rb:(i+1)*rb])
		}
	}
	return nil
}

// regenQ4 rewrites the q4 rows rows (increasing) from the matrix.
func (x *Index) regenQ4(rows []int) error {
	scratch := make([]float64, x.opts.Dims)
	return x.regenRows(rows, x.q4F, x.q4, q4Stride(x.opts.Dims), func(r int, row, out []byte) {
		q4Row(row, x.q4Centre, x.slotAt(r), scratch, out)
	})
}

// mapQ4 maps the q4 file whole, growing it to at least size bytes.
func (x *Index) mapQ4(size int) error {
	return mapOne(x.q4F, size, &x.q4, x.opts.ReadOnly)
}

// dropQ4 closes the q4 file: searches scan the int8 rows.
func (x *Index) dropQ4() error {
	err := errors.Join(x.closeIVF(), unmap(x.q4), x.q4F.Close())
	x.q4, x.q4F, x.q4Centre = nil, nil, nil
	if err != nil {
		return fmt.Errorf("vecfile: q4: %w", err)
	}
	return nil
}

// QuickMin is the fewest rows the 4-bit pass hands to the int8 ranking.
const QuickMin = 256

// QuickCandidates is the rows the 4-bit pass keeps for the int8 ranking
// of a search for cands int8 candidates: max(Quick*cands, QuickMin).
func (x *Index) QuickCandidates(cands int) int { return max(x.opts.Quick*cands, QuickMin) }

// usesQ4 reports whether a search of n rows takes the 4-bit pass. The
// caller holds mu for reading.
func (x *Index) usesQ4(n, cands int) bool {
	return x.q4 != nil && n >= x.opts.QuickAbove && x.QuickCandidates(cands) < n
}

// scanQ4 is the Int8Rescore search of the n rows from first through the
// 4-bit pass: every row ranked by its q4 row (or, for a search of every
// row of an index with a partition, the rows scanIVF picks, unless a
// filtered one (match, the test of its filter on a slot, not nil) would
// rather scan every row: scanIVF), the best QuickCandidates(cands) ranked by their int8 rows
// (read by pread) exactly as scanQuant ranks them, the best cands of
// those returned in no order. keep and the rows it returns count from
// first. The caller holds mu for reading.
func (x *Index) scanQ4(uq []float32, cands, first, n int, keep func(int) bool, match func(slot []byte) bool) ([]vecscan.Hit, error) {
	dims := x.opts.Dims
	st := q4Stride(dims)
	qq := newQ4Query(uq, dims)
	f := q4Fields(dims)
	var rows []vecscan.Hit
	var steps map[int]float32
	var err error
	if x.part != nil && first == 0 {
		rows, steps, err = x.scanIVF(uq, qq, x.QuickCandidates(cands), cands, keep, match)
	}
	if x.part == nil || first > 0 || errors.Is(err, errWiden) {
		steps, err = nil, nil
		rows, err = vecscan.ScanFunc(n, x.QuickCandidates(cands), keep, func(lo, hi int, h *vecscan.Heap) {
			out := make([]float32, scanBlock)
			floor := h.Floor()
			for b := lo; b < hi; b += scanBlock {
				base := pageSize + (first+b)*st
				c := dot4.DotsScaled(qq.sq, x.q4[base:], st, f, qq.fsum, out[:min(scanBlock, hi-b)])
				if c < min(scanBlock, hi-b) {
					panic("q4 rows shorter than their count") // turned into ErrFault by ScanFunc
				}
				for i, s := range out[:c] {
					if s < floor {
						continue
					}
					if r := b + i; keep == nil || keep(r) {
						h.Push(r, s)
						floor = h.Floor()
					}
				}
			}
		})
	}
	if err != nil {
		return nil, err
	}
	// The estimates in the query's units, plus the centre's dot product
	// with the query that they leave out: about the int8 scores.
	var cq float64
	for i, c := range x.q4Centre {
		cq += float64(c) * float64(uq[i])
	}
	for i := range rows {
		rows[i].Score = rows[i].Score*qq.unit + float32(cq)
	}
	step := func(r int) float32 {
		if steps != nil {
			return steps[r]
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(x.q4At(first + r)[f+4:]))
	}
	return x.rankInt8(uq, rows, cands, first, step)
}

// QuickMargin is the margin, in steps of a row's codes, by which a
// row's 4-bit estimate must fall short of the cands-th best int8 score
// found so far for rankInt8 to stop: the estimate's error is the sum of
// the components' rounding errors times the query's, whose standard
// deviation is step/sqrt(12) (about 0.29 steps) for a unit query. With
// 2 steps and the default Quick, on 1M static-embedder rows, the int8
// scan's best 200 were all among the rows ranked for 181 of 200
// queries (0.9994 of them over all, their best 100 always; BENCHMARKS.md,
// "The 1M vector scan: a 4-bit first pass").
const QuickMargin = 2

// rankInt8 scores the rows rows (counting from first, each with its
// 4-bit estimate of the int8 score; step gives the step of its codes) by their int8 rows, read by pread,
// exactly as scanQuant scores them, best estimate first: the first cands,
// then rankBatch at a time up to the first whose estimate falls below
// the cands-th best int8 score so far by more than QuickMargin steps of
// its codes. It returns the best cands in no order.
func (x *Index) rankInt8(uq []float32, rows []vecscan.Hit, cands, first int, step func(r int) float32) ([]vecscan.Hit, error) {
	q16, qscale := quantizeQuery(uq, x.opts.Dims)
	vecscan.Sort(rows)
	// top holds the best cands unscaled int8 scores so far, a min-heap:
	// top[0] is the cands-th best once it is full.
	top := make([]float32, 0, cands)
	done := 0 // rows[:done] hold their int8 scores, unscaled
	for done < len(rows) {
		end := min(len(rows), done+max(rankBatch, cands-done))
		if len(top) == cands {
			for i := done; i < end; i++ {
				if rows[i].Score+QuickMargin*step(rows[i].Row) < top[0]*qscale {
					end = i
					break
				}
			}
		}
		if end == done {
			break
		}
		if err := x.scoreInt8(q16, rows[done:end], first); err != nil {
			return nil, err
		}
		for _, h := range rows[done:end] {
			switch {
			case len(top) < cands:
				top = append(top, h.Score)
				siftUp(top)
			case h.Score > top[0]:
				top[0] = h.Score
				siftDown(top)
			}
		}
		done = end
	}
	// Selected on the unscaled scores, as scanQuant's heap selects.
	scored := rows[:done]
	vecscan.Sort(scored)
	best := scored[:min(cands, len(scored))]
	for i := range best {
		best[i].Score *= qscale
	}
	return best, nil
}

// rankBatch is the rows rankInt8 reads between two checks of its stop.
const rankBatch = 64

// scoreInt8 sets the score of each of rows (counting from first) to its
// unscaled int8 score, reading the int8 rows by pread, half of them on
// another goroutine when there are enough: the reads are system calls
// and the scan's other core is idle meanwhile.
func (x *Index) scoreInt8(q16 []int16, rows []vecscan.Hit, first int) error {
	if len(rows) < 16 {
		return x.scoreInt8Run(q16, rows, first)
	}
	half := len(rows) / 2
	var wg sync.WaitGroup
	var errB error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer recoverTo("search", &errB) // the caller's recover does not reach here
		errB = x.scoreInt8Run(q16, rows[half:], first)
	}()
	errA := x.scoreInt8Run(q16, rows[:half], first)
	wg.Wait()
	return errors.Join(errA, errB)
}

func (x *Index) scoreInt8Run(q16 []int16, rows []vecscan.Hit, first int) error {
	dims, rb := x.opts.Dims, x.rowBytes()
	buf := make([]byte, rb)
	out := make([]float32, 1)
	for i := range rows {
		r := first + rows[i].Row
		if _, err := x.matF.ReadAt(buf, int64(pageSize+r*rb)); err != nil {
			return fmt.Errorf("%w: int8 row %d: %v", ErrCorrupt, r, err)
		}
		if dot8.DotsScaled(q16, buf, rb, dims, out) != 1 {
			return fmt.Errorf("%w: int8 row %d short", ErrCorrupt, r)
		}
		rows[i].Score = out[0]
	}
	return nil
}

// siftUp restores the min-heap h after an append.
func siftUp(h []float32) {
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

// siftDown restores the min-heap h after its root grew.
func siftDown(h []float32) {
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h) && h[l] < h[m] {
			m = l
		}
		if l+1 < len(h) && h[l+1] < h[m] {
			m = l + 1
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// preadIDs sets hits[i] to the id of row first+rows[i].Row, read by
// pread (the slots of rows within a page of each other in one read), and
// rows[i]'s score.
func (x *Index) preadIDs(rows []vecscan.Hit, first int, hits []engine.VectorHit) error {
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return rows[a].Row - rows[b].Row })
	gap := pageSize / slotSize
	var buf []byte
	for i := 0; i < len(order); {
		j := i + 1
		for j < len(order) && rows[order[j]].Row-rows[order[j-1]].Row <= gap {
			j++
		}
		lo, hi := first+rows[order[i]].Row, first+rows[order[j-1]].Row+1
		if need := (hi - lo) * slotSize; cap(buf) < need {
			buf = make([]byte, need)
		}
		b := buf[:(hi-lo)*slotSize]
		if _, err := x.slotsF.ReadAt(b, int64(pageSize+lo*slotSize)); err != nil {
			return fmt.Errorf("vecfile: search: %w: slots %d-%d: %v", ErrCorrupt, lo, hi, err)
		}
		for ; i < j; i++ {
			h := rows[order[i]]
			hits[order[i]] = engine.VectorHit{ID: slotID(b[(first+h.Row-lo)*slotSize:]), Score: h.Score}
		}
	}
	return nil
}
