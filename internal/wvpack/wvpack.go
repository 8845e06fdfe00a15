// Package wvpack is the compressed container of hmo's word-vector table
// (the table tools/embedgen writes and localllm embeds).
//
// The table's int8 components are close to incompressible for a general
// compressor (zstd at its best level keeps 95% of them), but each dimension
// has its own skewed distribution. A packed table therefore stores the
// components as one byte plane per dimension (dimension-major), each plane
// entropy-coded with huff0 from klauspost/compress, and the rest of the table
// (header, ranks, words, scales and checksum) in one zstd frame. Unpack
// returns the original table byte for byte: packing changes no vector.
//
// Layout (integers are unsigned varints):
//
//	"HMOWVPK1" dims count len(head) zstd(head)
//	dims × ceil(count/chunk) blocks: mode(1 byte) len payload
//
// head is the table without its component bytes (they sit just before the
// trailing 4-byte checksum); mode 0 stores a block raw, 1 as huff0 4X, 2 as
// one repeated byte (payload: that byte).
package wvpack

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/huff0"
	"github.com/klauspost/compress/zstd"
)

// Magic starts every packed table.
const Magic = "HMOWVPK1"

// chunk is the largest plane block; huff0 takes at most huff0.BlockSizeMax.
const chunk = 1 << 17

const (
	modeRaw  = 0
	modeHuff = 1
	modeRLE  = 2
)

// ErrPacked reports a damaged or unsupported packed table.
var ErrPacked = errors.New("wvpack: bad packed table")

// Layout says where a table's components are: dims × count bytes, row-major,
// just before the 4-byte checksum that ends the table.
type Layout struct {
	Dims, Count int
}

func (l Layout) vecBytes() int { return l.Dims * l.Count }

// Pack compresses table, whose components are laid out as l says. A
// single-threaded encoder at fixed settings gives the same bytes each run.
func Pack(table []byte, l Layout) ([]byte, error) {
	if l.Dims <= 0 || l.Count <= 0 || len(table) < l.vecBytes()+4 {
		return nil, fmt.Errorf("wvpack: %d words of %d dimensions do not fit %d bytes", l.Count, l.Dims, len(table))
	}
	vstart := len(table) - 4 - l.vecBytes()
	head := make([]byte, 0, vstart+4)
	head = append(head, table[:vstart]...)
	head = append(head, table[len(table)-4:]...)
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedBestCompression),
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(true))
	if err != nil {
		return nil, fmt.Errorf("wvpack: %w", err)
	}
	zhead := enc.EncodeAll(head, nil)
	enc.Close()

	out := []byte(Magic)
	out = binary.AppendUvarint(out, uint64(l.Dims))
	out = binary.AppendUvarint(out, uint64(l.Count))
	out = binary.AppendUvarint(out, uint64(len(zhead)))
	out = append(out, zhead...)
	vecs := table[vstart : vstart+l.vecBytes()]
	plane := make([]byte, l.Count)
	var s huff0.Scratch
	for d := 0; d < l.Dims; d++ {
		for i := range plane {
			plane[i] = vecs[i*l.Dims+d]
		}
		for off := 0; off < l.Count; off += chunk {
			block := plane[off:min(off+chunk, l.Count)]
			s.Reuse = huff0.ReusePolicyNone
			packed, _, err := huff0.Compress4X(block, &s)
			switch {
			case err == nil:
				out = append(out, modeHuff)
				out = binary.AppendUvarint(out, uint64(len(packed)))
				out = append(out, packed...)
			case errors.Is(err, huff0.ErrUseRLE):
				out = append(out, modeRLE)
				out = binary.AppendUvarint(out, 1)
				out = append(out, block[0])
			case errors.Is(err, huff0.ErrIncompressible):
				out = append(out, modeRaw)
				out = binary.AppendUvarint(out, uint64(len(block)))
				out = append(out, block...)
			default:
				return nil, fmt.Errorf("wvpack: dimension %d: %w", d, err)
			}
		}
	}
	return out, nil
}

// IsPacked reports whether b starts like a packed table.
func IsPacked(b []byte) bool { return bytes.HasPrefix(b, []byte(Magic)) }

