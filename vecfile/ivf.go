package vecfile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/dot4"
	"github.com/hmo-dev/hmo/internal/dot8"
	"github.com/hmo-dev/hmo/internal/floatscan"
	"github.com/hmo-dev/hmo/internal/vecscan"
)

// The partition of the 4-bit rows (Options.PartitionAbove): a fourth
// derived file, "ivf", that holds the q4 rows of the matrix again,
// grouped into lists by their nearest centroid (an inverted file: the
// centroids are Euclidean k-means, in two levels, of a sample of
// ivfSample rows a list, trained on their 4-bit codes; buildIVF). The
// recall against the exact scan for the lists and probes is measured in
// TestIVFCurve and BENCHMARKS.md. An unfiltered search ranks the centroids by their
// dot product with the query and scans, with the 4-bit kernel, only the
// rows of the Probes nearest lists, then the rows the partition does not
// hold: those appended after it was built (the tail, rows at or past its
// row count) and those rewritten since (a replacement, a deletion, an
// entry found stale at Open), read from the q4 file. What the pass keeps
// goes to the int8 ranking as from the full 4-bit scan (quick.go). So the
// partition only decides which rows are scanned: a row of a list not
// probed is not found. A filtered search (scope, session, time) probes
// the same lists, then widens, nearest lists first, until a widening
// changes none of its best candidates: a selective filter leaves few of
// its rows in the nearest lists. One whose filter passes fewer than
// ivfFilterMin of a sample of the rows, or that would widen past
// ivfFilterShare of them, scans every q4 row, as SearchAfter does.
//
// Like the q4 file it is derived data, rebuilt from the q4 rows; unlike
// it, it is written once, at a build, and synced before the header that
// vouches for it (a crash during the build leaves no valid header).
// Open checks the header, the centroids and a checksum of the rest, read
// in order by pread, and compares the slot CRC of each row at the build,
// kept in the file, with its slot's: a row changed since (a replacement,
// a deletion) is scanned from the q4 file, as are the rows Apply
// rewrites while the index is open. A header, centroids or body that do
// not check, another matrix or centre, a row listed twice, or more rows
// outside the partition than a tenth of those in it rebuilds the file
// after a writable Open (a read-only one scans every q4 row instead): in
// the background (ivfBuild), so that Open returns at once; every q4 row
// is scanned until the build installs the partition, and Close or
// Compact stop it (its file, with no header yet, is built again by the
// next writable Open). The build reads the q4 rows by pread, a run at a
// time, and holds its sample and about 10 bytes a row. FinishBuilds,
// at the end of a long write, builds what the next Open would and waits
// for it.
//
//	ivf     a 4 KiB header page (magic, version, dims, matrix identity,
//	        lists, rows covered, entries, CRC of the meta region, CRC of
//	        the body, CRC), then the meta region: the centre of the q4
//	        rows (dims float32), the centroids (lists x dims float32) and
//	        where each list starts (lists+1 uint32 entry positions); from
//	        the next page the body: the row of each entry (uint32, in
//	        list order), the slot CRC of each row covered at the build
//	        (uint32, in row order), and from the next page the entries,
//	        copies of their rows' q4 rows, q4Stride(dims) bytes each, in
//	        list order
const (
	ivfName      = "ivf"
	ivfHeadBytes = 48
	// ivfTailShare is the share of the partition's rows that may sit
	// outside it (appended or rewritten since the build) before Open
	// rebuilds it: they are scanned in full by every search.
	ivfTailShare = 0.1
	// ivfSample is the sampled rows per list the centroids are trained on.
	ivfSample = 32
	// ivfIters is the k-means rounds over the sample.
	ivfIters = 8
	// ivfGroups is the nearest groups of centroids among whose lists a
	// row's nearest is looked for at the build.
	ivfGroups = 2
	// ivfRefine is the share of the rows, farthest from their list,
	// that the build assigns among all lists.
	ivfRefine = 0.1
	// ivfMaxLists bounds the lists of a partition.
	ivfMaxLists = 1 << 16
)

var ivfMagic = [8]byte{'h', 'm', 'o', 'v', 'e', 'c', 'p', '1'}

// The partition of the int8 rows (Options.Int8PartitionAbove) is the
// same file, named "ivf8", for an Int8Rescore index that keeps no q4
// file: its entries are copies of the int8 rows of the matrix
// (compStride bytes each), its centre is zero, its centroids are
// trained and its rows assigned with the int8 kernel (dot8), and a
// search scans the entries of the probed lists with dot8 straight into
// the caller's candidates (scanIVF8). An index keeps at most one of the
// two files; Open removes the other.
const ivf8Name = "ivf8"

var ivf8Magic = [8]byte{'h', 'm', 'o', 'v', 'e', 'c', 'p', '8'}

// ivfHeader is the ivf file's header.
type ivfHeader struct {
	int8        bool // of the int8 rows (ivf8Magic)
	dims, lists int
	rows        int // rows [0, rows) were live in it or dead at the build
	entries     int // rows held: the live ones of [0, rows)
	matrixID    uint64
	metaCRC     uint32
	bodyCRC     uint32 // of the rows, slot CRCs and entries regions
}

func (h *ivfHeader) encode() []byte {
	b := make([]byte, ivfHeadBytes)
	copy(b, ivfMagic[:])
	if h.int8 {
		copy(b, ivf8Magic[:])
	}
	binary.LittleEndian.PutUint32(b[8:], formatVer)
	binary.LittleEndian.PutUint32(b[12:], uint32(h.dims))
	binary.LittleEndian.PutUint64(b[16:], h.matrixID)
	binary.LittleEndian.PutUint32(b[24:], uint32(h.lists))
	binary.LittleEndian.PutUint32(b[28:], uint32(h.rows))
	binary.LittleEndian.PutUint32(b[32:], uint32(h.entries))
	binary.LittleEndian.PutUint32(b[36:], h.metaCRC)
	binary.LittleEndian.PutUint32(b[40:], h.bodyCRC)
	binary.LittleEndian.PutUint32(b[44:], crc32.Checksum(b[:44], castagnoli))
	return b
}

// decodeIVFHeader reads the header page of an ivf file, of the int8
// rows if int8Rows (an ivf8 file). It never panics.
func decodeIVFHeader(b []byte, int8Rows bool) (ivfHeader, bool) {
	magic := ivfMagic
	if int8Rows {
		magic = ivf8Magic
	}
	if len(b) < ivfHeadBytes || [8]byte(b[:8]) != magic || binary.LittleEndian.Uint32(b[8:]) != formatVer ||
		crc32.Checksum(b[:44], castagnoli) != binary.LittleEndian.Uint32(b[44:]) {
		return ivfHeader{}, false
	}
	h := ivfHeader{
		int8:     int8Rows,
		dims:     int(binary.LittleEndian.Uint32(b[12:])),
		matrixID: binary.LittleEndian.Uint64(b[16:]),
		lists:    int(binary.LittleEndian.Uint32(b[24:])),
		rows:     int(binary.LittleEndian.Uint32(b[28:])),
		entries:  int(binary.LittleEndian.Uint32(b[32:])),
		metaCRC:  binary.LittleEndian.Uint32(b[36:]),
		bodyCRC:  binary.LittleEndian.Uint32(b[40:]),
	}
	if h.dims <= 0 || (!int8Rows && h.dims > q4MaxDims) || h.lists <= 0 || h.lists > ivfMaxLists || h.entries > h.rows {
		return ivfHeader{}, false
	}
	return h, true
}

