package xmemory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrCorrupt is returned by the decoders for bytes the encoders did not
// write.
var ErrCorrupt = errors.New("xmemory: corrupt encoding")

// codecVersion is the first byte of every encoding.
const codecVersion = 1

// Stored is a theme as it is kept in a store: its facts and vector sum,
// the fact its summary is drawn from (Partition.Rep) and the summary.
type Stored struct {
	Theme
	Rep     uint64
	Summary string
}

// EncodeTheme writes a stored theme.
func EncodeTheme(s *Stored) []byte {
	b := []byte{codecVersion}
	b = binary.AppendUvarint(b, s.ID)
	b = binary.AppendUvarint(b, s.Rep)
	b = binary.AppendUvarint(b, uint64(len(s.Facts)))
	for _, f := range s.Facts {
		b = binary.AppendUvarint(b, f)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Sum)))
	for _, x := range s.Sum {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return append(b, s.Summary...)
}

// DecodeTheme reads what EncodeTheme wrote; other bytes give ErrCorrupt,
// never a panic.
func DecodeTheme(b []byte) (*Stored, error) {
	r := reader{b: b}
	if v := r.byte(); v != codecVersion {
		return nil, fmt.Errorf("%w: version %d", ErrCorrupt, v)
	}
	s := &Stored{}
	s.ID, s.Rep = r.uvarint(), r.uvarint()
	n := r.count(1)
	s.Facts = make([]uint64, n)
	for i := range s.Facts {
		s.Facts[i] = r.uvarint()
	}
	d := r.count(4)
	s.Sum = make([]float32, d)
	for i := range s.Sum {
		s.Sum[i] = math.Float32frombits(r.u32())
	}
	if r.err != nil {
		return nil, r.err
	}
	s.Summary = string(r.b)
	return s, nil
}

// EncodeState writes a partition's counters.
func EncodeState(st State) []byte {
	b := []byte{codecVersion}
	b = binary.AppendUvarint(b, st.Next)
	return binary.AppendUvarint(b, st.Adds)
}

// DecodeState reads what EncodeState wrote.
func DecodeState(b []byte) (State, error) {
	r := reader{b: b}
	if v := r.byte(); v != codecVersion {
		return State{}, fmt.Errorf("%w: version %d", ErrCorrupt, v)
	}
	st := State{Next: r.uvarint(), Adds: r.uvarint()}
	if r.err == nil && len(r.b) != 0 {
		r.err = ErrCorrupt
	}
	return st, r.err
}

// reader decodes, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.err = ErrCorrupt
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = ErrCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length whose items take at least size bytes each.
func (r *reader) count(size int) int {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)/size) {
		if r.err == nil {
			r.err = ErrCorrupt
		}
		return 0
	}
	return int(n)
}

func (r *reader) u32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.err = ErrCorrupt
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}
