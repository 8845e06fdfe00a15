package vecfile

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"unsafe"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/dot8"
	"github.com/hmo-dev/hmo/internal/vecscan"
)

var (
	_ engine.FilteredVectorIndex = (*Index)(nil)
	_ engine.Compacter           = (*Index)(nil)
)

// growStep is the granularity, in bytes, by which the files grow.
const growStep = 4 << 20

// Index is an exact cosine-similarity index over unit vectors keyed by
// record id, kept in two memory-mapped files (see the package doc).
//
// It is safe for concurrent use. Searches run in parallel with each other;
// Apply, Save, Compact and Close run one at a time, and exclude searches
// only while they change rows that are already counted or remap the files.
// A build of the partition (ivf.go) runs in a goroutine of its own from a
// writable Open; Close and Compact stop it and wait for it.
type Index struct {
	dir  string
	opts Options

	// Lock order: applyMu, then mu. Fields under "applyMu" are used only
	// with it held; fields under "mu" are written with both held, so a
	// holder of applyMu may read them without mu.

	applyMu  sync.Mutex
	slotsF   *os.File
	matF     *os.File
	compF    *os.File // the int8 companion; nil when there is none
	q4F      *os.File // the 4-bit pass (quick.go); nil when there is none
	matrixID uint64
	gen      uint64         // generation of the newest header on disk
	version  uint64         // counts changes
	saved    uint64         // version at the last save
	extra    map[uint64]int // id -> row of the rows at or past sorted
	lastID   uint64         // id of row sorted-1

	mu        sync.RWMutex
	slots     []byte // mapping of the slots file
	mat       []byte // mapping of the matrix file
	comp      []byte // mapping of the companion file
	q4        []byte // mapping of the q4 file
	q4Centre  []float32
	q4Built   int // the live rows the q4 file's centre was computed over
	n         int // rows counted
	live      int // rows not deleted
	sorted    int // rows [0, sorted) hold strictly increasing ids
	watermark uint64
	closed    bool
	part      *partition // the partition of the q4 rows (ivf.go); nil when there is none
	// building is the build of the partition in the background (ivf.go),
	// from Open or a compaction until it returns; written under mu only
	// (by the build's goroutine when it ends), so read under mu.
	building *ivfBuild
}

// Open opens the index in dir, creating it (and dir, mode 0700) when it
// holds none. opts must set Dims. Damaged files give an error wrapping
// ErrCorrupt, files of another Dims or Format ErrIncompatible: the caller
// removes dir and rebuilds the index from the source of truth.
func Open(dir string, opts *Options) (*Index, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if !o.ReadOnly {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("vecfile: open: %w", err)
		}
	}
	x := &Index{dir: dir, opts: o, extra: map[uint64]int{}}
	if err := x.open(); err != nil {
		x.release()
		return nil, fmt.Errorf("vecfile: open %s: %w", dir, err)
	}
	x.startBuild()
	return x, nil
}

func (x *Index) rowBytes() int { return x.opts.Format.rowBytes(x.opts.Dims) }

func (x *Index) open() (err error) {
	defer recoverTo("open", &err)
	flag := os.O_RDWR | os.O_CREATE
	if x.opts.ReadOnly {
		flag = os.O_RDONLY
		if _, err := os.Stat(filepath.Join(x.dir, slotsName)); errors.Is(err, os.ErrNotExist) {
			// Never written: an empty index, behind every record.
			return nil
		}
	}
	if x.slotsF, err = os.OpenFile(filepath.Join(x.dir, slotsName), flag, 0o600); err != nil {
		return err
	}
	if x.matF, err = os.OpenFile(filepath.Join(x.dir, matrixName), flag, 0o600); err != nil {
		return err
	}
	st, err := x.slotsF.Stat()
	if err != nil {
		return err
	}
	if st.Size() == 0 {
		if x.opts.ReadOnly {
			return fmt.Errorf("%w: empty slots file", ErrCorrupt)
		}
		return x.create()
	}
	page := make([]byte, pageSize)
	if _, err := io.ReadFull(io.NewSectionReader(x.slotsF, 0, pageSize), page); err != nil {
		return fmt.Errorf("%w: slots header: %v", ErrCorrupt, err)
	}
	h, err := newestHeader(page)
	if err != nil {
		return err
	}
	if x.opts.KeepFormat && h.format.valid() {
		x.opts.Format = h.format
	}
	if h.dims != x.opts.Dims || h.format != x.opts.Format {
		return fmt.Errorf("%w: index has %d dims %s, options ask for %d dims %s",
			ErrIncompatible, h.dims, h.format, x.opts.Dims, x.opts.Format)
	}
	mpage := make([]byte, 20)
	if _, err := x.matF.ReadAt(mpage, 0); err != nil {
		return fmt.Errorf("%w: matrix header: %v", ErrCorrupt, err)
	}
	id, err := matrixIDOf(mpage)
	if err != nil {
		return err
	}
	if id != h.matrixID {
		return fmt.Errorf("%w: matrix file belongs to another index", ErrCorrupt)
	}
	n := int(h.n)
	ms, err := x.matF.Stat()
	if err != nil {
		return err
	}
	if st.Size() < int64(pageSize+n*slotSize) || ms.Size() < int64(pageSize+n*x.rowBytes()) {
		return fmt.Errorf("%w: files shorter than %d rows", ErrCorrupt, n)
	}
	if err := x.mapFiles(0, 0); err != nil {
		return err
	}
	x.matrixID, x.gen, x.watermark, x.n = h.matrixID, h.gen, h.watermark, n
	if err := x.index(); err != nil {
		return err
	}
	if err := x.openComp(); err != nil {
		return err
	}
	if err := x.openQ4(); err != nil {
		return err
	}
	// Open read every slot through the mapping; a search reads only the
	// slots of its candidates. Give the pages back (they stay in the
	// page cache): at 1M rows they are 37 MB of the resident set. Only
	// advice: a failure changes nothing else.
	_ = adviseAway(x.slots)
	return nil
}

