package hnsw

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// The sidecar ("meta") file, little-endian:
//
//	magic      [8]byte  "hmohnsw\x00"
//	version    uint32   formatVersion
//	dims       uint32
//	watermark  uint64
//	gen        uint64   save generation, >= 1; the graph file is graphName(gen)
//	graphSize  uint64   length of the graph file; 0 if there is none
//	graphCRC   uint32   CRC-32C of the graph file
//	nslots     uint64
//	slots      nslots × {id uint64, state uint8 (0 live, 1 tombstone),
//	                     and if live its unit vector, dims × float32}
//	crc        uint32   CRC-32C of all the bytes above
//
// The meta file alone holds the index's content; the graph file, when
// present, is github.com/coder/hnsw's Export of the graph over the slots.
const (
	metaMagic     = "hmohnsw\x00"
	formatVersion = 1
	metaHeaderLen = 52
	slotLen       = 9 // id and state, without the vector
	// graphEncoding is the version coder/hnsw writes at the head of an
	// exported graph; checkGraph understands only this one.
	graphEncoding = 1
	// unitTolerance is how far a saved vector's norm may stray from 1.
	unitTolerance = 1e-3
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// meta is the decoded sidecar.
type meta struct {
	dims      int
	watermark uint64
	gen       uint64
	graphSize uint64
	graphCRC  uint32
	ids       []uint64
	dead      []bool
	vecs      [][]float32 // nil for tombstones
	alloc     arena       // holds vecs after decodeMeta
}

func (m *meta) encode() []byte {
	live := 0
	for _, d := range m.dead {
		if !d {
			live++
		}
	}
	b := make([]byte, 0, metaHeaderLen+slotLen*len(m.ids)+4*m.dims*live+4)
	le := binary.LittleEndian
	b = append(b, metaMagic...)
	b = le.AppendUint32(b, formatVersion)
	b = le.AppendUint32(b, uint32(m.dims))
	b = le.AppendUint64(b, m.watermark)
	b = le.AppendUint64(b, m.gen)
	b = le.AppendUint64(b, m.graphSize)
	b = le.AppendUint32(b, m.graphCRC)
	b = le.AppendUint64(b, uint64(len(m.ids)))
	for s, id := range m.ids {
		b = le.AppendUint64(b, id)
		if m.dead[s] {
			b = append(b, 1)
			continue
		}
		b = append(b, 0)
		for _, x := range m.vecs[s] {
			b = le.AppendUint32(b, math.Float32bits(x))
		}
	}
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeMeta parses a sidecar saved with dims. Every failure wraps
// ErrCorrupt.
func decodeMeta(b []byte, dims int) (*meta, error) {
	if len(b) < metaHeaderLen+4 {
		return nil, fmt.Errorf("%w: meta too short (%d bytes)", ErrCorrupt, len(b))
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: meta checksum mismatch", ErrCorrupt)
	}
	if string(body[:8]) != metaMagic {
		return nil, fmt.Errorf("%w: not an hnsw meta file", ErrCorrupt)
	}
	le := binary.LittleEndian
	if v := le.Uint32(body[8:]); v != formatVersion {
		return nil, fmt.Errorf("%w: format version %d, want %d", ErrCorrupt, v, formatVersion)
	}
	if d := le.Uint32(body[12:]); uint64(d) != uint64(dims) {
		return nil, fmt.Errorf("%w: saved with dims %d, want %d", ErrCorrupt, d, dims)
	}
	m := &meta{
		dims:      dims,
		watermark: le.Uint64(body[16:]),
		gen:       le.Uint64(body[24:]),
		graphSize: le.Uint64(body[32:]),
		graphCRC:  le.Uint32(body[40:]),
		alloc:     arena{dims: dims},
	}
	n, rest := le.Uint64(body[44:]), body[metaHeaderLen:]
	if m.gen == 0 || n > uint64(len(rest))/slotLen {
		return nil, fmt.Errorf("%w: meta header inconsistent", ErrCorrupt)
	}
	if err := m.decodeSlots(rest, int(n)); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeSlots parses the n slots that make up p.
func (m *meta) decodeSlots(p []byte, n int) error {
	m.ids, m.dead, m.vecs = make([]uint64, n), make([]bool, n), make([][]float32, n)
	live := make(map[uint64]bool)
	vecLen := 4 * m.dims
	for s := range n {
		if len(p) < slotLen {
			return fmt.Errorf("%w: meta truncated at slot %d", ErrCorrupt, s)
		}
		id, state := binary.LittleEndian.Uint64(p), p[8]
		m.ids[s], p = id, p[slotLen:]
		switch {
		case state == 1:
			m.dead[s] = true
			continue
		case state != 0:
			return fmt.Errorf("%w: slot %d state %d", ErrCorrupt, s, state)
		case live[id]:
			return fmt.Errorf("%w: id %d live twice", ErrCorrupt, id)
		case len(p) < vecLen || !isUnit(p[:vecLen]):
			return fmt.Errorf("%w: slot %d vector truncated or not unit", ErrCorrupt, s)
		}
		live[id] = true
		v := m.alloc.alloc()
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
		}
		m.vecs[s], p = v, p[vecLen:]
	}
	if len(p) != 0 {
		return fmt.Errorf("%w: %d bytes after the slots", ErrCorrupt, len(p))
	}
	return nil
}

// isUnit reports whether p encodes a finite vector of norm 1.
func isUnit(p []byte) bool {
	var sum float64
	for o := 0; o+4 <= len(p); o += 4 {
		x := float64(math.Float32frombits(binary.LittleEndian.Uint32(p[o:])))
		sum += x * x
	}
	return math.Abs(math.Sqrt(sum)-1) <= unitTolerance
}

// decoder reads coder/hnsw's graph encoding from a byte slice, bounding
// every count by the bytes left, so a damaged file costs no more memory
// than its size.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: graph: %s", ErrCorrupt, fmt.Sprintf(format, a...))
	}
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.fail("truncated")
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a varint count in [lo, hi].
func (d *decoder) count(what string, lo, hi int) int {
	v := d.varint()
	if d.err == nil && (v < int64(lo) || v > int64(hi)) {
		d.fail("%s %d out of range [%d, %d]", what, v, lo, hi)
		return 0
	}
	return int(v)
}

func (d *decoder) uint64() uint64 {
	if p := d.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// checkGraph verifies that b is a coder/hnsw export that Import can load
// without panicking and that Search can walk: the right encoding and
// distance, vectors of dims finite unit components, layers that are
// non-empty and each within the one below, base layer keys exactly
// 0..nslots-1, and neighbours that exist in their layer.
func checkGraph(b []byte, dims, nslots int) error {
	d := &decoder{b: b}
	if v := d.varint(); d.err == nil && v != graphEncoding {
		d.fail("encoding version %d", v)
	}
	d.varint() // M
	d.take(8)  // Ml
	d.varint() // EfSearch
	name := d.take(d.count("distance name length", 0, len(distanceName)))
	if d.err == nil && string(name) != distanceName {
		d.fail("distance %q", name)
	}
	nodeLen := 8 + 1 + 4*dims + 1 // key, vector length, vector, neighbour count
	minLayers := min(nslots, 1)
	nlayers := d.count("layer count", minLayers, min(nslots, len(d.b)/nodeLen))
	var below []bool
	for i := 0; i < nlayers && d.err == nil; i++ {
		below = checkLayer(d, i, below, dims, nslots, nodeLen)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.err
}

// checkLayer checks layer i and returns its key set. below is the key set
// of layer i-1 (nil for the base layer).
func checkLayer(d *decoder, i int, below []bool, dims, nslots, nodeLen int) []bool {
	lo := 1
	if i == 0 {
		lo = nslots
	}
	n := d.count("node count", lo, min(nslots, len(d.b)/nodeLen))
	in := make([]bool, nslots)
	var nbrs []uint64
	for j := 0; j < n && d.err == nil; j++ {
		key := d.uint64()
		switch {
		case d.err != nil:
		case key >= uint64(nslots):
			d.fail("layer %d: key %d beyond %d slots", i, key, nslots)
		case in[key]:
			d.fail("layer %d: key %d twice", i, key)
		case below != nil && !below[key]:
			d.fail("layer %d: key %d missing below", i, key)
		}
		if d.err != nil {
			break
		}
		in[key] = true
		d.count("vector length", dims, dims)
		if p := d.take(4 * dims); d.err == nil && !isUnit(p) {
			d.fail("layer %d: key %d: vector not unit", i, key)
		}
		m := d.count("neighbour count", 0, len(d.b)/8)
		for range m {
			nbrs = append(nbrs, d.uint64())
		}
	}
	for _, k := range nbrs {
		if d.err == nil && (k >= uint64(nslots) || !in[k]) {
			d.fail("layer %d: neighbour %d not in layer", i, k)
		}
	}
	return in
}
