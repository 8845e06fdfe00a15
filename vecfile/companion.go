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
// The companion is derived data: the matrix and the slots stay the truth.
// Its header names the matrix file (its identity) and the slots header
// generation it was saved with; Save syncs it before the slots header, so
// rows changed after the last Save are rows the change-log replay writes
// again. Open regenerates it from the matrix when it is missing, belongs
// to another matrix or generation (a crash in a compaction, or a write by
// a binary that did not keep it), or a row fails its checksum; a
// read-only Open that finds it unusable scans in float32 instead.
//
//	int8    a 4 KiB header page (magic, dims, matrix identity, generation,
//	        CRC), then one row of compStride(dims) bytes per matrix row:
//	        dims int8 components, the float32 scale (the value of 127),
//	        a CRC-32C of both, zeros up to a multiple of 16 bytes
const (
	compName      = "int8"
	compHeaderLen = 36
)

var compMagic = [8]byte{'h', 'm', 'o', 'v', 'e', 'c', 'q', '1'}

// compStride is the bytes per companion row: room for the components, the
// scale and the checksum, rounded up to the kernel's 16-byte chunks (the
// kernel reads whole chunks; the query's padding is zero, so the scale
// and checksum bytes it reads count for nothing).
func compStride(dims int) int { return (dims + 8 + 15) &^ 15 }

// compChunks is the components the kernel reads per row: dims rounded up
// to 16.
func compChunks(dims int) int { return (dims + 15) &^ 15 }

// quantizeBytes writes the companion row of a unit vector, given as the
// little-endian bytes of its float32 components, into dst (compStride
// bytes): each component as round(v/m*127), m the largest magnitude,
// then the scale m/127 and the checksum.
func quantizeBytes(row []byte, dst []byte) {
	quantizeFunc(len(row)/4, func(i int) float32 {
		return math.Float32frombits(binary.LittleEndian.Uint32(row[4*i:]))
	}, dst)
}

func quantizeFunc(dims int, at func(int) float32, dst []byte) {
	var m float32
	for i := range dims {
		m = max(m, float32(math.Abs(float64(at(i)))))
	}
	clear(dst)
	if m > 0 {
		inv := 127 / m
		for i := range dims {
			dst[i] = byte(int8(max(-127, min(127, math.Round(float64(at(i)*inv))))))
		}
	}
	binary.LittleEndian.PutUint32(dst[dims:], math.Float32bits(m/127))
	binary.LittleEndian.PutUint32(dst[dims+4:], crc32.Checksum(dst[:dims+4], castagnoli))
}

// compRowOK reports whether a companion row is intact.
func compRowOK(b []byte, dims int) bool {
	return binary.LittleEndian.Uint32(b[dims+4:]) == crc32.Checksum(b[:dims+4], castagnoli)
}

// compScale is the scale of a companion row.
func compScale(b []byte, dims int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[dims:]))
}

type compHeader struct {
	dims     int
	matrixID uint64
	gen      uint64
}

func (h compHeader) encode() []byte {
	b := make([]byte, compHeaderLen)
	copy(b, compMagic[:])
	binary.LittleEndian.PutUint32(b[8:], formatVer)
	binary.LittleEndian.PutUint32(b[12:], uint32(h.dims))
	binary.LittleEndian.PutUint64(b[16:], h.matrixID)
	binary.LittleEndian.PutUint64(b[24:], h.gen)
	binary.LittleEndian.PutUint32(b[32:], crc32.Checksum(b[:32], castagnoli))
	return b
}

