package fts

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	zap "github.com/blevesearch/zapx/v17"
)

// FuzzZapRead: readZapField on a damaged zap segment file neither panics
// nor hangs, and every posting it returns is inside the segment (a
// document below its count, a length the norm allows). The damage is
// one patch of the fuzzer's bytes at the fuzzer's offset in a segment
// holding lists of one posting and of several chunks; a file zap itself
// refuses (or panics on) is skipped, since readZapField never sees it.
func FuzzZapRead(f *testing.F) {
	dir := filepath.Join(f.TempDir(), "text")
	x, err := Open(dir, nil)
	if err != nil {
		f.Fatal(err)
	}
	docs := corpus(2000)
	for i := range docs[:1500] {
		docs[i].Text += strings.Repeat(" walrus", 1+i%3)
	}
	docs[1234].Text += " zebra"
	if err := x.Apply(docs, nil, uint64(len(docs))); err != nil {
		f.Fatal(err)
	}
	terms := distinct(x.terms("the cat walrus zebra user assistant"))
	if err := x.Close(); err != nil {
		f.Fatal(err)
	}
	segs, err := filepath.Glob(filepath.Join(dir, "store", "*.zap"))
	if err != nil || len(segs) == 0 {
		f.Fatalf("no zap segment under %s (%v)", dir, err)
	}
	intact, err := os.ReadFile(segs[0])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint32(0), []byte{})                             // intact
	f.Add(uint32(len(intact)/2), []byte{0xff, 0xff, 0xff}) // the middle: postings
	f.Add(uint32(len(intact)/3), binary.AppendUvarint(nil, 1<<40))
	f.Add(uint32(len(intact)-40), []byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, at uint32, patch []byte) {
		data := append([]byte(nil), intact...)
		copy(data[int(at)%len(data):], patch)
		path := filepath.Join(t.TempDir(), "seg.zap")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		seg := openZap(path)
		if seg == nil {
			return
		}
		defer seg.Close()
		count, read := seg.Count(), 0
		for _, term := range terms {
			for _, field := range bm25Fields {
				var l fieldList
				ok, err := readZapField(context.Background(), seg, &l, field, term, count)
				if err != nil && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%s %q: %v, not ErrCorrupt", field, term, err)
				}
				if !ok || err != nil {
					continue
				}
				read += len(l.docs)
				if len(l.docs) != len(l.post) {
					t.Fatalf("%s %q: %d documents, %d postings", field, term, len(l.docs), len(l.post))
				}
				for _, d := range l.docs {
					if uint64(d) >= count {
						t.Fatalf("%s %q: document %d of %d", field, term, d, count)
					}
				}
			}
		}
		if len(patch) == 0 && read < 1500 {
			t.Fatalf("the intact segment: %d postings read; the target reads too little", read)
		}
	})
}

// openZap opens a segment file, or returns nil when zap refuses it or
// panics on it.
func openZap(path string) (seg *zap.Segment) {
	defer func() {
		if recover() != nil {
			seg = nil
		}
	}()
	s, err := (&zap.ZapPlugin{}).Open(path)
	if err != nil {
		return nil
	}
	zs, ok := s.(*zap.Segment)
	if !ok {
		s.Close()
		return nil
	}
	return zs
}