// ivfLayout is where the regions of an ivf file of rows rows and entries
// entries of stride bytes start, and its size.
func ivfLayout(dims, lists, rows, entries, stride int) (meta, idx, crcs, ent, size int) {
	page := func(n int) int { return (n + pageSize - 1) / pageSize * pageSize }
	meta = pageSize
	idx = page(meta + 4*(dims+lists*dims+lists+1))
	crcs = idx + 4*entries
	ent = page(crcs + 4*rows)
	return meta, idx, crcs, ent, ent + entries*stride
}

// partition is an open ivf file. Its fields are set at Open and read
// under the index's mu; out and outRows change under its write lock.
type partition struct {
	int8      bool // of the int8 rows (an ivf8 file)
	stride    int  // the bytes of an entry
	f         *os.File
	m         []byte    // the file, mapped whole
	lists     int       // lists
	rows      int       // rows [0, rows) are held, each in one list, unless out or dead
	centroids []float32 // lists x dims, unit
	starts    []int     // list l holds entries [starts[l], starts[l+1])
	idx       []byte    // the row of each entry, uint32
	ent       []byte    // the entries
	out       []uint64  // bit r: row r < rows is scanned from the q4 file
	outRows   []int     // the rows of out, increasing at Open, then appended
}

// rowOf is the row of entry p.
func (p *partition) rowOf(e int) int { return int(binary.LittleEndian.Uint32(p.idx[4*e:])) }

func (p *partition) isOut(r int) bool { return p.out[r>>6]&(1<<(r&63)) != 0 }

// markOut takes row r out of the partition: its entry no longer holds
// its vector. The caller holds mu for writing (or has not published x).
func (p *partition) markOut(r int) {
	if r >= p.rows || p.isOut(r) {
		return
	}
	p.out[r>>6] |= 1 << (r & 63)
	p.outRows = append(p.outRows, r)
}

// wantIVF reports whether this index keeps a partition at Open: an ivf
// file beside its q4 file, or, without a q4 file, an ivf8 file
// (ivfCodeOf).
func (x *Index) wantIVF() bool {
	if strconv.IntSize != 64 {
		return false
	}
	if x.q4 != nil {
		return x.opts.PartitionAbove > 0 && x.live >= x.opts.PartitionAbove
	}
	return x.opts.Format == Int8Rescore && x.opts.Int8PartitionAbove > 0 && x.live >= x.opts.Int8PartitionAbove
}

// ivfCode is what a partition's entries are: the q4 rows (an ivf file)
// or, in an index with no q4 file, the int8 rows of the matrix (an ivf8
// file).
type ivfCode struct {
	int8   bool
	dims   int
	stride int       // the bytes of a row
	centre []float32 // the rows' centre: the q4 file's, or zero
	name   string    // the file
}

// ivfCodeOf is the code of the partition the index keeps now: of its q4
// rows when it has a q4 file, else of its int8 rows. The caller holds mu
// or applyMu, or has not published x.
func (x *Index) ivfCodeOf() ivfCode {
	dims := x.opts.Dims
	if x.q4F != nil {
		return ivfCode{dims: dims, stride: q4Stride(dims), centre: x.q4Centre, name: ivfName}
	}
	return ivfCode{int8: true, dims: dims, stride: compStride(dims), centre: make([]float32, dims), name: ivf8Name}
}

// otherName is the file of the other code, which the index removes.
func (c ivfCode) otherName() string {
	if c.int8 {
		return ivfName
	}
	return ivf8Name
}

// vector sets v to the row the entry b stands for.
func (c ivfCode) vector(b []byte, v []float32) {
	if !c.int8 {
		q4Vector(b, c.centre, v)
		return
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b[c.dims:]))
	for i := range v {
		v[i] = float32(int8(b[i])) * scale
	}
}

// openIVF opens the partition of an index whose q4 file is open and
// current, building it when it is missing, damaged, stale or holds too
// few of the rows, or removes it when the index keeps none. A read-only
// Open, or one without builds in the background (NoBackgroundBuild),
// that finds it unusable scans every q4 row.
func (x *Index) openIVF() error {
	code := x.ivfCodeOf()
	if _, err := x.openDerived(code.otherName(), false); err != nil {
		return err
	}
	f, err := x.openDerived(code.name, x.wantIVF())
	if f == nil || err != nil {
		return err
	}
	p, ok, err := x.loadIVF(f)
	if err == nil && !ok && !x.opts.ReadOnly && !x.opts.NoBackgroundBuild {
		// Built in the background (runBuild), once the caller has
		// published x; until then searches scan every q4 row.
		x.building = x.newBuild(f)
		return nil
	}
	if err != nil || !ok {
		if p != nil {
			err = errors.Join(err, unmap(p.m))
		}
		return errors.Join(err, f.Close())
	}
	x.part = p
	// Open read every entry through the mapping; a search reads only the
	// lists it probes, and the q4 file (or the matrix) only for the rows
	// outside them.
	_ = adviseAway(p.m)
	_ = adviseAway(x.q4)
	if p.int8 {
		_ = adviseAway(x.mat)
	}
	return nil
}

// ivfBuild is a build of the partition in the background: a writable
// Open that finds the ivf file unusable starts one (startBuild) and
// returns; until it installs the partition, searches scan every q4 row.
// It reads the rows as they were at Open (n, live, crcs) through a
// mapping of its own of the q4 file, so that Apply goes on meanwhile;
// the rows rewritten since are out of the partition it installs. Close
// and Compact stop it and wait for its goroutine (stopBuild).
type ivfBuild struct {
	f        *os.File      // the ivf file, the build's until it installs the partition
	code     ivfCode       // what the rows are
	src      *os.File      // the q4 file (or the matrix, for the int8 rows), open until the build returns
	slotsF   *os.File      // the slots file, open until the build returns
	n        int           // the rows at Open
	live     []uint64      // bit r: row r of [0, n) was live at Open
	nLive    int           // the live rows of [0, n)
	crcs     []byte        // the slot CRC of each row of [0, n) at Open (complemented by buildIVF for a row read otherwise), 4 bytes each
	stop     chan struct{} // closed to stop the build
	done     chan struct{} // closed when its goroutine has returned
	progress atomic.Int64  // the work done, of ivfWork(n)
	tick     chan struct{} // signalled (without blocking) as progress advances
	err      error         // why it installed no partition; set before done is closed
}

// advance adds work done to b's progress.
func (b *ivfBuild) advance(work int) {
	b.progress.Add(int64(work))
	select {
	case b.tick <- struct{}{}:
	default:
	}
}

// ivfWork is the work of a build of n rows, in the units of its
// progress: n for the training, and n for each of its three passes over
// the rows (the assignment, the farthest rows', the writing).
func ivfWork(n int) int64 { return 4 * int64(n) }

// isClosed reports whether c, if not nil, is closed.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// errBuildStopped is the error of a build stopped by stopBuild.
var errBuildStopped = errors.New("vecfile: ivf build stopped")

// ivfHook, set by tests only, is called by a build of the ivf file in
// dir at each stage: "start", and "written" (the body synced, the
// header not yet written); stop is closed when the build is asked to
// stop.
var ivfHook atomic.Pointer[func(dir, stage string, stop <-chan struct{})]

func (x *Index) hook(b *ivfBuild, stage string) {
	if h := ivfHook.Load(); h != nil {
		(*h)(x.dir, stage, b.stop)
	}
}

