package persona_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzUnmarshalBinary: no input panics; an accepted input re-encodes to a
// canonical form that decodes to the same bytes again. Each input is
// tried as is and with a valid checksum appended, so that the fuzzer gets
// past the checksum into the parser.
func FuzzUnmarshalBinary(f *testing.F) {
	for _, n := range []int{0, 1, 12} {
		data, err := trained(f, nil, n, uint64(n)).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)-4]) // the body: sealed below
	}
	f.Add([]byte("HMOP\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
		sum := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))
		checkDecode(t, binary.LittleEndian.AppendUint32(bytes.Clone(data), sum))
	})
}

func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	p := newPersona(t, nil)
	if err := p.UnmarshalBinary(data); err != nil {
		return
	}
	enc, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	q := newPersona(t, nil)
	if err := q.UnmarshalBinary(enc); err != nil {
		t.Fatalf("re-encoding rejected: %v", err)
	}
	again, _ := q.MarshalBinary()
	if !bytes.Equal(enc, again) {
		t.Fatal("encoding not canonical after one round trip")
	}
	p.Alignment(make([]float32, p.Dims()))
	_ = p.Profile().String()
}
