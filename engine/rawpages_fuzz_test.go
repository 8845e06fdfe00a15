package engine

import (
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRawRecords: reading a file's pages directly (salvage's fallback)
// never panics or hangs on any bytes, and every record it returns lies
// inside the file and decodes with its id.
func FuzzRawRecords(f *testing.F) {
	const ps = 512
	// A minimal valid file: two meta pages, a freelist page, one leaf
	// page holding one record.
	file := make([]byte, 5*ps)
	for i, id := range []uint64{0, 1} {
		p := file[i*ps:]
		binary.LittleEndian.PutUint64(p, id)
		binary.LittleEndian.PutUint16(p[8:], 0x04)
		m := p[pageHeaderSize:]
		binary.LittleEndian.PutUint32(m, boltMagic)
		binary.LittleEndian.PutUint32(m[4:], boltVersion)
		binary.LittleEndian.PutUint32(m[8:], ps)
		binary.LittleEndian.PutUint64(m[32:], 2) // freelist
		binary.LittleEndian.PutUint64(m[40:], 5) // pgid
		binary.LittleEndian.PutUint64(m[48:], uint64(i))
		h := fnv.New64a()
		h.Write(m[:metaChecksumAt])
		binary.LittleEndian.PutUint64(m[metaChecksumAt:], h.Sum64())
	}
	fl := file[2*ps:]
	binary.LittleEndian.PutUint64(fl, 2)
	binary.LittleEndian.PutUint16(fl[8:], freelistFlag)
	binary.LittleEndian.PutUint16(fl[10:], 1)
	binary.LittleEndian.PutUint64(fl[pageHeaderSize:], 4)
	leaf := file[3*ps:]
	binary.LittleEndian.PutUint64(leaf, 3)
	binary.LittleEndian.PutUint16(leaf[8:], leafPageFlag)
	binary.LittleEndian.PutUint16(leaf[10:], 1)
	val, err := encodeRecord(&Record{ID: 7, Text: "the tide gauge"}, 1<<20)
	if err != nil {
		f.Fatal(err)
	}
	el := leaf[pageHeaderSize:]
	binary.LittleEndian.PutUint32(el[4:], leafElementSize)
	binary.LittleEndian.PutUint32(el[8:], 8)
	binary.LittleEndian.PutUint32(el[12:], uint32(len(val)))
	copy(el[leafElementSize:], u64key(7))
	copy(el[leafElementSize+8:], val)
	seed := filepath.Join(f.TempDir(), "hmo.db")
	if err := os.WriteFile(seed, file, 0o600); err != nil {
		f.Fatal(err)
	}
	if recs, err := rawRecords(seed); err != nil || len(recs) != 1 || recs[0].id != 7 {
		f.Fatalf("the seed file gives %v, %v; want record 7", recs, err)
	}
	f.Add(file)
	f.Add(file[:3*ps])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "hmo.db")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		recs, err := rawRecords(path)
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.off < 0 || r.n < 0 || r.off+int64(r.n) > int64(len(b)) {
				t.Fatalf("record %d at %d+%d outside a %d-byte file", r.id, r.off, r.n, len(b))
			}
			got, err := decodeRecord(b[r.off : r.off+int64(r.n)])
			if err != nil || got.ID != r.id {
				t.Fatalf("record %d does not decode: %v (id %d)", r.id, err, got.ID)
			}
		}
	})
}
