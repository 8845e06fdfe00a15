package entity

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrCorrupt is returned by Decode for bytes Encode did not write.
var ErrCorrupt = errors.New("entity: corrupt encoding")

// codecVersion is the first byte of an encoding.
const codecVersion = 1

// maxMentions bounds the mentions one encoding may hold.
const maxMentions = 1 << 12

// Encode writes a record's scope and mentions for storage beside the
// record.
func Encode(scope string, ms []Mention) []byte {
	b := []byte{codecVersion}
	b = binary.AppendUvarint(b, uint64(len(scope)))
	b = append(b, scope...)
	b = binary.AppendUvarint(b, uint64(len(ms)))
	for _, m := range ms {
		f := byte(m.Kind)
		if m.Initial {
			f |= 0x80
		}
		b = append(b, f)
		b = binary.AppendUvarint(b, uint64(len(m.Key)))
		b = append(b, m.Key...)
	}
	return b
}

// Decode reads what Encode wrote. Bytes it did not write give
// ErrCorrupt, never a panic.
func Decode(b []byte) (scope string, ms []Mention, err error) {
	if len(b) == 0 || b[0] != codecVersion {
		return "", nil, fmt.Errorf("%w: version", ErrCorrupt)
	}
	b = b[1:]
	str := func(limit int) (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) || n > uint64(limit) {
			return "", false
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, utf8.ValidString(s)
	}
	scope, ok := str(1 << 16)
	if !ok {
		return "", nil, fmt.Errorf("%w: scope", ErrCorrupt)
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxMentions {
		return "", nil, fmt.Errorf("%w: count", ErrCorrupt)
	}
	b = b[k:]
	ms = make([]Mention, 0, n)
	for range n {
		if len(b) == 0 {
			return "", nil, fmt.Errorf("%w: truncated", ErrCorrupt)
		}
		f := b[0]
		b = b[1:]
		kind := Kind(f &^ 0x80)
		if kind != Name && kind != Date {
			return "", nil, fmt.Errorf("%w: kind %d", ErrCorrupt, kind)
		}
		key, ok := str(MaxKeyBytes)
		if !ok || key == "" {
			return "", nil, fmt.Errorf("%w: key", ErrCorrupt)
		}
		ms = append(ms, Mention{Key: key, Kind: kind, Initial: f&0x80 != 0})
	}
	if len(b) != 0 {
		return "", nil, fmt.Errorf("%w: trailing bytes", ErrCorrupt)
	}
	return scope, ms, nil
}