// newBuild is a build of the ivf file f from the rows as they are now.
// The caller holds applyMu, or has not published x.
func (x *Index) newBuild(f *os.File) *ivfBuild {
	code, src := x.ivfCodeOf(), x.q4F
	if code.int8 {
		src = x.matF
	}
	b := &ivfBuild{f: f, code: code, src: src, slotsF: x.slotsF, n: x.n, crcs: make([]byte, 4*x.n), live: make([]uint64, (x.n+63)/64),
		stop: make(chan struct{}), done: make(chan struct{}), tick: make(chan struct{}, 1)}
	for r := range x.n {
		s := x.slotAt(r)
		copy(b.crcs[4*r:], s[40:44])
		if slotFlags(s)&flagLive != 0 {
			b.live[r>>6] |= 1 << (r & 63)
			b.nLive++
		}
	}
	return b
}

// startBuild starts the build Open or a compaction prepared, if any. The
// caller has just made x, or holds applyMu and mu.
func (x *Index) startBuild() {
	if b := x.building; b != nil {
		go x.runBuild(b)
	}
}

// runBuild builds the ivf file of b and installs its partition, unless
// it is stopped or fails: then the index keeps scanning every q4 row,
// and the file, whose header is written last, is rebuilt at the next
// writable Open.
func (x *Index) runBuild(b *ivfBuild) {
	defer close(b.done)
	x.hook(b, "start")
	p, err := x.buildIVF(b)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.building = nil
	select {
	case <-b.stop:
		err = errors.Join(err, errBuildStopped)
	default:
	}
	if err == nil && x.closed {
		err = ErrClosed
	}
	if b.err = err; err != nil {
		if p != nil {
			_ = unmap(p.m)
		}
		_ = b.f.Close()
		return
	}
	// The rows rewritten since Open (a replacement, a deletion) are out:
	// their entries hold their rows as they were. Rows appended since are
	// past p.rows.
	for r := range p.rows {
		s := x.slotAt(r)
		if binary.LittleEndian.Uint32(b.crcs[4*r:]) != binary.LittleEndian.Uint32(s[40:44]) && slotFlags(s)&flagLive != 0 {
			p.markOut(r)
		}
	}
	x.part = p
	// As at Open: searches now read the lists they probe, the q4 file
	// (or the matrix) only for the rows outside them, and the slots of
	// their hits only.
	_ = adviseAway(p.m)
	_ = adviseAway(x.q4)
	if p.int8 {
		_ = adviseAway(x.mat)
	}
	_ = adviseAway(x.slots)
}

// stopBuild stops the build in the background, if any, and waits for
// its goroutine to return. The caller holds applyMu and, if locked, mu
// for writing, which it gives up while it waits.
func (x *Index) stopBuild(locked bool) {
	if !locked {
		x.mu.RLock()
	}
	b := x.building
	if !locked {
		x.mu.RUnlock()
	}
	if b == nil {
		return
	}
	close(b.stop)
	if locked {
		x.mu.Unlock()
		defer x.mu.Lock()
	}
	<-b.done
}

// FinishBuilds brings the index's derived files to what a writable Open
// of it would keep now, and waits for them (engine.IndexFinisher): the
// q4 file, built or rebuilt as Open would (Options.QuickAbove), and the
// partition of its rows (Options.PartitionAbove; without a q4 file, of
// the int8 rows: Options.Int8PartitionAbove), built in the
// background when there is none or the rows outside it are more than a
// tenth of those in it, until it is installed. It is for the end of a
// long write, an import: a build in the background is stopped by Close,
// so a store opened next only by short-lived commands would never finish
// it and its searches would scan every q4 row. progress, if not nil, is
// called from the caller's goroutine with the build's work done and its
// total as it advances. When ctx ends first it returns ctx's error, and
// the build goes on until Close stops it. Searches go on meanwhile,
// except while the q4 file is (re)built, and scan every q4 row until the
// partition is installed. A read-only index, or one that keeps neither
// file, returns nil at once.
func (x *Index) FinishBuilds(ctx context.Context, progress func(done, total int64)) (err error) {
	defer recoverTo("finish builds", &err)
	b, err := x.prepareBuild()
	if err != nil || b == nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-b.tick:
			if progress != nil {
				progress(b.progress.Load(), ivfWork(b.n))
			}
		case <-b.done:
			if b.err != nil {
				return fmt.Errorf("vecfile: build of the partition: %w", b.err)
			}
			if progress != nil {
				progress(ivfWork(b.n), ivfWork(b.n))
			}
			return nil
		}
	}
}

// prepareBuild (re)builds the q4 file if Open would, and starts a build
// of the partition if Open would, for FinishBuilds; it returns the build
// in the background, nil when there is none.
func (x *Index) prepareBuild() (*ivfBuild, error) {
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	if x.opts.ReadOnly {
		return nil, nil
	}
	if x.building != nil {
		return x.building, nil
	}
	if x.opts.wantQ4() && x.live >= x.opts.QuickAbove && (x.q4 == nil || 2*x.q4Built < x.live) {
		// As openQ4Rows: a new file, or a centre of too few of the rows.
		// Until the new header is written, the old one names too few.
		err := x.closeIVF()
		if err == nil && x.q4 == nil {
			err = x.openQ4Rows()
		} else if err == nil {
			err = x.buildQ4()
		}
		if err != nil {
			if x.q4F != nil {
				err = errors.Join(err, x.dropQ4()) // searches scan the int8 rows
			}
			return nil, fmt.Errorf("vecfile: q4 file: %w", err)
		}
		_ = adviseAway(x.q4)
		_ = adviseAway(x.slots)
	}
	if !x.wantIVF() {
		return nil, nil
	}
	if p := x.part; p != nil && float64(len(p.outRows)+x.n-p.rows) <= ivfTailShare*float64(p.rows) {
		return nil, nil
	}
	if err := x.closeIVF(); err != nil {
		return nil, err
	}
	code := x.ivfCodeOf()
	if _, err := x.openDerived(code.otherName(), false); err != nil {
		return nil, err
	}
	f, err := x.openDerived(code.name, true)
	if err != nil {
		return nil, err
	}
	x.building = x.newBuild(f)
	_ = adviseAway(x.slots) // read by newBuild
	x.startBuild()
	return x.building, nil
}

// waitBuild waits for the build in the background, if any, to return.
func (x *Index) waitBuild() {
	x.mu.RLock()
	b := x.building
	x.mu.RUnlock()
	if b != nil {
		<-b.done
	}
}

// Partitioned reports whether searches go through a partition: of the
// 4-bit rows (Options.PartitionAbove) or of the int8 rows
// (Options.Int8PartitionAbove); false until a build started by Open is
// installed. It is safe for concurrent use.
func (x *Index) Partitioned() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.part != nil
}

