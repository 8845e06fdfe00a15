package fts_test

import (
	"testing"

	"github.com/hmo-dev/hmo/fts"
)

// FuzzStoredIDAt: a stored entry's bytes, whatever they are, parse
// without a panic, and an id that parses lies inside the file.
func FuzzStoredIDAt(f *testing.F) {
	// A record's entry as zapx writes it: metadata of 1 byte (the id's
	// length, 6), data of 7 (the id, then snappy's empty block).
	f.Add([]byte{1, 7, 6, '1', '2', '3', '4', '5', '6', 0}, uint64(10))
	f.Add([]byte{1, 7, 6, '1', '2', '3', '4', '5', '6', 0, 9, 9}, uint64(4096))
	f.Add([]byte{0x80}, uint64(1))
	f.Add([]byte{2, 30, 20, 3}, uint64(40))
	f.Fuzz(func(t *testing.T, b []byte, room uint64) {
		if room < uint64(len(b)) {
			room = uint64(len(b))
		}
		start, n, ok := fts.StoredIDAt(b, room)
		if !ok {
			return
		}
		if start < 3 || start+n > room || start+n < start {
			t.Fatalf("entry %x in %d bytes: id at %d, %d bytes: outside the file", b, room, start, n)
		}
	})
}

func TestStoredIDAt(t *testing.T) {
	for _, c := range []struct {
		name     string
		b        []byte
		room     uint64
		start, n uint64
		ok       bool
	}{
		{"a record's entry", []byte{1, 7, 6, '1', '2', '3', '4', '5', '6', 0}, 10, 3, 6, true},
		{"an entry longer than the read", []byte{3, 40, 20, 1, 2}, 100, 5, 20, true},
		{"data past the file", []byte{1, 7, 6, '1', '2'}, 5, 0, 0, false},
		{"an id longer than the data", []byte{1, 2, 6, '1', '2'}, 5, 0, 0, false},
		{"a cut length", []byte{0x80}, 1, 0, 0, false},
		{"no metadata", []byte{0, 1, 0}, 3, 0, 0, false},
	} {
		start, n, ok := fts.StoredIDAt(c.b, c.room)
		if start != c.start || n != c.n || ok != c.ok {
			t.Errorf("%s: got %d, %d, %v; want %d, %d, %v", c.name, start, n, ok, c.start, c.n, c.ok)
		}
	}
}
