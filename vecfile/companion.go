package vecfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/hmo-dev/hmo/internal/dot8"
	"github.com/hmo-dev/hmo/internal/vecscan"
)

// The int8 companion of a Float32 index (Options.Scan ScanInt8): a third
// file, "int8", holding every row of the matrix quantised to int8 with a
// per-row scale. The scan ranks all rows with it (a quarter of the bytes
// the float32 matrix has, and an integer SIMD kernel, internal/dot8) and
// rescores the best few exactly from the matrix, so the scores a search
// returns are always the float32 ones.
//
// The companion is derived data: the matrix and the slots stay the truth,
// and the companion is never synced. Each companion row carries the
// checksum of the slot it was made from (the slot's CRC covers the
// float32 row) and a checksum of its own, so Open tells, row by row, a
// companion row that is torn, lost in a crash or left from an older
// vector (a crash before the row reached the disk, a binary that did not
// keep the companion) and regenerates it from the matrix. A header that
// names another matrix file (a crash in a compaction) or other dims
// regenerates them all; a read-only Open that finds anything stale scans
// in float32 instead.
//
//	int8    a 4 KiB header page (magic, version, dims, matrix identity,
//	        CRC), then one row of compStride(dims) bytes per matrix row:
//	        dims int8 components, the float32 scale (the value of 127),
//	        the CRC of the slot it was made from, a CRC-32C of those, and
//	        zeros up to a multiple of 16 bytes
const (
	compName      = "int8"
	compHeaderLen = 28
)

var compMagic = [8]byte{'h', 'm', 'o', 'v', 'e', 'c', 'q', '1'}

// compStride is the bytes per companion row: room for the components, the
// scale and the two checksums, rounded up to the kernel's 16-byte chunks
// (the kernel reads whole chunks; the query's padding is zero, so the
// bytes past dims count for nothing).
func compStride(dims int) int { return (dims + 12 + 15) &^ 15 }

// compChunks is the components the kernel reads per row: dims rounded up
// to 16.
func compChunks(dims int) int { return (dims + 15) &^ 15 }

// quantizeRow writes into dst (compStride bytes) the companion row of a
// unit vector given as the little-endian bytes of its float32 components:
// each component as round(v/m*127), m the largest magnitude, then the
// scale m/127; scratch holds dims floats. sealComp completes it.
func quantizeRow(row []byte, scratch []float32, dst []byte) {
	dims := len(row) / 4
	v := scratch[:dims]
	var m float32
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(row[4*i:]))
		m = max(m, float32(math.Abs(float64(v[i]))))
	}
	clear(dst)
	if m > 0 {
		inv := 127 / m
		for i, c := range v {
			dst[i] = byte(int8(max(-127, min(127, math.Round(float64(c*inv))))))
		}
	}
	binary.LittleEndian.PutUint32(dst[dims:], math.Float32bits(m/127))
}

// sealComp records in the companion row b the checksum of the slot slot
// it was made from, and its own checksum.
func sealComp(b, slot []byte, dims int) {
	copy(b[dims+4:dims+8], slot[40:44])
	binary.LittleEndian.PutUint32(b[dims+8:], crc32.Checksum(b[:dims+8], castagnoli))
}

// compRowOK reports whether the companion row b is intact and was made
// from the slot's current row.
func compRowOK(b, slot []byte, dims int) bool {
	return [4]byte(b[dims+4:dims+8]) == [4]byte(slot[40:44]) &&
		binary.LittleEndian.Uint32(b[dims+8:]) == crc32.Checksum(b[:dims+8], castagnoli)
}

type compHeader struct {
	dims     int
	matrixID uint64
}

func (h compHeader) encode() []byte {
	b := make([]byte, compHeaderLen)
	copy(b, compMagic[:])
	binary.LittleEndian.PutUint32(b[8:], formatVer)
	binary.LittleEndian.PutUint32(b[12:], uint32(h.dims))
	binary.LittleEndian.PutUint64(b[16:], h.matrixID)
	binary.LittleEndian.PutUint32(b[24:], crc32.Checksum(b[:24], castagnoli))
	return b
}