// Unpack returns the table packed in b. maxBytes bounds the table's size.
func Unpack(b []byte, maxBytes int) ([]byte, error) {
	if !IsPacked(b) {
		return nil, fmt.Errorf("%w: no magic", ErrPacked)
	}
	r := reader{b: b, off: len(Magic)}
	dims, count, zlen := r.uvarint(), r.uvarint(), r.uvarint()
	if r.err != nil || dims == 0 || count == 0 || dims > uint64(maxBytes) || count > uint64(maxBytes)/dims || zlen > uint64(len(b)) {
		return nil, fmt.Errorf("%w: header", ErrPacked)
	}
	l := Layout{Dims: int(dims), Count: int(count)}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(maxBytes)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPacked, err)
	}
	head, err := dec.DecodeAll(r.next(int(zlen)), nil)
	dec.Close()
	if r.err != nil || err != nil || len(head) < 4 || len(head)+l.vecBytes() > maxBytes {
		return nil, fmt.Errorf("%w: head: %v", ErrPacked, err)
	}
	vstart := len(head) - 4
	table := make([]byte, len(head)+l.vecBytes())
	copy(table, head[:vstart])
	copy(table[len(table)-4:], head[vstart:])
	vecs := table[vstart : vstart+l.vecBytes()]
	// The blocks are located first, then decoded and transposed (in tiles of
	// rows, so both sides stay in cache) by one goroutine per core.
	type block struct {
		mode    byte
		payload []byte
		dst     []byte
	}
	planes := make([]byte, l.vecBytes())
	blocks := make([]block, 0, l.Dims*((l.Count+chunk-1)/chunk))
	for d := 0; d < l.Dims; d++ {
		for off := 0; off < l.Count; off += chunk {
			mode := r.byte()
			payload := r.next(int(r.uvarint()))
			if r.err != nil {
				return nil, fmt.Errorf("%w: dimension %d: %v", ErrPacked, d, r.err)
			}
			dst := planes[d*l.Count+off : d*l.Count+min(off+chunk, l.Count)]
			blocks = append(blocks, block{mode, payload, dst})
		}
	}
	if r.off != len(b) {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrPacked, len(b)-r.off)
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), len(blocks)))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s *huff0.Scratch
			for i := w; i < len(blocks); i += workers {
				if s, errs[w] = decodeBlock(blocks[i].mode, blocks[i].payload, blocks[i].dst, s); errs[w] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPacked, err)
	}
	const tile = 256
	tiles := (l.Count + tile - 1) / tile
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := w; t < tiles; t += workers {
				i0, i1 := t*tile, min((t+1)*tile, l.Count)
				for d := 0; d < l.Dims; d++ {
					plane := planes[d*l.Count:]
					for i := i0; i < i1; i++ {
						vecs[i*l.Dims+d] = plane[i]
					}
				}
			}
		}()
	}
	wg.Wait()
	return table, nil
}

// decodeBlock decodes one block of a plane into dst, reusing s.
func decodeBlock(mode byte, payload, dst []byte, s *huff0.Scratch) (*huff0.Scratch, error) {
	n := len(dst)
	switch mode {
	case modeRaw:
		if len(payload) != n {
			return s, fmt.Errorf("raw block of %d bytes, want %d", len(payload), n)
		}
		copy(dst, payload)
	case modeRLE:
		if len(payload) != 1 {
			return s, errors.New("bad repeat block")
		}
		for i := range dst {
			dst[i] = payload[0]
		}
	case modeHuff:
		s, rest, err := huff0.ReadTable(payload, s)
		if err != nil {
			return s, err
		}
		s.MaxDecodedSize = n
		got, err := s.Decoder().Decompress4X(dst[:0:n], rest)
		if err != nil || len(got) != n {
			return s, fmt.Errorf("huff0 block: %d of %d bytes: %v", len(got), n, err)
		}
		return s, nil
	default:
		return s, fmt.Errorf("block mode %d", mode)
	}
	return s, nil
}

// reader reads varints and slices, remembering the first error.
type reader struct {
	b   []byte
	off int
	err error
}

var errShort = errors.New("truncated")

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.off += n
	return v
}

func (r *reader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.err = errShort
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *reader) next(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.off {
		r.err = errShort
		return nil
	}
	r.off += n
	return r.b[r.off-n : r.off]
}