// loadIVF reads and checks the ivf file f: ok false when it cannot be
// used as it is (damaged, of another matrix or centre, or too many rows
// outside it).
func (x *Index) loadIVF(f *os.File) (*partition, bool, error) {
	dims, code := x.opts.Dims, x.ivfCodeOf()
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	page := make([]byte, pageSize)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, pageSize), page); err != nil {
		return nil, false, nil
	}
	h, ok := decodeIVFHeader(page, code.int8)
	if !ok || h.dims != dims || h.matrixID != x.matrixID || h.rows > x.n {
		return nil, false, nil
	}
	meta, idx, crcs, ent, size := ivfLayout(dims, h.lists, h.rows, h.entries, code.stride)
	if st.Size() < int64(size) {
		return nil, false, nil
	}
	mb := make([]byte, 4*(dims+h.lists*dims+h.lists+1))
	if _, err := f.ReadAt(mb, int64(meta)); err != nil || crc32.Checksum(mb, castagnoli) != h.metaCRC {
		return nil, false, nil
	}
	for i, c := range code.centre {
		if math.Float32bits(c) != binary.LittleEndian.Uint32(mb[4*i:]) {
			return nil, false, nil // made around another centre
		}
	}
	p := &partition{int8: code.int8, stride: code.stride, f: f, lists: h.lists, rows: h.rows, out: make([]uint64, (h.rows+63)/64)}
	p.centroids = make([]float32, h.lists*dims)
	for i := range p.centroids {
		p.centroids[i] = math.Float32frombits(binary.LittleEndian.Uint32(mb[4*(dims+i):]))
		if math.IsNaN(float64(p.centroids[i])) || math.IsInf(float64(p.centroids[i]), 0) {
			return nil, false, nil
		}
	}
	p.starts = make([]int, h.lists+1)
	sb := mb[4*(dims+h.lists*dims):]
	for l := range p.starts {
		p.starts[l] = int(binary.LittleEndian.Uint32(sb[4*l:]))
		if (l == 0 && p.starts[l] != 0) || (l > 0 && p.starts[l] < p.starts[l-1]) {
			return nil, false, nil
		}
	}
	if p.starts[h.lists] != h.entries {
		return nil, false, nil
	}
	// The body, read in order by pread (its pages stay out of the
	// resident set), against its checksum: the rows of the entries,
	// each at most once; the slot CRC of each row at the build, against
	// its slot now: a row changed since is scanned from the q4 file.
	held := make([]uint64, len(p.out))
	sum := uint32(0)
	good := true
	err = readRuns(f, idx, crcs-idx, func(off int, b []byte) {
		sum = crc32.Update(sum, castagnoli, b)
		for i := 0; i+4 <= len(b); i += 4 {
			r := int(binary.LittleEndian.Uint32(b[i:]))
			if r >= h.rows || held[r>>6]&(1<<(r&63)) != 0 {
				good = false
				return
			}
			held[r>>6] |= 1 << (r & 63)
		}
	})
	if err != nil || !good {
		return nil, false, nil
	}
	err = readRuns(f, crcs, 4*h.rows, func(off int, b []byte) {
		sum = crc32.Update(sum, castagnoli, b)
		for i := 0; i+4 <= len(b); i += 4 {
			r := (off + i) / 4
			s := x.slotAt(r)
			if binary.LittleEndian.Uint32(b[i:]) != binary.LittleEndian.Uint32(s[40:44]) && slotFlags(s)&flagLive != 0 {
				p.markOut(r)
			}
		}
	})
	if err != nil {
		return nil, false, nil
	}
	if err = readRuns(f, ent, size-ent, func(_ int, b []byte) { sum = crc32.Update(sum, castagnoli, b) }); err != nil || sum != h.bodyCRC {
		return nil, false, nil
	}
	for r := range h.rows {
		// Dead at the build and live now: its slot changed, and it is out.
		if held[r>>6]&(1<<(r&63)) == 0 && !p.isOut(r) && slotFlags(x.slotAt(r))&flagLive != 0 {
			return nil, false, nil
		}
	}
	if float64(len(p.outRows)+x.n-h.rows) > ivfTailShare*float64(h.rows) {
		return nil, false, nil
	}
	if p.m, err = mapFile(f, size); err != nil {
		return nil, false, err
	}
	p.idx, p.ent = p.m[idx:idx+4*h.entries], p.m[ent:size]
	return p, true, nil
}

// readRuns reads n bytes of f from off by pread, a MiB at a time, and
// calls fn with each run and its offset from off.
func readRuns(f *os.File, off, n int, fn func(at int, b []byte)) error {
	buf := make([]byte, min(n, 1<<20))
	for at := 0; at < n; at += len(buf) {
		b := buf[:min(len(buf), n-at)]
		if _, err := f.ReadAt(b, int64(off+at)); err != nil {
			return err
		}
		fn(at, b)
	}
	return nil
}

// buildRun is the q4 rows the build reads at a time, by pread into a
// buffer it reuses (1 MiB at 100 dims): it maps nothing, so the q4 file
// stays page cache, out of the process's resident set.
const buildRun = 16384

// buildWindow is the bytes of entries the build writes at a time: it
// reads the q4 file once per window, in row order, and copies each row
// of the window to its entry.
const buildWindow = 4 << 20

// buildWrite is the bytes of entries the build writes at a time. The
// page cache may hold a write in one folio, and a fault maps a whole
// folio: a search that probes a list of a few KiB would map the folio
// around it.
const buildWrite = 64 << 10

// isLive reports whether row r was live at Open.
func (b *ivfBuild) isLive(r int) bool { return b.live[r>>6]&(1<<(r&63)) != 0 }

// eachRun calls fn with the q4 rows [0, b.n) in order, buildRun at a
// time, read by pread into buf. It returns errBuildStopped once b.stop
// is closed, and fn's first error.
func (b *ivfBuild) eachRun(qs int, buf []byte, fn func(r0 int, rows []byte) error) error {
	per := len(buf) / qs
	for r0 := 0; r0 < b.n; r0 += per {
		if isClosed(b.stop) {
			return errBuildStopped
		}
		m := min(per, b.n-r0)
		if _, err := b.src.ReadAt(buf[:m*qs], int64(pageSize+r0*qs)); err != nil {
			return err
		}
		if err := fn(r0, buf[:m*qs]); err != nil {
			return err
		}
	}
	return nil
}

// writeRuns writes b at off in f, buildWrite bytes at a time.
func writeRuns(f *os.File, b []byte, off int) error {
	for o := 0; o < len(b); o += buildWrite {
		if _, err := f.WriteAt(b[o:min(len(b), o+buildWrite)], int64(off+o)); err != nil {
			return err
		}
	}
	return nil
}