// index checks the rows, unless SkipVerify, finds the sorted prefix of
// the rows, puts the others in extra and counts the live rows.
//
// The rows are read with pread in chunks, not through the mapping, so
// that a scan that does not read them (ScanInt8) keeps them out of the
// process's resident set.
func (x *Index) index() error {
	var last uint64
	rb := x.rowBytes()
	const chunk = 1024
	var buf []byte
	for r := 0; r < x.n; r++ {
		s := x.slotAt(r)
		if !x.opts.SkipVerify {
			if r%chunk == 0 {
				m := min(chunk, x.n-r)
				if buf == nil {
					buf = make([]byte, chunk*rb)
				}
				if _, err := x.matF.ReadAt(buf[:m*rb], int64(pageSize+r*rb)); err != nil {
					return fmt.Errorf("%w: rows %d-%d: %v", ErrCorrupt, r, r+m, err)
				}
			}
			if i := r % chunk; !rowOK(s, buf[i*rb:(i+1)*rb]) {
				return fmt.Errorf("%w: row %d checksum", ErrCorrupt, r)
			}
		}
		id := slotID(s)
		if slotFlags(s)&flagLive != 0 {
			x.live++
		}
		if r == x.sorted && (r == 0 || id > last) {
			x.sorted++
			last = id
			continue
		}
		if _, dup := x.extra[id]; dup || x.inSorted(id) {
			return fmt.Errorf("%w: id %d in two rows", ErrCorrupt, id)
		}
		x.extra[id] = r
	}
	x.lastID = last
	return nil
}

// create writes the headers of a new index.
func (x *Index) create() error {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	x.matrixID = binary.LittleEndian.Uint64(b[:])
	mpage := make([]byte, pageSize)
	copy(mpage, matrixHeader(x.matrixID))
	if _, err := x.matF.WriteAt(mpage, 0); err != nil {
		return err
	}
	if err := x.matF.Truncate(pageSize); err != nil {
		return err
	}
	if err := x.matF.Sync(); err != nil {
		return err
	}
	if err := x.slotsF.Truncate(pageSize); err != nil {
		return err
	}
	if err := x.mapFiles(pageSize, pageSize); err != nil {
		return err
	}
	if err := x.writeHeader(); err != nil {
		return err
	}
	if err := x.openComp(); err != nil {
		return err
	}
	return syncDir(x.dir)
}

// mapFiles maps both files whole, growing each to at least the given
// size. The caller holds mu for writing, or has not published x.
func (x *Index) mapFiles(slotsSize, matSize int) error {
	if err := mapOne(x.slotsF, slotsSize, &x.slots, x.opts.ReadOnly); err != nil {
		return err
	}

	return mapOne(x.matF, matSize, &x.mat, x.opts.ReadOnly)
}

// mapOne maps f whole into *dst, replacing the mapping there, after
// growing f to at least need bytes unless ro.
func mapOne(f *os.File, need int, dst *[]byte, ro bool) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := int(st.Size())
	if size < need && !ro {
		size = (need + growStep - 1) / growStep * growStep
		if err := f.Truncate(int64(size)); err != nil {
			return err
		}
	}
	if err := unmap(*dst); err != nil {
		return err
	}
	*dst = nil
	b, err := mapFile(f, size)
	if err != nil {
		return err
	}
	*dst = b
	return nil
}

// grow makes room for rows rows. The caller holds applyMu.
func (x *Index) grow(rows int) error {
	ns, nm := pageSize+rows*slotSize, pageSize+rows*x.rowBytes()
	nc, nq := 0, 0
	if x.compF != nil {
		nc = pageSize + rows*compStride(x.opts.Dims)
	}
	if x.q4F != nil {
		nq = pageSize + rows*q4Stride(x.opts.Dims)
	}
	if len(x.slots) >= ns && len(x.mat) >= nm && len(x.comp) >= nc && len(x.q4) >= nq {
		return nil
	}
	// Grow by an eighth at least, so that appends cost few remaps; Close
	// cuts the files back to their rows.
	ns, nm = max(ns, len(x.slots)+len(x.slots)/8), max(nm, len(x.mat)+len(x.mat)/8)
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.mapFiles(ns, nm); err != nil {
		return err
	}
	if x.q4F != nil {
		if err := x.mapQ4(max(nq, len(x.q4)+len(x.q4)/8)); err != nil {
			return err
		}
	}
	if x.compF == nil {
		return nil
	}
	return x.mapComp(max(nc, len(x.comp)+len(x.comp)/8))
}