func decodeCompHeader(b []byte) (compHeader, bool) {
	if len(b) < compHeaderLen || [8]byte(b[:8]) != compMagic ||
		binary.LittleEndian.Uint32(b[8:]) != formatVer ||
		crc32.Checksum(b[:32], castagnoli) != binary.LittleEndian.Uint32(b[32:]) {
		return compHeader{}, false
	}
	return compHeader{
		dims:     int(binary.LittleEndian.Uint32(b[12:])),
		matrixID: binary.LittleEndian.Uint64(b[16:]),
		gen:      binary.LittleEndian.Uint64(b[24:]),
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

// openComp opens the companion of an index whose matrix and slots are
// open and counted (x.n, x.gen, x.matrixID set), regenerating it if it is
// stale or damaged. An index that keeps none removes a stale one, so that
// a later Open with ScanInt8 rebuilds it instead of trusting old rows.
func (x *Index) openComp() error {
	p := filepath.Join(x.dir, compName)
	if !x.opts.wantComp() {
		if !x.opts.ReadOnly {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return nil
	}
	flag := os.O_RDWR | os.O_CREATE
	if x.opts.ReadOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(p, flag, 0o600)
	if errors.Is(err, os.ErrNotExist) && x.opts.ReadOnly {
		return nil // written by a binary without it: scan in float32
	}
	if err != nil {
		return err
	}
	x.compF = f
	st, err := f.Stat()
	if err != nil {
		return err
	}
	stride := compStride(x.opts.Dims)
	need := pageSize + x.n*stride
	page := make([]byte, compHeaderLen)
	_, rerr := io.ReadFull(io.NewSectionReader(f, 0, compHeaderLen), page)
	h, ok := decodeCompHeader(page)
	valid := rerr == nil && ok && h.dims == x.opts.Dims && h.matrixID == x.matrixID && h.gen == x.gen &&
		st.Size() >= int64(need)
	if x.opts.ReadOnly && !valid {
		return x.dropComp()
	}
	if err := x.mapComp(need); err != nil {
		return err
	}
	var bad []int
	if valid && !x.opts.SkipVerify {
		for r := range x.n {
			if !compRowOK(x.compAt(r), x.opts.Dims) {
				bad = append(bad, r)
			}
		}
	}
	switch {
	case valid && len(bad) == 0:
		return nil
	case x.opts.ReadOnly:
		return x.dropComp()
	case !valid:
		bad = bad[:0]
		for r := range x.n {
			bad = append(bad, r)
		}
	}
	return x.regenComp(bad)
}

// regenComp rewrites the companion rows rows from the matrix, then its
// header, and syncs it.
func (x *Index) regenComp(rows []int) error {
	stride := compStride(x.opts.Dims)
	buf := make([]byte, 0, 4096*stride)
	start := -1
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		err := writeAt(x.compF, x.comp, buf, pageSize+start*stride)
		buf, start = buf[:0], -1
		return err
	}
	q := make([]byte, stride)
	for _, r := range rows {
		if start < 0 || r != start+len(buf)/stride || len(buf) == cap(buf) {
			if err := flush(); err != nil {
				return err
			}
			start = r
		}
		quantizeBytes(x.rowAt(r), q)
		buf = append(buf, q...)
	}
	if err := flush(); err != nil {
		return err
	}
	return x.writeCompHeader(x.gen)
}

// writeCompHeader writes the companion header naming generation gen and
// syncs the companion.
func (x *Index) writeCompHeader(gen uint64) error {
	h := compHeader{dims: x.opts.Dims, matrixID: x.matrixID, gen: gen}
	if err := writeAt(x.compF, x.comp, h.encode(), 0); err != nil {
		return err
	}
	return x.compF.Sync()
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
	stride := compStride(dims)
	q16, _ := quantizeQuery(uq, dims)
	cands := max(x.opts.Rescore*k, RescoreMin)
	rows, err := vecscan.ScanFunc(n, cands, keep, func(lo, hi int, h *vecscan.Heap) {
		out := make([]int32, scanBlock)
		floor := h.Floor()
		for b := lo; b < hi; b += scanBlock {
			base := pageSize + (first+b)*stride
			m := dot8.Dots(q16, x.comp[base:], stride, out[:min(scanBlock, hi-b)])
			if m < min(scanBlock, hi-b) {
				panic("companion shorter than its rows") // turned into ErrFault by ScanFunc
			}
			// The scales, one per row at the same offset: the rows the
			// kernel just read, so in cache.
			scales := x.comp[base+dims : base+(m-1)*stride+dims+4]
			for i, d := range out[:m] {
				s := float32(d) * math.Float32frombits(binary.LittleEndian.Uint32(scales[i*stride:]))
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
	slices.SortFunc(rows, vecscan.Compare)
	return rows[:min(k, len(rows))], nil
}