// buildIVF trains the centroids on a sample of the live rows' q4 rows,
// assigns every live row to its nearest, writes the file b.f and returns
// its partition, mapped, with no row out. It reads the q4 rows of b by
// pread, buildRun at a time, so that what it holds is its sample and
// about 10 bytes a row (the slot CRCs, each row's list and distance to
// it): the q4 file is not mapped again. A q4 row rewritten meanwhile,
// read as it was not at Open, is written with a slot CRC that matches
// none, so that an Open scans it from the q4 file. It returns
// errBuildStopped once b.stop is closed.
func (x *Index) buildIVF(b *ivfBuild) (*partition, error) {
	code := b.code
	dims, qs := code.dims, code.stride
	f, n, nLive := b.f, b.n, b.nLive
	stopped := func() bool { return isClosed(b.stop) }
	run := make([]byte, buildRun*qs)
	listRows := x.opts.ListRows
	if code.int8 {
		listRows = x.opts.Int8ListRows
	}
	lists := max(1, min(ivfMaxLists, nLive/listRows))
	// The sample: evenly spaced live rows (the one of rank i*nLive/ns).
	ns := min(nLive, lists*ivfSample)
	if ns == 0 {
		return nil, errors.New("vecfile: ivf build: no live rows")
	}
	sample := make([]byte, ns*qs)
	got, rank := 0, 0
	err := b.eachRun(qs, run, func(r0 int, rows []byte) error {
		for j := range len(rows) / qs {
			if !b.isLive(r0 + j) {
				continue
			}
			if got < ns && got*nLive/ns == rank {
				copy(sample[got*qs:(got+1)*qs], rows[j*qs:])
				got++
			}
			rank++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if got < ns {
		return nil, errors.New("vecfile: ivf build: fewer live rows than at Open")
	}
	// Two levels: k-means of the sample into about sqrt(lists) groups,
	// then of each group's rows into its share of the lists. Each row
	// goes to the nearest list among the children of its two nearest
	// groups: 3% of the dot products of a search among all lists.
	groups := max(1, int(math.Round(math.Sqrt(float64(lists)))))
	gcents, glabels := kmeans(code, sample, ns, groups, b.stop)
	var cents []float32
	kids := make([]int, groups+1) // group g's lists: [kids[g], kids[g+1])
	members := make([][]int32, groups)
	for i, g := range glabels {
		members[g] = append(members[g], int32(i))
	}
	for g := range groups {
		if stopped() {
			return nil, errBuildStopped
		}
		m := len(members[g])
		k := min(m, max(1, int(math.Round(float64(lists)*float64(m)/float64(ns)))))
		kids[g+1] = kids[g] + k
		if k == 0 {
			continue
		}
		sub := make([]byte, m*qs)
		for j, i := range members[g] {
			copy(sub[j*qs:], sample[int(i)*qs:(int(i)+1)*qs])
		}
		c, _ := kmeans(code, sub, m, k, b.stop)
		cents = append(cents, c...)
	}
	sample, members, glabels = nil, nil, nil
	if stopped() {
		return nil, errBuildStopped
	}
	b.advance(n)
	lists = kids[groups]
	// Every row, a run at a time: its two nearest groups, then the
	// nearest list among their children. Dead rows are not held.
	gset := newCentSet(code, gcents, 0)
	kidSets := make([]*centSet, groups)
	for g := range groups {
		if kids[g] < kids[g+1] {
			kidSets[g] = newCentSet(code, cents[kids[g]*dims:kids[g+1]*dims], int32(kids[g]))
		}
	}
	all := make([]uint16, n) // each row's list (ivfMaxLists is 1<<16)
	best := make([]float32, n)
	for i := range best {
		best[i] = float32(math.Inf(-1))
	}
	const gather = buildRun * ivfGroups
	near := make([]int32, gather)
	gbuf := make([]byte, gather*qs)
	grows := make([]int32, gather)
	lab := make([]int32, gather)
	sc := make([]float32, gather)
	gstart := make([]int, groups+1)
	var jobs []assignJob
	err = b.eachRun(qs, run, func(r0 int, rows []byte) error {
		m := len(rows) / qs
		runAssign(code, []assignJob{{data: rows, n: m, cs: gset, top: ivfGroups, labels: near[:m*ivfGroups]}}, b.stop)
		// Gathered by group, groups in order: a row's two groups are
		// compared in the order of their index, as the lists of a group.
		clear(gstart)
		for j := range m {
			if b.isLive(r0 + j) {
				for _, g := range near[j*ivfGroups : (j+1)*ivfGroups] {
					if g >= 0 && kidSets[g] != nil {
						gstart[g+1]++
					}
				}
			}
		}
		for g := range groups {
			gstart[g+1] += gstart[g]
		}
		pos := slices.Clone(gstart[:groups])
		for j := range m {
			if b.isLive(r0 + j) {
				for _, g := range near[j*ivfGroups : (j+1)*ivfGroups] {
					if g >= 0 && kidSets[g] != nil {
						p := pos[g]
						pos[g]++
						copy(gbuf[p*qs:(p+1)*qs], rows[j*qs:])
						grows[p] = int32(r0 + j)
					}
				}
			}
		}
		jobs = jobs[:0]
		for g := range groups {
			if c := gstart[g+1] - gstart[g]; c > 0 {
				jobs = append(jobs, assignJob{data: gbuf[gstart[g]*qs:], n: c, cs: kidSets[g], top: 1, labels: lab[gstart[g]:], score: sc[gstart[g]:]})
			}
		}
		runAssign(code, jobs, b.stop)
		for p := range gstart[groups] {
			if r := grows[p]; sc[p] > best[r] {
				best[r], all[r] = sc[p], uint16(lab[p])
			}
		}
		b.advance(m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The rows farthest from their list (the lowest x.c - |c|^2/2: a
	// row is a unit vector) are those whose nearest list the two levels
	// miss most often, and a query's neighbours are often among them:
	// they look among all lists.
	thr, eq := farthest(best, b, int(ivfRefine*float64(nLive)))
	aset := newCentSet(code, cents, 0)
	fill := 0
	flush := func() {
		runAssign(code, []assignJob{{data: gbuf, n: fill, cs: aset, top: 1, labels: lab[:fill]}}, b.stop)
		for p := range fill {
			all[grows[p]] = uint16(lab[p])
		}
		fill = 0
	}
	err = b.eachRun(qs, run, func(r0 int, rows []byte) error {
		for j := range len(rows) / qs {
			r := r0 + j
			if s := best[r]; !b.isLive(r) || s > thr || (s == thr && eq == 0) {
				continue
			} else if s == thr {
				eq--
			}
			copy(gbuf[fill*qs:(fill+1)*qs], rows[j*qs:])
			grows[fill] = int32(r)
			if fill++; fill == gather {
				flush()
			}
		}
		b.advance(len(rows) / qs)
		return nil
	})
	if err != nil {
		return nil, err
	}
	flush()
	best, near, sc = nil, nil, nil
	if stopped() {
		return nil, errBuildStopped
	}
	starts := make([]int, lists+1)
	for r := range n {
		if b.isLive(r) {
			starts[all[r]+1]++
		}
	}
	for l := range lists {
		starts[l+1] += starts[l]
	}
	entries := starts[lists]
	// Write: the header last, after it has been made invalid.
	meta, idx, crcs, ent, size := ivfLayout(dims, lists, n, entries, qs)
	if err := f.Truncate(0); err != nil {
		return nil, err
	}
	if err := f.Truncate(int64(size)); err != nil {
		return nil, err
	}
	mb := make([]byte, 0, 4*(dims+lists*dims+lists+1))
	for _, c := range code.centre {
		mb = binary.LittleEndian.AppendUint32(mb, math.Float32bits(c))
	}
	for _, c := range cents {
		mb = binary.LittleEndian.AppendUint32(mb, math.Float32bits(c))
	}
	for _, s := range starts {
		mb = binary.LittleEndian.AppendUint32(mb, uint32(s))
	}
	if _, err := f.WriteAt(mb, int64(meta)); err != nil {
		return nil, err
	}
	// The entries in list order (a list's rows in row order), a window
	// at a time, each checked against its row's slot CRC at Open: a q4
	// row rewritten since (or read while it was) gets the complement. An
	// int8 row is checked against its slot as it is now, read by pread:
	// the slot's CRC covers the row.
	cb := b.crcs // runBuild compares them with the slots at the install
	win := max(1, buildWindow/qs)
	wbuf := make([]byte, win*qs)
	ib := make([]byte, 4*win)
	next := make([]int, lists)
	var sbuf []byte
	if code.int8 {
		sbuf = make([]byte, buildRun*slotSize)
	}
	sum := uint32(0)
	for w0 := 0; w0 < entries; w0 += win {
		w1 := min(entries, w0+win)
		copy(next, starts[:lists])
		err := b.eachRun(qs, run, func(r0 int, rows []byte) error {
			if sbuf != nil {
				if _, err := b.slotsF.ReadAt(sbuf[:len(rows)/qs*slotSize], int64(pageSize+r0*slotSize)); err != nil {
					return err
				}
			}
			for j := range len(rows) / qs {
				r := r0 + j
				if !b.isLive(r) {
					continue
				}
				e := next[all[r]]
				next[all[r]]++
				if e < w0 || e >= w1 {
					continue
				}
				q := wbuf[(e-w0)*qs : (e-w0+1)*qs]
				copy(q, rows[j*qs:])
				binary.LittleEndian.PutUint32(ib[4*(e-w0):], uint32(r))
				c := binary.LittleEndian.Uint32(cb[4*r:])
				var good bool
				if sbuf != nil {
					s := sbuf[j*slotSize : (j+1)*slotSize]
					good = binary.LittleEndian.Uint32(s[40:]) == c && rowOK(s, q)
				} else {
					good = binary.LittleEndian.Uint32(q[q4Fields(dims)+8:]) == q4CheckCRC(q, c, dims)
				}
				if !good {
					binary.LittleEndian.PutUint32(cb[4*r:], ^c)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if err := writeRuns(f, ib[:4*(w1-w0)], idx+4*w0); err != nil {
			return nil, err
		}
		if err := writeRuns(f, wbuf[:(w1-w0)*qs], ent+w0*qs); err != nil {
			return nil, err
		}
		sum = crc32.Update(sum, castagnoli, ib[:4*(w1-w0)])
		b.advance(int(int64(w1-w0) * int64(n) / int64(max(1, entries))))
	}
	wbuf, ib, all = nil, nil, nil
	if _, err := f.WriteAt(cb, int64(crcs)); err != nil {
		return nil, err
	}
	sum = crc32.Update(sum, castagnoli, cb)
	if err := readRuns(f, ent, size-ent, func(_ int, b []byte) { sum = crc32.Update(sum, castagnoli, b) }); err != nil {
		return nil, err
	}
	// The body on disk before the header that vouches for it: Open
	// checks the header, the meta region and the body's checksum only.
	if err := f.Sync(); err != nil {
		return nil, err
	}
	x.hook(b, "written")
	if stopped() {
		return nil, errBuildStopped
	}
	h := ivfHeader{int8: code.int8, dims: dims, lists: lists, rows: n, entries: entries, matrixID: x.matrixID,
		metaCRC: crc32.Checksum(mb, castagnoli), bodyCRC: sum}
	if _, err := f.WriteAt(h.encode(), 0); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	p := &partition{int8: code.int8, stride: qs, f: f, lists: lists, rows: n, centroids: cents, starts: starts, out: make([]uint64, (n+63)/64)}
	if p.m, err = mapFile(f, size); err != nil {
		return nil, err
	}
	p.idx, p.ent = p.m[idx:idx+4*entries], p.m[ent:size]
	return p, nil
}

// farthest picks the k live rows of b with the lowest best: those below
// thr, then the first eq of those at thr, in row order. It holds a
// histogram, not a sorted copy.
func farthest(best []float32, b *ivfBuild, k int) (thr float32, eq int) {
	if k <= 0 {
		return float32(math.Inf(-1)), 0
	}
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for r, s := range best {
		if b.isLive(r) && !math.IsInf(float64(s), 0) && !math.IsNaN(float64(s)) {
			lo, hi = min(lo, s), max(hi, s)
		}
	}
	const bins = 1 << 16
	bin := func(s float32) int {
		if !(s > lo) || !(hi > lo) {
			return 0
		}
		return min(bins-1, int(float64(s-lo)/float64(hi-lo)*bins))
	}
	hist := make([]int, bins)
	for r, s := range best {
		if b.isLive(r) {
			hist[bin(s)]++
		}
	}
	below, tb := 0, 0
	for ; tb < bins-1 && below+hist[tb] < k; tb++ {
		below += hist[tb]
	}
	var in []float32
	for r, s := range best {
		if b.isLive(r) && bin(s) == tb {
			in = append(in, s)
		}
	}
	slices.Sort(in)
	thr = in[min(len(in), k-below)-1]
	first, _ := slices.BinarySearch(in, thr)
	return thr, k - below - first
}

// isFiltered reports whether f keeps only some rows.
func isFiltered(f engine.VectorFilter) bool {
	return f.Scope != "" || f.Session != "" || !f.From.IsZero() || !f.To.IsZero()
}

// q4Vector sets v to the row the q4 row b stands for: its 4-bit codes
// decoded, plus the centre.
func q4Vector(b []byte, centre, v []float32) {
	f := q4Fields(len(v))
	lo := math.Float32frombits(binary.LittleEndian.Uint32(b[f:]))
	step := math.Float32frombits(binary.LittleEndian.Uint32(b[f+4:]))
	for i := range v {
		c := b[i/2] >> (4 * (i & 1)) & 15
		v[i] = lo + float32(c)*step + centre[i]
	}
}

// unitInPlace scales v to unit length; a zero vector stays zero.
func unitInPlace(v []float32) {
	var s float64
	for _, c := range v {
		s += float64(c) * float64(c)
	}
	if s == 0 {
		return
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}

// q4Query is a query in the 4-bit kernel's terms.
type q4Query struct {
	sq   []int8  // the query as int8, split (dot4.Split)
	fsum float32 // the sum of its int8 components
	unit float32 // the query's units per int8 unit
}

func newQ4Query(uq []float32, dims int) q4Query {
	var m float32
	for _, c := range uq {
		m = max(m, float32(math.Abs(float64(c))))
	}
	if m == 0 {
		m = 1
	}
	q8 := make([]int8, dims)
	var qsum int32
	for i, c := range uq {
		q8[i] = int8(math.Round(float64(c / m * 127)))
		qsum += int32(q8[i])
	}
	return q4Query{sq: dot4.Split(q8, q4Kernel(dims)), fsum: float32(qsum), unit: m / 127}
}

// kmeans clusters the n rows of data (of code) into k (at most n) by
// Euclidean k-means, ivfIters rounds from evenly spaced rows, and
// returns the centroids and each row's (part made once stop is closed).
func kmeans(code ivfCode, data []byte, n, k int, stop <-chan struct{}) ([]float32, []int32) {
	dims, qs := code.dims, code.stride
	cents := make([]float32, k*dims)
	for l := range k {
		code.vector(data[(l*n/k)*qs:], cents[l*dims:(l+1)*dims])
	}
	labels := make([]int32, n)
	sums := make([]float64, k*dims)
	counts := make([]int, k)
	v := make([]float32, dims)
	for it := range ivfIters + 1 {
		runAssign(code, []assignJob{{data: data, n: n, cs: newCentSet(code, cents, 0), top: 1, labels: labels}}, stop)
		if it == ivfIters || isClosed(stop) {
			break
		}
		clear(sums)
		clear(counts)
		for i, l := range labels {
			code.vector(data[i*qs:], v)
			for j, c := range v {
				sums[int(l)*dims+j] += float64(c)
			}
			counts[l]++
		}
		for l := range k {
			c := cents[l*dims : (l+1)*dims]
			if counts[l] == 0 {
				// An empty list takes a row.
				code.vector(data[((l*7919)%n)*qs:], c)
				continue
			}
			for j := range c {
				c[j] = float32(sums[l*dims+j] / float64(counts[l]))
			}
		}
	}
	return cents, labels
}

// assignBlock is the q4 rows assign hands the kernel per centroid.
const assignBlock = 2048

// centSet is a set of centroids in the kernel's terms (the 4-bit one,
// or dot8 for int8 rows): each as a query, and the offset of its
// Euclidean score; the labels of its centroids start at base.
type centSet struct {
	qq   []q4Query
	q16  [][]int16 // int8 rows: the centroids as dot8 queries
	unit []float32 // int8 rows: the value of a unit of q16
	off  []float32
	base int32
}

func newCentSet(code ivfCode, cents []float32, base int32) *centSet {
	dims := code.dims
	lists := len(cents) / dims
	cs := &centSet{off: make([]float32, lists), base: base}
	if code.int8 {
		cs.q16, cs.unit = make([][]int16, lists), make([]float32, lists)
	} else {
		cs.qq = make([]q4Query, lists)
	}
	// Nearest in Euclidean distance: the largest x.c - |c|^2/2, with
	// x.c the kernel's estimate of the row's offset from the centre
	// (zero for int8 rows), plus the centre's dot product with c.
	for l := range lists {
		c := cents[l*dims : (l+1)*dims]
		if code.int8 {
			cs.q16[l], cs.unit[l] = quantizeQuery(c, dims)
		} else {
			cs.qq[l] = newQ4Query(c, dims)
		}
		cs.off[l] = vecscan.Dot(c, code.centre) - vecscan.Dot(c, c)/2
	}
	return cs
}

// assignJob is n q4 rows of data to label with the top centroids of cs
// nearest to each: labels[i*top : (i+1)*top], nearest first (-1 past
// the centroids); score, if not nil, the nearest's x.c - |c|^2/2.
type assignJob struct {
	data   []byte
	n      int
	cs     *centSet
	top    int
	labels []int32
	score  []float32
}

// runAssign runs the jobs, by the 4-bit estimate of the rows' Euclidean
// distance to the centroids, their blocks of assignBlock rows shared
// among all cores. Once stop is closed it returns early, the labels part
// set: the caller drops them.
func runAssign(code ivfCode, jobs []assignJob, stop <-chan struct{}) {
	qs, f := code.stride, q4Fields(code.dims)
	type block struct{ job, lo int }
	var blocks []block
	top := 1
	for j := range jobs {
		top = max(top, jobs[j].top)
		for lo := 0; lo < jobs[j].n; lo += assignBlock {
			blocks = append(blocks, block{j, lo})
		}
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for range max(1, min(len(blocks), runtime.GOMAXPROCS(0))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]float32, assignBlock)
			bestAll := make([]float32, assignBlock*top)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(blocks) || isClosed(stop) {
					return
				}
				jb := &jobs[blocks[i].job]
				lo, top, cs := blocks[i].lo, jb.top, jb.cs
				m := min(assignBlock, jb.n-lo)
				best := bestAll[:m*top]
				for i := range best {
					best[i], jb.labels[lo*top+i] = float32(math.Inf(-1)), -1
				}
				for l := range cs.off {
					var u float32
					if code.int8 {
						dot8.DotsScaled(cs.q16[l], jb.data[lo*qs:], qs, code.dims, out[:m])
						u = cs.unit[l]
					} else {
						dot4.DotsScaled(cs.qq[l].sq, jb.data[lo*qs:], qs, f, cs.qq[l].fsum, out[:m])
						u = cs.qq[l].unit
					}
					o := cs.off[l]
					for i, s := range out[:m] {
						s = s*u + o
						bs := best[i*top : (i+1)*top]
						if s <= bs[top-1] {
							continue
						}
						ls := jb.labels[(lo+i)*top : (lo+i+1)*top]
						j := top - 1
						for ; j > 0 && s > bs[j-1]; j-- {
							bs[j], ls[j] = bs[j-1], ls[j-1]
						}
						bs[j], ls[j] = s, cs.base+int32(l)
					}
				}
				if jb.score != nil {
					for i := range m {
						jb.score[lo+i] = best[i*top]
					}
				}
			}
		}()
	}
	wg.Wait()
}

// ivfSpan is a run of rows the partitioned pass scans: entries [pos,
// pos+n) of the partition, or q4 rows [pos, pos+n).
type ivfSpan struct {
	pos, n int
	ivf    bool
}

// ivfMinRows is the rows, per row the pass keeps, that a partitioned
// search scans at least: it probes more lists than Probes when theirs
// are fewer.
const ivfMinRows = 4

// ivfWiden is the share of Probes a filtered search probes at a time
// past the first Probes lists, nearest first.
const ivfWiden = 0.25

// ivfCalm is the widenings in a row that change none of a filtered
// search's best candidates after which it stops. On 784K rows (10% of
// them in scope) 1 finds 0.988 of the exact top 10 at 0.72 of the full
// pass's CPU (which finds 0.9935), 2 finds 0.993 at 0.86 (BENCHMARKS.md,
// branch ivf8).
const ivfCalm = 1

// ivfFilterShare is the share of the partition's rows past which a
// filtered search stops widening and scans every q4 row instead: the
// lists' scattered runs cost about twice a row of the full pass's.
const ivfFilterShare = 0.35

// ivfFilterMin is the share of the rows, at least, a filter must pass
// for a search to go through the partition: below it, the lists that
// hold its best are many, and its rows few, and the full pass costs less
// (BENCHMARKS.md, branch ivf8). ivfFilterSample evenly spaced slots,
// read by pread, estimate it.
const (
	ivfFilterMin    = 0.03
	ivfFilterSample = 256
)

// sampleMatch is the share of ivfFilterSample evenly spaced rows whose
// slots pass match, read by pread: through the mapping, each read would
// map the 64 KiB around it. The caller holds mu for reading.
func (x *Index) sampleMatch(match func([]byte) bool) (float64, error) {
	m := min(x.n, ivfFilterSample)
	if m == 0 {
		return 0, nil
	}
	pass := 0
	var s [slotSize]byte
	for i := range m {
		r := int(int64(i) * int64(x.n) / int64(m))
		if _, err := x.slotsF.ReadAt(s[:], int64(pageSize+r*slotSize)); err != nil {
			return 0, err
		}
		if match(s[:]) {
			pass++
		}
	}
	return float64(pass) / float64(m), nil
}

// errWiden is scanIVF's answer when a filtered search would scan more
// than ivfFilterShare of the rows through the partition.
var errWiden = errors.New("vecfile: filtered search scans every q4 row")

// scanIVF is the 4-bit pass of a search of every row through the
// partition: the rows of the Probes lists nearest to the query and those
// outside the partition, the best keep of them by their estimates (rows,
// in the kernel's units) and the step of each row's codes. A filtered
// search (match not nil) then widens, nearest lists first, ivfWiden*Probes
// lists at a time (and ivfMinRows*keep rows at least), until its best
// keep are full and ivfCalm widenings in a row bring none of the best
// cands (the candidates the int8 ranking will keep):
// a selective filter leaves few of its rows in the nearest lists, so
// its best are farther. A filter that passes fewer than ivfFilterMin of
// a sample of the rows, or a widening past ivfFilterShare of them,
// returns errWiden: the caller scans every q4 row. The caller holds mu for
// reading.
func (x *Index) scanIVF(uq []float32, qq q4Query, keep, cands int, filter func(int) bool, match func(slot []byte) bool) ([]vecscan.Hit, map[int]float32, error) {
	p := x.part
	filtered := match != nil
	if filtered {
		if s, err := x.sampleMatch(match); err != nil || s < ivfFilterMin {
			return nil, nil, errors.Join(errWiden, err)
		}
	}
	dims, qs := x.opts.Dims, q4Stride(x.opts.Dims)
	f := q4Fields(dims)
	size := p.size
	// The Probes lists of the nearest centroids (more, nearest first,
	// while their rows are fewer than ivfMinRows*keep), scanned in file
	// order; a filtered search ranks them all.
	rank := func(n int) []vecscan.Hit { return p.nearest(uq, n, dims) }
	var near []vecscan.Hit
	if filtered {
		near = rank(p.lists)
	} else {
		near = rank(min(x.opts.Probes, p.lists))
	}
	var lists []int
	total := 0
	for _, h := range near[:min(x.opts.Probes, len(near))] {
		lists = append(lists, h.Row)
		total += size(h.Row)
	}
	if total < ivfMinRows*keep && len(lists) < p.lists {
		if !filtered {
			near = rank(p.lists)
		}
		for _, h := range near[len(lists):] {
			if total >= ivfMinRows*keep {
				break
			}
			lists = append(lists, h.Row)
			total += size(h.Row)
		}
	}
	var extra []ivfSpan // outside the partition: scanned in the first pass
	if x.n > p.rows {
		extra = append(extra, ivfSpan{p.rows, x.n - p.rows, false})
	}
	for _, r := range p.outRows {
		extra = append(extra, ivfSpan{r, 1, false})
	}
	hits, err := x.scanSpans(qq, lists, extra, keep, filter, float32(math.Inf(-1)))
	if err != nil {
		return nil, nil, err
	}
	scanned := total
	step := max(1, int(ivfWiden*float64(x.opts.Probes)))
	calm := 0 // widenings in a row that changed none of the best
	for next := len(lists); filtered && next < p.lists; {
		var batch []int
		rows := 0
		for _, h := range near[next:] {
			if len(batch) >= step && rows >= ivfMinRows*keep {
				break
			}
			batch = append(batch, h.Row)
			rows += size(h.Row)
		}
		next += len(batch)
		scanned += rows
		if float64(scanned) > ivfFilterShare*float64(p.rows) {
			return nil, nil, errWiden
		}
		floor := float32(math.Inf(-1))
		if len(hits) == keep {
			floor = hits[keep-1].Score
		}
		more, err := x.scanSpans(qq, batch, nil, keep, filter, floor)
		if err != nil {
			return nil, nil, err
		}
		hits = append(hits, more...)
		vecscan.Sort(hits)
		full := len(hits) >= keep
		hits = hits[:min(keep, len(hits))]
		changed := false
		for _, h := range hits[:min(cands, len(hits))] {
			if slices.ContainsFunc(more, func(m vecscan.Hit) bool { return m.Row == h.Row }) {
				changed = true
				break
			}
		}
		if !full || changed {
			calm = 0
		} else if calm++; calm >= ivfCalm {
			break
		}
	}
	steps := make(map[int]float32, len(hits))
	for k, h := range hits {
		r := h.Row >> 32
		var b []byte
		if e := h.Row - r<<32 - 1; e < 0 {
			b = x.q4At(r)
		} else {
			b = p.ent[e*qs : (e+1)*qs]
		}
		hits[k].Row = r
		steps[r] = math.Float32frombits(binary.LittleEndian.Uint32(b[f+4:]))
	}
	return hits, steps, nil
}

// scanSpans is the 4-bit pass over the entries of the lists lists and
// the spans extra: their best keep passing filter, with an estimate at
// least floor, best first, held as scanEntries holds them (the low bits
// name the entry whose step is read). The caller holds mu for reading.
func (x *Index) scanSpans(qq q4Query, lists []int, extra []ivfSpan, keep int, filter func(int) bool, floor0 float32) ([]vecscan.Hit, error) {
	qs, f := q4Stride(x.opts.Dims), q4Fields(x.opts.Dims)
	spans := append(x.part.listSpans(lists), extra...)
	return x.part.scanEntries(spans, keep, filter, floor0, x.q4, qs, func(data []byte, out []float32) int {
		return dot4.DotsScaled(qq.sq, data, qs, f, qq.fsum, out)
	})
}

// nearest returns the n lists whose centroids are nearest to the unit
// query uq (dims components), nearest first.
func (p *partition) nearest(uq []float32, n, dims int) []vecscan.Hit {
	return p.appendNearest(nil, uq, n, dims)
}

// appendNearest appends to dst what nearest returns, and returns it.
func (p *partition) appendNearest(dst []vecscan.Hit, uq []float32, n, dims int) []vecscan.Hit {
	sel := nearHeaps.Get().(*vecscan.Heap)
	defer nearHeaps.Put(sel)
	sel.Reset(n)
	for l := range p.lists {
		sel.Push(l, vecscan.Dot(uq, p.centroids[l*dims:(l+1)*dims]))
	}
	return sel.AppendSorted(dst)
}

// nearHeaps holds appendNearest's selections for reuse (hits without
// pointers, copied out).
var nearHeaps = sync.Pool{New: func() any { return new(vecscan.Heap) }}

// size returns the entries of list l.
func (p *partition) size(l int) int { return p.starts[l+1] - p.starts[l] }

// listSpans returns the spans of the entries of lists, in file order
// (lists is not changed).
func (p *partition) listSpans(lists []int) []ivfSpan {
	return p.appendListSpans(nil, slices.Clone(lists))
}

// appendListSpans appends to spans the spans of the entries of lists, in
// file order, and returns it; it sorts lists.
func (p *partition) appendListSpans(spans []ivfSpan, lists []int) []ivfSpan {
	slices.Sort(lists)
	for _, l := range lists {
		if n := p.size(l); n > 0 {
			spans = append(spans, ivfSpan{p.starts[l], n, true})
		}
	}
	return spans
}

// scanEntries is a partitioned search's pass over the rows of spans:
// kernel scores the first len(out) rows of data (rows of stride bytes)
// into out and returns how many it scored; a span in the partition reads
// its entries, one outside it the rows of outside (the q4 file or the
// matrix, each after its header page). It returns the best keep passing
// filter (nil: all), with a score at least floor0, best first. A hit
// holds its row in the high 32 bits, so that equal scores go to the lower
// row as in the scan of every row, and its entry plus 1 (0: a row
// outside the partition) in the low ones. The caller holds mu for
// reading.
func (p *partition) scanEntries(spans []ivfSpan, keep int, filter func(int) bool, floor0 float32, outside []byte, stride int, kernel func(data []byte, out []float32) int) ([]vecscan.Hit, error) {
	// The virtual row v of the scan is the v-th of the spans' rows.
	begin := make([]int, len(spans)+1)
	for i, s := range spans {
		begin[i+1] = begin[i] + s.n
	}
	return vecscan.ScanFunc(begin[len(spans)], keep, filter, func(lo, hi int, h *vecscan.Heap) {
		out := make([]float32, scanBlock)
		var floor float32 // read at each block
		i, _ := slices.BinarySearch(begin, lo+1)
		for i--; i < len(spans) && begin[i] < hi; i++ {
			s := spans[i]
			a, b := max(lo, begin[i])-begin[i], min(hi, begin[i+1])-begin[i]
			for blk := a; blk < b; blk += scanBlock {
				m := min(scanBlock, b-blk)
				var data []byte
				if s.ivf {
					data = p.ent[(s.pos+blk)*stride:]
				} else {
					data = outside[pageSize+(s.pos+blk)*stride:]
				}
				if kernel(data, out[:m]) < m {
					panic("partition rows shorter than their count") // turned into ErrFault by ScanFunc
				}
				floor = max(floor0, h.Floor()) // another part's bar may have risen
				for j := 0; j < m; j++ {
					// Skip to the next score not below the floor.
					if j += floatscan.FirstNotBelow32(out[j:m], floor); j >= m {
						break
					}
					sc := out[j]
					r, e := s.pos+blk+j, 0
					if s.ivf {
						if r, e = p.rowOf(r), r+1; p.isOut(r) {
							continue
						}
					}
					if filter == nil || filter(r) {
						h.Push(r<<32+e, sc)
						floor = max(floor0, h.Floor())
					}
				}
			}
		}
	})
}

// closeIVF unmaps and closes the partition.
func (x *Index) closeIVF() error {
	p := x.part
	if p == nil {
		return nil
	}
	x.part = nil
	return errors.Join(unmap(p.m), p.f.Close())
}