func (x *Index) slotAt(r int) []byte {
	off := pageSize + r*slotSize
	return x.slots[off : off+slotSize]
}

func (x *Index) rowAt(r int) []byte {
	rb := x.rowBytes()
	off := pageSize + r*rb
	return x.mat[off : off+rb]
}

func (x *Index) inSorted(id uint64) bool {
	_, ok := x.findSorted(id)
	return ok
}

func (x *Index) findSorted(id uint64) (int, bool) {
	r := sort.Search(x.sorted, func(i int) bool { return slotID(x.slotAt(i)) >= id })
	return r, r < x.sorted && slotID(x.slotAt(r)) == id
}

// lookup returns the row of id, live or dead. The caller holds applyMu.
func (x *Index) lookup(id uint64) (int, bool) {
	if r, ok := x.extra[id]; ok {
		return r, true
	}
	return x.findSorted(id)
}

// writeAt writes b at off in f and, where the mapping is a heap copy,
// into the mapping too.
func writeAt(f *os.File, mapping []byte, b []byte, off int) error {
	if _, err := f.WriteAt(b, int64(off)); err != nil {
		return err
	}
	if mirrored && off+len(b) <= len(mapping) {
		copy(mapping[off:], b)
	}
	return nil
}

// encoded is one vector ready to be written.
type encoded struct {
	s   slot
	row []byte
	q   []byte // the companion row, when the index keeps one
}

// encoder encodes the vectors of one Apply: the rows and companion rows
// are cut from one array each, and the scratch is shared.
type encoder struct {
	rows, comps []byte
	f           []byte
	scratch     []float32
}

func (x *Index) newEncoder(n int) *encoder {
	c := &encoder{rows: make([]byte, n*x.rowBytes()), scratch: make([]float32, x.opts.Dims)}
	switch {
	case x.opts.Format == Int8Rescore:
		c.f = make([]byte, 4*x.opts.Dims)
	case x.opts.Format != Int8 && x.opts.wantComp():
		c.comps = make([]byte, n*compStride(x.opts.Dims))
	}
	return c
}

// encode encodes the i-th vector of the encoder's Apply.
func (x *Index) encode(c *encoder, i int, d *engine.VectorDoc) (encoded, error) {
	norm, err := checkVector(d.Vector, x.opts.Dims)
	if err != nil {
		return encoded{}, fmt.Errorf("vecfile: add id %d: %w", d.ID, err)
	}
	e := encoded{s: slot{
		id: d.ID, time: timeNanos(d.Time), scope: labelHash(d.Scope), session: labelHash(d.Session), flags: flagLive,
	}}
	rb := x.rowBytes()
	e.row = c.rows[i*rb : (i+1)*rb : (i+1)*rb]
	inv := 1 / norm
	switch x.opts.Format {
	case Int8:
		var m float64
		for _, v := range d.Vector {
			m = max(m, math.Abs(float64(v)*inv))
		}
		e.s.scale = float32(m / 127)
		for i, v := range d.Vector {
			e.row[i] = byte(int8(math.Round(float64(v) * inv / m * 127)))
		}
	case Int8Rescore:
		// The companion row of the Float32 row, with no checksums of its
		// own (the slot's covers it).
		f := c.f
		for i, v := range d.Vector {
			binary.LittleEndian.PutUint32(f[4*i:], math.Float32bits(float32(float64(v)*inv)))
		}
		quantizeRow(f, c.scratch, e.row)
	default:
		for i, v := range d.Vector {
			binary.LittleEndian.PutUint32(e.row[4*i:], math.Float32bits(float32(float64(v)*inv)))
		}
		if x.opts.wantComp() {
			cs := compStride(x.opts.Dims)
			e.q = c.comps[i*cs : (i+1)*cs : (i+1)*cs]
			quantizeRow(e.row, c.scratch, e.q)
		}
	}
	return e, nil
}

