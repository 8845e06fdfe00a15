package engine

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sync"

	"github.com/klauspost/compress/zstd"
)

const (
	recordVersion  = 1
	flagCompressed = 1 << 0
)

var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
)

func zstdCodecs() (*zstd.Encoder, *zstd.Decoder) {
	zstdOnce.Do(func() {
		// Both are safe for concurrent EncodeAll/DecodeAll; options are
		// static, so errors cannot happen.
		zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(64<<20))
	})
	return zstdEnc, zstdDec
}

// encodeRecord lays a record out as
// [version][flags][uvarint len(meta)][meta JSON][text, maybe zstd].
func encodeRecord(r *Record, compressAbove int) ([]byte, error) {
	meta := *r
	meta.Text = ""
	mb, err := json.Marshal(&meta)
	if err != nil {
		return nil, err
	}
	text := []byte(r.Text)
	var flags byte
	if len(text) > compressAbove {
		enc, _ := zstdCodecs()
		if c := enc.EncodeAll(text, nil); len(c) < len(text) {
			text, flags = c, flagCompressed
		}
	}
	out := make([]byte, 0, 2+binary.MaxVarintLen64+len(mb)+len(text))
	out = append(out, recordVersion, flags)
	out = binary.AppendUvarint(out, uint64(len(mb)))
	out = append(out, mb...)
	return append(out, text...), nil
}

// decodeRecord reverses encodeRecord. It never panics on bad input.
func decodeRecord(b []byte) (Record, error) {
	var r Record
	if len(b) < 3 || b[0] != recordVersion {
		return r, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	flags := b[1]
	n, k := binary.Uvarint(b[2:])
	if k <= 0 || n > uint64(len(b)-2-k) {
		return r, fmt.Errorf("%w: bad length", ErrCorrupt)
	}
	meta := b[2+k : 2+k+int(n)]
	if err := json.Unmarshal(meta, &r); err != nil {
		return r, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	text := b[2+k+int(n):]
	if flags&flagCompressed != 0 {
		_, dec := zstdCodecs()
		t, err := dec.DecodeAll(text, nil)
		if err != nil {
			return r, fmt.Errorf("%w: text: %v", ErrCorrupt, err)
		}
		text = t
	}
	r.Text = string(text)
	return r, nil
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte, dims int) ([]float32, error) {
	if len(b) != 4*dims {
		return nil, fmt.Errorf("%w: vector is %d bytes, want %d", ErrDims, len(b), 4*dims)
	}
	v := make([]float32, dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

func u64key(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func keyU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
