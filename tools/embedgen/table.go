package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"unicode"

	"github.com/klauspost/compress/zstd"
)

// Table layout, version 1 (all integers little-endian). The reader is
// localllm/static/table.go; keep the two in step.
//
//	magic      [8]byte "HMOWVTAB"
//	version    uint16  1
//	dims       uint16
//	count      uint32  words in the table
//	sourceSize uint32  words in the source vocabulary (the Zipf prior's range)
//	quant      uint8   1 = int8 with one float32 scale per vector
//	reserved   [3]byte zero
//	sourceLen  uint16, then sourceLen bytes: the source's name and version
//	ranks      count uvarints: rank of word 0, then rank[i]-rank[i-1]
//	words      count × (uvarint length, UTF-8 bytes)
//	scales     count × float32: value = scale × int8
//	vectors    count × dims int8
//	checksum   uint32: CRC-32C (Castagnoli) of every byte before it
//
// The whole is one zstd frame.
const (
	tableMagic   = "HMOWVTAB"
	tableVersion = 1
	quantInt8Vec = 1
)

// entry is one word of the table with its source rank and float vector.
type entry struct {
	rank   int
	word   string
	vector []float64
}

// quantized is an int8 vector and its scale.
type quantized struct {
	scale float32
	q     []int8
}

// quantizeVector maps v to int8 with one scale per vector: the largest
// absolute component becomes ±127.
func quantizeVector(v []float64) quantized {
	var maxAbs float64
	for _, x := range v {
		maxAbs = math.Max(maxAbs, math.Abs(x))
	}
	out := quantized{q: make([]int8, len(v))}
	if maxAbs == 0 {
		return out
	}
	scale := float32(maxAbs / 127)
	out.scale = scale
	for i, x := range v {
		out.q[i] = int8(math.Max(-127, math.Min(127, math.Round(x/float64(scale)))))
	}
	return out
}

// encodeTable writes the uncompressed table.
func encodeTable(sourceName string, sourceSize, dims int, entries []entry) ([]byte, error) {
	if dims <= 0 || dims > math.MaxUint16 || len(sourceName) > math.MaxUint16 {
		return nil, fmt.Errorf("bad dimensions %d or source name", dims)
	}
	var b bytes.Buffer
	b.WriteString(tableMagic)
	le := binary.LittleEndian
	b.Write(le.AppendUint16(nil, tableVersion))
	b.Write(le.AppendUint16(nil, uint16(dims)))
	b.Write(le.AppendUint32(nil, uint32(len(entries))))
	b.Write(le.AppendUint32(nil, uint32(sourceSize)))
	b.Write([]byte{quantInt8Vec, 0, 0, 0})
	b.Write(le.AppendUint16(nil, uint16(len(sourceName))))
	b.WriteString(sourceName)
	prev := 0
	for i, e := range entries {
		if i > 0 && e.rank <= prev {
			return nil, fmt.Errorf("ranks not increasing at %q", e.word)
		}
		b.Write(binary.AppendUvarint(nil, uint64(e.rank-prev)))
		prev = e.rank
	}
	for _, e := range entries {
		b.Write(binary.AppendUvarint(nil, uint64(len(e.word))))
		b.WriteString(e.word)
	}
	qs := make([]quantized, len(entries))
	for i, e := range entries {
		if len(e.vector) != dims {
			return nil, fmt.Errorf("%q has %d dimensions, want %d", e.word, len(e.vector), dims)
		}
		qs[i] = quantizeVector(e.vector)
		b.Write(le.AppendUint32(nil, math.Float32bits(qs[i].scale)))
	}
	for _, q := range qs {
		for _, x := range q.q {
			b.WriteByte(byte(x))
		}
	}
	sum := crc32.Checksum(b.Bytes(), crc32.MakeTable(crc32.Castagnoli))
	b.Write(le.AppendUint32(nil, sum))
	return b.Bytes(), nil
}

// compress wraps the table in one zstd frame. A single-threaded encoder at
// a fixed level gives the same bytes on every run.
func compress(raw []byte) ([]byte, error) {
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedBestCompression),
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(true))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	return enc.EncodeAll(raw, nil), nil
}

// isWordRune reports whether r can be part of a token: a lowercase letter
// or a decimal digit.
func isWordRune(r rune) bool {
	return (unicode.IsLetter(r) && !unicode.IsUpper(r)) || unicode.IsDigit(r)
}