// Apply adds vectors and removes ids, then records watermark as the last
// change-log sequence applied. Adding an id that is present replaces its
// vector and labels; an id both added and deleted in one call ends
// deleted; deleting an absent id does nothing. Vectors are normalised to
// unit length. If any vector is invalid (ErrDimension, ErrNotFinite,
// ErrZeroVector) nothing changes. A deleted row's vector is overwritten
// with zeros at once; Compact (or Apply, past Options.CompactRatio dead
// rows) reclaims its space.
func (x *Index) Apply(adds []engine.VectorDoc, deletes []uint64, watermark uint64) (err error) {
	defer recoverTo("apply", &err)
	last := make(map[uint64]int, len(adds))
	encs := make([]encoded, len(adds))
	enc := x.newEncoder(len(adds))
	for i := range adds {
		if encs[i], err = x.encode(enc, i, &adds[i]); err != nil {
			return err
		}
		last[adds[i].ID] = i
	}
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	if x.closed {
		return ErrClosed
	}
	if x.opts.ReadOnly {
		return ErrReadOnly
	}
	type inPlace struct {
		row int
		e   *encoded
	}
	var places []inPlace
	var appends []*encoded
	for i := range encs {
		if last[encs[i].s.id] != i {
			continue // replaced later in the same call
		}
		if r, ok := x.lookup(encs[i].s.id); ok {
			places = append(places, inPlace{r, &encs[i]})
		} else {
			appends = append(appends, &encs[i])
		}
	}
	slices.SortFunc(appends, func(a, b *encoded) int { return cmpU64(a.s.id, b.s.id) })
	if err := x.writeAppends(appends); err != nil {
		return fmt.Errorf("vecfile: apply: %w", err)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.version++
	for _, a := range appends {
		r := x.n
		if x.sorted == r && (r == 0 || a.s.id > x.lastID) {
			x.sorted++
			x.lastID = a.s.id
		} else {
			x.extra[a.s.id] = r
		}
		x.n++
		x.live++
	}
	for _, p := range places {
		if err := x.rewrite(p.row, &p.e.s, p.e.row, p.e.q); err != nil {
			return fmt.Errorf("vecfile: apply: %w", err)
		}
	}
	zero := make([]byte, x.rowBytes())
	var zq []byte
	if x.compF != nil {
		zq = make([]byte, compStride(x.opts.Dims))
		quantizeRow(zero, make([]float32, x.opts.Dims), zq)
	}
	for _, id := range deletes {
		r, ok := x.lookup(id)
		if !ok || slotFlags(x.slotAt(r))&flagLive == 0 {
			continue
		}
		s := slot{id: id}
		if err := x.rewrite(r, &s, zero, zq); err != nil {
			return fmt.Errorf("vecfile: apply: %w", err)
		}
	}
	x.watermark = watermark
	if x.n >= 64 && float64(x.n-x.live) > x.opts.CompactRatio*float64(x.n) {
		return x.compact()
	}
	return nil
}

// writeAppends writes new rows past the counted ones. Searches do not
// read there, so they go on meanwhile. The caller holds applyMu.
func (x *Index) writeAppends(appends []*encoded) error {
	if len(appends) == 0 {
		return nil
	}
	if err := x.grow(x.n + len(appends)); err != nil {
		return err
	}
	rb := x.rowBytes()
	sb := make([]byte, len(appends)*slotSize)
	mb := make([]byte, 0, len(appends)*rb)
	for i, a := range appends {
		a.s.put(sb[i*slotSize:], a.row)
		mb = append(mb, a.row...)
		if a.q != nil {
			sealComp(a.q, sb[i*slotSize:], x.opts.Dims)
		}
	}
	if err := writeAt(x.matF, x.mat, mb, pageSize+x.n*rb); err != nil {
		return err
	}
	if x.compF != nil {
		st := compStride(x.opts.Dims)
		cb := make([]byte, 0, len(appends)*st)
		for _, a := range appends {
			cb = append(cb, a.q...)
		}
		if err := writeAt(x.compF, x.comp, cb, pageSize+x.n*st); err != nil {
			return err
		}
	}
	if x.q4F != nil {
		st := q4Stride(x.opts.Dims)
		qb := make([]byte, len(appends)*st)
		scratch := make([]float64, x.opts.Dims)
		for i, a := range appends {
			q4Row(a.row, x.q4Centre, sb[i*slotSize:], scratch, qb[i*st:(i+1)*st])
		}
		if err := writeAt(x.q4F, x.q4, qb, pageSize+x.n*st); err != nil {
			return err
		}
	}
	return writeAt(x.slotsF, x.slots, sb, pageSize+x.n*slotSize)
}

// rewrite replaces the counted row r; q is its companion row. The caller
// holds applyMu and mu.
func (x *Index) rewrite(r int, s *slot, row, q []byte) error {
	wasLive := slotFlags(x.slotAt(r))&flagLive != 0
	sb := make([]byte, slotSize)
	s.put(sb, row)
	if err := writeAt(x.matF, x.mat, row, pageSize+r*x.rowBytes()); err != nil {
		return err
	}
	if x.compF != nil {
		sealComp(q, sb, x.opts.Dims)
		if err := writeAt(x.compF, x.comp, q, pageSize+r*compStride(x.opts.Dims)); err != nil {
			return err
		}
	}
	if x.q4F != nil {
		st := q4Stride(x.opts.Dims)
		qb := make([]byte, st)
		q4Row(row, x.q4Centre, sb, make([]float64, x.opts.Dims), qb)
		if err := writeAt(x.q4F, x.q4, qb, pageSize+r*st); err != nil {
			return err
		}
	}
	if x.part != nil {
		x.part.markOut(r) // its entry holds the old row
	}
	if err := writeAt(x.slotsF, x.slots, sb, pageSize+r*slotSize); err != nil {
		return err
	}
	switch isLive := s.flags&flagLive != 0; {
	case wasLive && !isLive:
		x.live--
	case !wasLive && isLive:
		x.live++
	}
	return nil
}

// Save makes the rows applied so far and the watermark durable: the rows
// are synced, then a new header naming them is written and synced.
func (x *Index) Save() (err error) {
	defer recoverTo("save", &err)
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	if x.closed {
		return ErrClosed
	}
	return x.save()
}

func (x *Index) save() error {
	if x.version == x.saved || x.opts.ReadOnly {
		return nil
	}
	if err := x.matF.Sync(); err != nil {
		return fmt.Errorf("vecfile: save: %w", err)
	}
	// The companion is not synced: Open checks each of its rows against
	// its slot and regenerates what a crash left behind.
	if err := x.slotsF.Sync(); err != nil {
		return fmt.Errorf("vecfile: save: %w", err)
	}
	if err := x.writeHeader(); err != nil {
		return fmt.Errorf("vecfile: save: %w", err)
	}
	x.saved = x.version
	return nil
}

// writeHeader writes the next generation's header copy and syncs it. The
// caller holds applyMu.
func (x *Index) writeHeader() error {
	h := header{
		format: x.opts.Format, dims: x.opts.Dims, gen: x.gen + 1, n: uint64(x.n),
		watermark: x.watermark, matrixID: x.matrixID,
	}
	if err := writeAt(x.slotsF, x.slots, h.encode(), int(h.gen%2)*headerCopy); err != nil {
		return err
	}
	if err := x.slotsF.Sync(); err != nil {
		return err
	}
	x.gen = h.gen
	return nil
}

// Compact rewrites the files with the live rows only, in id order: a
// deleted vector's bytes and slot are gone from disk afterwards.
func (x *Index) Compact(context.Context) (err error) {
	defer recoverTo("compact", &err)
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	if x.closed {
		return ErrClosed
	}
	if x.opts.ReadOnly {
		return ErrReadOnly
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.compact()
}

// compact writes new files and swaps them in. The caller holds applyMu
// and mu.
func (x *Index) compact() error {
	// The build in the background reads the files replaced here.
	x.stopBuild(true)
	type idRow struct {
		id  uint64
		row int
	}
	rows := make([]idRow, 0, x.live)
	for r := 0; r < x.n; r++ {
		if s := x.slotAt(r); slotFlags(s)&flagLive != 0 {
			rows = append(rows, idRow{slotID(s), r})
		}
	}
	slices.SortFunc(rows, func(a, b idRow) int { return cmpU64(a.id, b.id) })
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	id := binary.LittleEndian.Uint64(b[:])
	sp, mp := filepath.Join(x.dir, slotsName+tmpSuffix), filepath.Join(x.dir, matrixName+tmpSuffix)
	cp := ""
	if x.compF != nil {
		cp = filepath.Join(x.dir, compName+tmpSuffix)
	}
	err := x.writeCompacted(sp, mp, cp, id, func(yield func(s, row, q []byte) error) error {
		for _, r := range rows {
			var q []byte
			if cp != "" {
				q = x.compAt(r.row)
			}
			if err := yield(x.slotAt(r.row), x.rowAt(r.row), q); err != nil {
				return err
			}
		}
		return nil
	}, len(rows))
	if err != nil {
		os.Remove(sp)
		os.Remove(mp)
		if cp != "" {
			os.Remove(cp)
		}
		return fmt.Errorf("vecfile: compact: %w", err)
	}
	// A crash between the renames leaves files of two identities: Open
	// refuses a matrix and slots apart and the index is rebuilt; it
	// regenerates a companion apart from its matrix.
	if err := os.Rename(mp, filepath.Join(x.dir, matrixName)); err != nil {
		return fmt.Errorf("vecfile: compact: %w", err)
	}
	if cp != "" {
		if err := os.Rename(cp, filepath.Join(x.dir, compName)); err != nil {
			return fmt.Errorf("vecfile: compact: %w", err)
		}
	}
	if err := os.Rename(sp, filepath.Join(x.dir, slotsName)); err != nil {
		return fmt.Errorf("vecfile: compact: %w", err)
	}
	if err := syncDir(x.dir); err != nil {
		return fmt.Errorf("vecfile: compact: %w", err)
	}
	x.release()
	nx := &Index{dir: x.dir, opts: x.opts, extra: map[uint64]int{}}
	if err := nx.open(); err != nil {
		nx.release()
		x.closed = true
		return fmt.Errorf("vecfile: compact: reopen: %w", err)
	}
	x.slotsF, x.matF, x.matrixID, x.gen = nx.slotsF, nx.matF, nx.matrixID, nx.gen
	x.extra, x.lastID, x.slots, x.mat = nx.extra, nx.lastID, nx.slots, nx.mat
	x.compF, x.comp = nx.compF, nx.comp
	x.q4F, x.q4, x.q4Centre, x.q4Built, x.part, x.building = nx.q4F, nx.q4, nx.q4Centre, nx.q4Built, nx.part, nx.building
	x.n, x.live, x.sorted = nx.n, nx.live, nx.sorted
	x.saved = x.version
	x.startBuild() // it installs the partition once the caller gives up mu
	return nil
}

// writeCompacted writes fresh files holding the rows rows yields: slots
// at sp, matrix at mp and, unless cp is "", the companion at cp.
func (x *Index) writeCompacted(sp, mp, cp string, id uint64, rows func(func(s, row, q []byte) error) error, n int) error {
	sf, err := os.OpenFile(sp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer sf.Close()
	mf, err := os.OpenFile(mp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer mf.Close()
	mpage := make([]byte, pageSize)
	copy(mpage, matrixHeader(id))
	if _, err := mf.Write(mpage); err != nil {
		return err
	}
	if _, err := sf.Write(make([]byte, pageSize)); err != nil {
		return err
	}
	var cf *os.File
	if cp != "" {
		if cf, err = os.OpenFile(cp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
			return err
		}
		defer cf.Close()
		cpage := make([]byte, pageSize)
		copy(cpage, compHeader{dims: x.opts.Dims, matrixID: id}.encode())
		if _, err := cf.Write(cpage); err != nil {
			return err
		}
	}
	const chunk = 4096
	var sbuf, mbuf, cbuf []byte
	flush := func() error {
		if _, err := sf.Write(sbuf); err != nil {
			return err
		}
		if cf != nil {
			if _, err := cf.Write(cbuf); err != nil {
				return err
			}
		}
		_, err := mf.Write(mbuf)
		sbuf, mbuf, cbuf = sbuf[:0], mbuf[:0], cbuf[:0]
		return err
	}
	count := 0
	err = rows(func(s, row, q []byte) error {
		sbuf, mbuf, cbuf = append(sbuf, s...), append(mbuf, row...), append(cbuf, q...)
		count++
		if count%chunk == 0 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	h := header{format: x.opts.Format, dims: x.opts.Dims, gen: 1, n: uint64(n), watermark: x.watermark, matrixID: id}
	if _, err := sf.WriteAt(h.encode(), headerCopy); err != nil {
		return err
	}
	if err := mf.Sync(); err != nil {
		return err
	}
	return sf.Sync() // the companion is not synced: see Save
}

// Search returns up to k nearest live ids by cosine similarity, best
// first; ties go to the lower row (the lower id, rows being in id order).
func (x *Index) Search(q []float32, k int) ([]engine.VectorHit, error) {
	return x.SearchFilter(q, k, engine.VectorFilter{})
}

// SearchFilter is Search over the rows whose labels pass f: the scan skips
// the others, so a selective filter still yields k hits. Scope and
// session match by a 64-bit hash of the label.
func (x *Index) SearchFilter(q []float32, k int, f engine.VectorFilter) ([]engine.VectorHit, error) {
	return x.search(q, k, f, 0)
}

// SearchAfter is Search over the rows of ids above after: the rows a
// graph built up to after does not hold yet. Rows are in id order, so it
// scans only the tail of the file.
func (x *Index) SearchAfter(q []float32, k int, after uint64) ([]engine.VectorHit, error) {
	return x.search(q, k, engine.VectorFilter{}, after)
}

func (x *Index) search(q []float32, k int, f engine.VectorFilter, after uint64) (hits []engine.VectorHit, err error) {
	defer recoverTo("search", &err)
	if k <= 0 {
		return nil, fmt.Errorf("%w: got %d", ErrInvalidK, k)
	}
	norm, err := checkVector(q, x.opts.Dims)
	if err != nil {
		return nil, fmt.Errorf("vecfile: search: %w", err)
	}
	uq := make([]float32, len(q))
	for i, v := range q {
		uq[i] = float32(float64(v) / norm)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, ErrClosed
	}
	k = min(k, x.live)
	if k == 0 {
		return nil, nil
	}
	keep := x.filter(f)
	first := 0 // rows before first hold no id above after
	if after > 0 {
		first = sort.Search(x.sorted, func(i int) bool { return slotID(x.slotAt(i)) > after })
		inner := keep
		keep = func(r int) bool {
			return slotID(x.slotAt(first+r)) > after && (inner == nil || inner(first+r))
		}
	}
	var rows []vecscan.Hit
	var scales []float32 // the int8 rows' scales, from the partition of the int8 rows
	quick := false       // ranked by the 4-bit pass
	dims, n := x.opts.Dims, x.n-first
	switch x.opts.Format {
	case Int8:
		q16, qscale := quantizeQuery(uq, dims)
		rows, err = vecscan.ScanFunc(n, k, keep, func(lo, hi int, h *vecscan.Heap) {
			out := make([]int32, scanBlock)
			rb := x.rowBytes()
			floor := h.Floor()
			for b := lo; b < hi; b += scanBlock {
				m := dot8.Dots(q16[:dims], x.mat[pageSize+(first+b)*rb:], rb, out[:min(scanBlock, hi-b)])
				if m < min(scanBlock, hi-b) {
					panic("matrix shorter than its rows") // turned into ErrFault by ScanFunc
				}
				for i := range m {
					r := b + i
					s := qscale * slotScale(x.slotAt(first+r)) * float32(out[i])
					if s >= floor && (keep == nil || keep(r)) {
						h.Push(r, s)
						floor = h.Floor()
					}
				}
			}
		})
	case Int8Rescore:
		if n <= 0 {
			return nil, nil
		}
		if quick = x.usesQ4(n, k); quick {
			var match func([]byte) bool
			if isFiltered(f) {
				match = x.slotMatch(f)
			}
			rows, err = x.scanQ4(uq, k, first, n, keep, match)
		} else if p := x.part; p != nil && p.int8 && first == 0 && !isFiltered(f) {
			rows, scales, err = x.scanIVF8(uq, k, keep)
		} else {
			rows, err = x.scanQuant(x.mat, uq, k, first, n, keep)
		}
		if err == nil && scales == nil {
			vecscan.Sort(rows) // scanIVF8's are sorted, beside their scales
		}
	default:
		if n <= 0 {
			return nil, nil
		}
		if x.comp != nil {
			rows, err = x.scanInt8(uq, k, first, n, keep)
			break
		}
		mat := unsafe.Slice((*float32)(unsafe.Pointer(&x.mat[pageSize+first*dims*4])), n*dims)
		rows, err = vecscan.Scan(mat, dims, uq, k, keep)
	}
	if err != nil {
		return nil, fmt.Errorf("vecfile: search: %w", err)
	}
	hits = make([]engine.VectorHit, len(rows))
	if quick {
		// The 4-bit path keeps the resident set to the q4 file: its
		// hits' slots are read by pread, not faulted in (with the pages
		// around them) through the mapping.
		return hits, x.preadIDs(rows, first, hits)
	}
	for i, h := range rows {
		hits[i] = engine.VectorHit{ID: slotID(x.slotAt(first + h.Row)), Score: h.Score}
	}
	if x.opts.Format == Int8Rescore {
		x.setErr(uq, rows, first, scales, hits)
	}
	return hits, nil
}

// setErr sets the Err of each hit of an Int8Rescore search that read
// its rows through the mapping (rows, counting from first): a bound on
// the difference between its int8 score and the exact cosine of the
// unit vector its row was quantised from (quantizeRow). With the row's
// scale s (components r_i = v_i/s + d_i, |d_i| <= 1/2) and the query's
// q (uq_i = q*(p_i + e_i), |e_i| <= 1/2), the cosine less the int8 score
// q*s*sum(p_i*r_i) is q*s*sum(p_i*d_i + e_i*r_i + e_i*d_i): at most
// q*s*(sum|p_i|/2 + 127*dims/2 + dims/4), plus errBoundSlack for the
// float32 roundings of the two scores. The engine's rescoring skips a
// candidate this rules out of its top k (engine.VectorHit.Err). scales,
// when not nil, holds the rows' scales (read from the partition's
// entries: the matrix pages stay out of the resident set).
func (x *Index) setErr(uq []float32, rows []vecscan.Hit, first int, scales []float32, hits []engine.VectorHit) {
	dims := x.opts.Dims
	q16, qscale := quantizeQuery(uq, dims)
	var l1 float64
	for _, c := range q16 {
		l1 += math.Abs(float64(c))
	}
	per := float64(qscale) * (l1/2 + 127*float64(dims)/2 + float64(dims)/4)
	for i, h := range rows {
		var s float64
		if scales != nil {
			s = float64(scales[i])
		} else {
			s = float64(math.Float32frombits(binary.LittleEndian.Uint32(x.rowAt(first + h.Row)[dims:])))
		}
		if e := float32(per*s + errBoundSlack); e > 0 && !math.IsInf(float64(e), 0) {
			hits[i].Err = e
		}
	}
}

// errBoundSlack is added to every Err: the float32 roundings of an int8
// score (its sum, the two scales) and of the exact cosine the engine
// computes (a float32 dot product of unit vectors) are below 1e-5.
const errBoundSlack = 1e-4

// Live reports whether id has a live vector.
func (x *Index) Live(id uint64) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return false
	}
	r, ok := x.extra[id]
	if !ok {
		r, ok = x.findSorted(id)
	}
	return ok && slotFlags(x.slotAt(r))&flagLive != 0
}

// filter returns the row test of a search: live, and passing f; nil when
// every row passes. The caller holds mu for reading.
func (x *Index) filter(f engine.VectorFilter) func(int) bool {
	if !isFiltered(f) && x.live == x.n {
		return nil
	}
	match, slots := x.slotMatch(f), x.slots
	return func(r int) bool { return match(slots[pageSize+r*slotSize : pageSize+(r+1)*slotSize]) }
}

// slotMatch returns the test of a row's slot: live, and passing f.
func (x *Index) slotMatch(f engine.VectorFilter) func(s []byte) bool {
	filtered := isFiltered(f)
	scope, session := labelHash(f.Scope), labelHash(f.Session)
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if !f.From.IsZero() {
		from = timeNanos(f.From)
	}
	if !f.To.IsZero() {
		to = timeNanos(f.To)
	}
	return func(s []byte) bool {
		if slotFlags(s)&flagLive == 0 {
			return false
		}
		if !filtered {
			return true
		}
		t := slotTime(s)
		return (scope == 0 || slotScope(s) == scope) && (session == 0 || slotSession(s) == session) &&
			t >= from && t < to
	}
}

// Watermark is the last change-log sequence applied: the last Apply's, or
// the saved one after Open (0 for a new index).
func (x *Index) Watermark() uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.watermark
}

// Len is the number of live vectors.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

// Close saves the index and releases its files. Later calls return
// ErrClosed.
func (x *Index) Close() (err error) {
	defer recoverTo("close", &err)
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	if x.closed {
		return ErrClosed
	}
	x.stopBuild(false)
	err = x.save()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	// The files grew ahead of their rows: give the space back.
	errs := []error{err, unmap(x.slots), unmap(x.mat), unmap(x.comp), unmap(x.q4)}
	x.slots, x.mat, x.comp, x.q4 = nil, nil, nil, nil
	if err == nil && !x.opts.ReadOnly {
		errs = append(errs, x.slotsF.Truncate(int64(pageSize+x.n*slotSize)), x.matF.Truncate(int64(pageSize+x.n*x.rowBytes())))
		if x.compF != nil {
			errs = append(errs, x.compF.Truncate(int64(pageSize+x.n*compStride(x.opts.Dims))))
		}
		if x.q4F != nil {
			errs = append(errs, x.q4F.Truncate(int64(pageSize+x.n*q4Stride(x.opts.Dims))))
		}
	}
	return errors.Join(append(errs, x.release())...)
}

// release unmaps and closes the files. A build in the background has
// been stopped; one prepared by a failed open is dropped.
func (x *Index) release() error {
	var errs []error
	if x.building != nil {
		errs = append(errs, x.building.f.Close())
		x.building = nil
	}
	errs = append(errs, x.closeIVF(), unmap(x.slots), unmap(x.mat), unmap(x.comp), unmap(x.q4))
	x.slots, x.mat, x.comp, x.q4 = nil, nil, nil, nil
	for _, f := range []*os.File{x.slotsF, x.matF, x.compF, x.q4F} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	x.slotsF, x.matF, x.compF, x.q4F = nil, nil, nil, nil
	return errors.Join(errs...)
}

// checkVector reports whether v can be indexed or searched: dims finite
// components, not all zero. It returns v's Euclidean norm.
func checkVector(v []float32, dims int) (float64, error) {
	if len(v) != dims {
		return 0, fmt.Errorf("%w: got %d, want %d", ErrDimension, len(v), dims)
	}
	var sum float64
	for i, c := range v {
		f := float64(c)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("%w: component %d is %v", ErrNotFinite, i, c)
		}
		sum += f * f
	}
	if sum == 0 {
		return 0, ErrZeroVector
	}
	return math.Sqrt(sum), nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// recoverTo turns a panic (a fault on a mapped file that shrank under the
// index) into an error wrapping ErrCorrupt.
func recoverTo(op string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("vecfile: %s: %w: panic: %v", op, ErrCorrupt, r)
	}
}

// Range calls fn with the id and unit vector of every live row, in row
// order, until fn returns false (an Int8 or Int8Rescore index gives its
// rows' int8 approximations of them). The vector is only valid during the call
// (it points into the mapping); fn must not call the Index's writers.
// Apply, Compact and Close wait until Range returns.
func (x *Index) Range(fn func(id uint64, v []float32) bool) error {
	return x.RangeAfter(0, fn)
}

// RangeAfter is Range over the rows of ids above after.
func (x *Index) RangeAfter(after uint64, fn func(id uint64, v []float32) bool) (err error) {
	defer recoverTo("range", &err)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return ErrClosed
	}
	dims := x.opts.Dims
	var buf []float32
	first := 0
	if after > 0 {
		first = sort.Search(x.sorted, func(i int) bool { return slotID(x.slotAt(i)) > after })
	}
	for r := first; r < x.n; r++ {
		s := x.slotAt(r)
		if slotFlags(s)&flagLive == 0 || slotID(s) <= after {
			continue
		}
		var v []float32
		switch x.opts.Format {
		case Int8, Int8Rescore:
			if buf == nil {
				buf = make([]float32, dims)
			}
			row := x.rowAt(r)
			scale := slotScale(s)
			if x.opts.Format == Int8Rescore {
				scale = math.Float32frombits(binary.LittleEndian.Uint32(row[dims:]))
			}
			for i, b := range row[:dims] {
				buf[i] = float32(int8(b)) * scale
			}
			v = buf
		default:
			v = unsafe.Slice((*float32)(unsafe.Pointer(&x.mat[pageSize+r*dims*4])), dims)
		}
		if !fn(slotID(s), v) {
			return nil
		}
	}
	return nil
}