func decodeCompHeader(b []byte) (compHeader, bool) {
	if len(b) < compHeaderLen || [8]byte(b[:8]) != compMagic ||
		binary.LittleEndian.Uint32(b[8:]) != formatVer ||
		crc32.Checksum(b[:24], castagnoli) != binary.LittleEndian.Uint32(b[24:]) {
		return compHeader{}, false
	}
	return compHeader{
		dims:     int(binary.LittleEndian.Uint32(b[12:])),
		matrixID: binary.LittleEndian.Uint64(b[16:]),
	}, true
}

// wantComp reports whether this index keeps a companion.
func (o *Options) wantComp() bool { return o.Format == Float32 && o.Scan == ScanInt8 }

// compAt is the companion row of row r. The caller holds mu or applyMu.
func (x *Index) compAt(r int) []byte {
	st := compStride(x.opts.Dims)
	off := pageSize + r*st
	return x.comp[off : off+st]
}

// openDerived opens the derived file name of the index, creating it in a
// writable index; nil when the index does not want it (a writable index
// removes it then) or, in a read-only index, when it is absent.
func (x *Index) openDerived(name string, want bool) (*os.File, error) {
	p := filepath.Join(x.dir, name)
	if !want {
		if !x.opts.ReadOnly {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
		return nil, nil
	}
	flag := os.O_RDWR | os.O_CREATE
	if x.opts.ReadOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(p, flag, 0o600)
	if errors.Is(err, os.ErrNotExist) && x.opts.ReadOnly {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// openComp opens the companion of an index whose matrix and slots are
// open and counted (x.n and x.matrixID set), regenerating the rows that
// are stale or damaged. An index that keeps none removes it, so that a
// later Open with ScanInt8 rebuilds it rather than read rows it did not
// keep up to date (their slot checksums would tell too).
func (x *Index) openComp() error {
	// None in a read-only index: written by a binary without it; scan
	// in float32.
	f, err := x.openDerived(compName, x.opts.wantComp())
	if f == nil || err != nil {
		return err
	}
	x.compF = f
	st, err := f.Stat()
	if err != nil {
		return err
	}
	dims := x.opts.Dims
	need := pageSize + x.n*compStride(dims)
	page := make([]byte, compHeaderLen)
	_, rerr := io.ReadFull(io.NewSectionReader(f, 0, compHeaderLen), page)
	h, ok := decodeCompHeader(page)
	valid := rerr == nil && ok && h.dims == dims && h.matrixID == x.matrixID && st.Size() >= int64(need)
	if x.opts.ReadOnly && !valid {
		return x.dropComp()
	}
	if err := x.mapComp(need); err != nil {
		return err
	}
	var bad []int
	for r := range x.n {
		if !valid || !compRowOK(x.compAt(r), x.slotAt(r), dims) {
			if x.opts.ReadOnly {
				return x.dropComp()
			}
			bad = append(bad, r)
		}
	}
	if len(bad) > 0 || !valid {
		return x.regenComp(bad)
	}
	return nil
}

// regenComp rewrites the companion rows rows (increasing) from the
// matrix, then the header.
func (x *Index) regenComp(rows []int) error {
	dims := x.opts.Dims
	scratch := make([]float32, dims)
	err := x.regenRows(rows, x.compF, x.comp, compStride(dims), func(r int, row, out []byte) {
		quantizeRow(row, scratch, out)
		sealComp(out, x.slotAt(r), dims)
	})
	if err != nil {
		return err
	}
	h := compHeader{dims: dims, matrixID: x.matrixID}
	return writeAt(x.compF, x.comp, h.encode(), 0)
}

// regenRows rewrites the rows rows (increasing) of a derived file (f,
// mapped as mapping, stride bytes a row) from the matrix, read by pread
// in runs of consecutive rows so that its pages stay out of the resident
// set; derive writes the derived row of matrix row r into out. A matrix
// row that cannot be read is ErrCorrupt.
func (x *Index) regenRows(rows []int, f *os.File, mapping []byte, stride int, derive func(r int, row, out []byte)) error {
	rb := x.rowBytes()
	const run = 1024
	fbuf := make([]byte, run*rb)
	obuf := make([]byte, run*stride)
	for len(rows) > 0 {
		// The longest run of consecutive rows, up to run.
		m := 1
		for m < len(rows) && m < run && rows[m] == rows[0]+m {
			m++
		}
		first := rows[0]
		if _, err := x.matF.ReadAt(fbuf[:m*rb], int64(pageSize+first*rb)); err != nil {
			return fmt.Errorf("%w: rows %d-%d: %v", ErrCorrupt, first, first+m, err)
		}
		for i := range m {
			derive(first+i, fbuf[i*rb:(i+1)*rb], obuf[i*stride:(i+1)*stride])
		}
		if err := writeAt(f, mapping, obuf[:m*stride], pageSize+first*stride); err != nil {
			return err
		}
		rows = rows[m:]
	}
	return nil
}

// mapComp maps the companion whole, growing it to at least size bytes.
func (x *Index) mapComp(size int) error {
	return mapOne(x.compF, size, &x.comp, x.opts.ReadOnly)
}

// dropComp closes the companion: searches scan the matrix in float32.
func (x *Index) dropComp() error {
	err := errors.Join(unmap(x.comp), x.compF.Close())
	x.comp, x.compF = nil, nil
	if err != nil {
		return fmt.Errorf("vecfile: companion: %w", err)
	}
	return nil
}

// scanBlock is the rows the int8 scan hands the kernel at a time.
const scanBlock = 256

// quantizeQuery returns the unit query v as int16 components, padded with
// zeros to whole kernel chunks, and the value of one unit: v[i] is about
// q[i]*scale. The largest component is dot8.QueryMax(dims), so the sums
// cannot overflow.
func quantizeQuery(v []float32, dims int) ([]int16, float32) {
	var m float32
	for _, c := range v {
		m = max(m, float32(math.Abs(float64(c))))
	}
	q := make([]int16, compChunks(dims))
	if m == 0 {
		return q, 0
	}
	qmax := float32(dot8.QueryMax(dims))
	for i, c := range v {
		q[i] = int16(math.Round(float64(c / m * qmax)))
	}
	return q, m / qmax
}

// scanInt8 is the ScanInt8 search of the n rows from first: every row
// ranked by its companion row, then the best max(Rescore*k, RescoreMin)
// rescored exactly from the matrix, best first. keep and the rows it
// returns count from first. The caller holds mu for reading.
func (x *Index) scanInt8(uq []float32, k, first, n int, keep func(int) bool) ([]vecscan.Hit, error) {
	dims := x.opts.Dims
	rows, err := x.scanQuant(x.comp, uq, max(x.opts.Rescore*k, RescoreMin), first, n, keep)
	if err != nil {
		return nil, err
	}
	// The candidates' float32 rows are read with pread, not through the
	// mapping: the matrix pages then stay out of the process's resident
	// set (the scan itself touches only the companion's), at about a
	// microsecond per candidate.
	slices.SortFunc(rows, func(a, b vecscan.Hit) int { return a.Row - b.Row })
	buf := make([]byte, dims*4)
	v := make([]float32, dims)
	for i, h := range rows {
		if _, err := x.matF.ReadAt(buf, int64(pageSize+(first+h.Row)*dims*4)); err != nil {
			return nil, fmt.Errorf("%w: rescore: %v", ErrCorrupt, err)
		}
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
		}
		rows[i].Score = vecscan.Dot(uq, v)
	}
	vecscan.Sort(rows)
	return rows[:min(k, len(rows))], nil
}

// scanQuant ranks the n rows from first of data (companion rows, stride
// compStride, from the header page on: the companion file, or the
// matrix of an Int8Rescore index) by their int8 dot product with the
// unit query uq and returns the best cands, in no order, with scores
// approximating the cosine. keep and the rows it returns count from
// first. The caller holds mu for reading.
func (x *Index) scanQuant(data []byte, uq []float32, cands, first, n int, keep func(int) bool) ([]vecscan.Hit, error) {
	dims := x.opts.Dims
	stride := compStride(dims)
	q16, qscale := quantizeQuery(uq, dims)
	rows, err := vecscan.ScanFunc(n, cands, keep, func(lo, hi int, h *vecscan.Heap) {
		out := make([]float32, scanBlock)
		floor := h.Floor()
		for b := lo; b < hi; b += scanBlock {
			base := pageSize + (first+b)*stride
			// Each row's score: its dot product with the query times
			// its scale (kept in the row, after the components).
			m := dot8.DotsScaled(q16, data[base:], stride, dims, out[:min(scanBlock, hi-b)])
			if m < min(scanBlock, hi-b) {
				panic("int8 rows shorter than their count") // turned into ErrFault by ScanFunc
			}
			for i, s := range out[:m] {
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
	for i := range rows {
		rows[i].Score *= qscale
	}
	return rows, err
}
