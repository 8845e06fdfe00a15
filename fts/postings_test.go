package fts

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hmo-dev/hmo/engine"
)

// TestPostingsCacheExact: the top k read from decoded, cached postings is
// the top k of every live document, whatever the cache holds, as
// documents are deleted and replaced in segments whose postings are
// cached, new segments come, segments merge, and an older snapshot is
// searched after the index moved on. The cache sizes: none, a few lists
// (lists are refused and replaced all along), and the default (every
// list fits).
func TestPostingsCacheExact(t *testing.T) {
	eachWay(t, testPostingsCacheExact)
}

func testPostingsCacheExact(t *testing.T) {
	defer func(m int) { offHeapMin = m }(offHeapMin)
	for _, c := range []struct {
		size    int64
		offHeap int // offHeapMin
	}{{-1, offHeapMin}, {6 << 10, offHeapMin}, {0, offHeapMin}, {6 << 10, 0}, {0, 0}} {
		size := c.size
		offHeapMin = c.offHeap
		t.Run(fmt.Sprintf("cache=%d/offheap=%d", size, c.offHeap), func(t *testing.T) {
			x, err := Open(filepath.Join(t.TempDir(), "text"), &Options{PostingsCache: size})
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			docs := corpus(1500)
			live := map[uint64]engine.TextDoc{}
			for i := 0; i < 1200; i += 150 { // several segments
				if err := x.Apply(docs[i:i+150], nil, uint64(i+1)); err != nil {
					t.Fatal(err)
				}
				for _, d := range docs[i : i+150] {
					live[d.ID] = d
				}
			}
			check := func(step string) {
				t.Helper()
				for _, q := range queries {
					for _, f := range filters() {
						want := x.bruteForce(t, q, f, live)
						for _, k := range []int{1, 10, 100} {
							got, err := x.Search(context.Background(), q, k, f)
							if err != nil {
								t.Fatal(err)
							}
							sameTop(t, fmt.Sprintf("%s: %q %+v k=%d", step, q, f, k), got, want[:min(k, len(want))])
						}
					}
				}
				if b, _ := x.postings.size(); b > max(size, 0) && size != 0 || size == 0 && b > DefaultPostingsCache {
					t.Errorf("%s: the cache holds %d bytes, over its bound", step, b)
				}
			}
			check("segments")
			if _, n := x.postings.size(); size == 0 && n == 0 {
				t.Fatal("the default cache kept no postings")
			}
			// An older snapshot, searched once the index moved on.
			old, err := x.s.Reader()
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close()
			oldLive := maps.Clone(live)

			// Deletions and replacements in cached segments, and a new
			// segment, in one batch.
			var deleted []uint64
			for id := uint64(2); id <= 1200; id += 9 {
				deleted = append(deleted, id)
				delete(live, id)
			}
			var batch []engine.TextDoc
			for i, id := range []uint64{5, 151, 600, 1198} {
				d := live[id]
				d.Text = []string{"cat cat cat budget", "Paris", "meeting notes", "lake lake pottery"}[i]
				d.Context = ""
				batch = append(batch, d)
				live[id] = d
			}
			batch = append(batch, docs[1200:1350]...)
			for _, d := range docs[1200:1350] {
				live[d.ID] = d
			}
			if err := x.Apply(batch, deleted, 2000); err != nil {
				t.Fatal(err)
			}
			check("deleted and replaced")
			for _, q := range queries {
				for _, k := range []int{1, 10, 100} {
					terms := distinct(x.terms(q))
					got, _, err := x.topK(context.Background(), old, terms, engine.TextFilter{}, k, 0, nil)
					if err != nil {
						t.Fatal(err)
					}
					sortHits(got)
					want := x.bruteForceIn(t, old, q, engine.TextFilter{}, oldLive)
					sameTop(t, fmt.Sprintf("older snapshot: %q k=%d", q, k), got, want[:min(k, len(want))])
				}
			}
			// Every segment merged into one, under a new id; then more
			// deletions in it.
			if err := x.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
			check("merged")
			deleted = deleted[:0]
			for id := uint64(3); id <= 1350; id += 7 {
				if _, ok := live[id]; ok {
					deleted = append(deleted, id)
					delete(live, id)
				}
			}
			if err := x.Apply(docs[1350:], deleted, 3000); err != nil {
				t.Fatal(err)
			}
			for _, d := range docs[1350:] {
				live[d.ID] = d
			}
			check("merged, then deleted")
		})
	}
}

// TestPostingsCacheConcurrent: searches running together, with a cache
// that holds a few lists outside the Go heap and replaces them all along
// (a list dropped while another search reads it is released only when
// that search is done), each find the exact top k. Run it with -race.
func TestPostingsCacheConcurrent(t *testing.T) {
	defer func(m int) { offHeapMin = m }(offHeapMin)
	offHeapMin = 0
	docs := corpus(1200)
	x, err := Open(filepath.Join(t.TempDir(), "text"), &Options{PostingsCache: 24 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	live := map[uint64]engine.TextDoc{}
	for i := 0; i < len(docs); i += 200 {
		if err := x.Apply(docs[i:i+200], nil, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range docs {
		live[d.ID] = d
	}
	want := map[string][]engine.TextHit{}
	for _, q := range queries {
		want[q] = x.bruteForce(t, q, engine.TextFilter{}, live)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 15 {
				for i := range queries {
					q := queries[(i+g*3+round)%len(queries)]
					got, err := x.Search(context.Background(), q, 10, engine.TextFilter{})
					if err != nil {
						errs <- err.Error()
						return
					}
					sameTop(t, fmt.Sprintf("%q", q), got, want[q][:min(10, len(want[q]))])
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if b, _ := x.postings.size(); b > 24<<10 {
		t.Errorf("the cache holds %d bytes, over its bound", b)
	}
	x.postings.mu.Lock()
	mapped := 0
	for _, p := range x.postings.entries {
		if p.mem != nil {
			mapped++
		}
	}
	dropped := x.postings.dropped
	x.postings.mu.Unlock()
	if mapped == 0 || dropped == 0 {
		t.Errorf("%d lists outside the heap, %d dropped: the test exercises neither", mapped, dropped)
	}
}

// TestPostingsLists: a word's postings merged from its fields return
// each field's frequency and length, in one field or several, small or
// too large to pack; the live postings of each field, with deleted
// documents, are those of the fields' lists without them; and the best
// postings of each field (front) hold its best normalised frequency.
func TestPostingsLists(t *testing.T) {
	// Documents close together (numbered in blocks under a base) and
	// far apart (numbered in full).
	// Lengths of few values (the postings' encs coded in a byte, under
	// a dictionary) and of many (the encs kept whole).
	for _, gap := range []uint32{1, 600} {
		for _, lengths := range []uint32{40, 400} {
			t.Run(fmt.Sprintf("gap=%d/lengths=%d", gap, lengths), func(t *testing.T) { testPostingsList(t, gap, lengths) })
		}
	}
}

func testPostingsList(t *testing.T, gap, lengths uint32) {
	var fl [nFields]fieldList
	add := func(f int, doc, tf, dl uint32) {
		fl[f].docs = append(fl[f].docs, doc*gap)
		fl[f].post = append(fl[f].post, fieldPosting{tf, dl})
	}
	for d := uint32(0); d < 3000; d++ {
		switch {
		case d%3 == 0:
			add(fText, d, 1+d%5, 1+d%lengths)
		case d%7 == 1:
			add(fText, d, 2, 9)
			add(fContext, d, 1, 30)
		case d%11 == 2:
			add(fRole, d, 1, 1)
		case d == 500:
			add(fText, d, encMaxTF+1, 3) // too frequent to pack
		case d == 501:
			add(fContext, d, 1, encMaxDL+1) // too long to pack
		case d%13 == 5:
			add(fContext, d, 0, 4) // a posting without frequency
		}
	}
	p, err := mergeFields(&fl)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32][nFields]*fieldPosting{}
	for f, l := range fl {
		for i, d := range l.docs {
			w := want[d]
			w[f] = &l.post[i]
			want[d] = w
		}
	}
	if p.n != len(want) {
		t.Fatalf("%d documents, want %d", p.n, len(want))
	}
	for i := range p.n {
		d := p.doc(i)
		if i > 0 && d <= p.doc(i-1) {
			t.Fatalf("document %d after %d", d, p.doc(i-1))
		}
		for f := range nFields {
			w := want[d][f]
			if got := p.fields(i)[f]; w == nil && got != (fieldPosting{}) || w != nil && got != *w {
				t.Errorf("document %d field %d: %+v, want %+v", d, f, got, w)
			}
			if p.inField(i, f) != (w != nil) {
				t.Errorf("document %d field %d: in the field %t, want %t", d, f, p.inField(i, f), w != nil)
			}
		}
	}
	if wide := len(p.gaps) > p.n; wide != (gap > 1) {
		t.Errorf("gaps of more than a byte: %t", wide)
	}
	if coded := p.code != nil; coded != (lengths < 100) {
		t.Errorf("encs coded in a byte: %t", coded)
	}
	// A walk by next meets every document; seek finds the first document
	// at or after any number, from any place before it.
	c := p.start()
	for i := range p.n {
		if c.i != i || c.doc != p.doc(i) {
			t.Fatalf("next: posting %d of document %d, want %d of %d", c.i, c.doc, i, p.doc(i))
		}
		p.next(&c)
	}
	if c.i != p.n || c.doc != noDoc {
		t.Fatalf("next past the end: posting %d of document %d", c.i, c.doc)
	}
	for _, from := range []int{0, 1, blockLen - 1, blockLen, blockLen + 1, 1000, p.n - 1, p.n} {
		for v := uint32(0); v <= 3001*gap; v += 1 + gap*7/3 {
			checkSeek(t, p, p.doc, from, v)
		}
	}
	for _, del := range [][]uint32{nil, {0, 1, 2, 500, 501, 2999}, {4000}, evens(3000), evens(100)} {
		for i := range del {
			del[i] *= gap
		}
		got := p.liveCount(del)
		dead := map[uint32]bool{}
		for _, d := range del {
			dead[d] = true
		}
		for f, l := range fl {
			n := 0
			for _, d := range l.docs {
				if !dead[d] {
					n++
				}
			}
			if int(got[f]) != n {
				t.Errorf("%d deleted: field %d has %d live postings, want %d", len(del), f, got[f], n)
			}
		}
	}
	s := &queryScorer{w: [nFields]float64{1, 0.5, 1}, avg: [nFields]float64{12, 20, 1}, b: 0.75, k1: 1.2}
	for f, l := range fl {
		best, front := 0.0, 0.0
		for _, fp := range l.post {
			best = max(best, s.fieldTF(f, float64(fp.tf), float64(fp.dl)))
		}
		for _, fp := range p.front[f] {
			front = max(front, s.fieldTF(f, float64(fp.tf), float64(fp.dl)))
		}
		if best != front {
			t.Errorf("field %d: the front's best is %v, want %v", f, front, best)
		}
	}
}

func evens(n uint32) []uint32 {
	var out []uint32
	for d := uint32(0); d < n; d += 2 {
		out = append(out, d)
	}
	return out
}

// TestPostingsCachePolicy: the cache stays within its bound; a workload
// cycling over more lists than fit keeps hitting the lists it holds
// (replacing each list by the next would never hit); and a list asked
// for more often than those held replaces them.
func TestPostingsCachePolicy(t *testing.T) {
	list := func(n int) *postings {
		var fl [nFields]fieldList
		for d := range uint32(n) {
			fl[fText].docs = append(fl[fText].docs, d)
			fl[fText].post = append(fl[fText].post, fieldPosting{1, 5})
		}
		p, err := mergeFields(&fl)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := list(1000).bytes()
	c := newPostingsCache(4 * one) // four lists
	key := func(i int) postingsKey { return postingsKey{seg: 1, count: 5000, term: fmt.Sprint("w", i)} }
	ask := func(i int) bool {
		if c.get(key(i)) != nil {
			return true
		}
		c.put(key(i), list(1000))
		if b, _ := c.size(); b > c.max {
			t.Fatalf("the cache holds %d bytes, bound %d", b, c.max)
		}
		return false
	}
	hits := 0
	for round := range 20 {
		for i := range 8 {
			if ask(i) && round >= 10 {
				hits++
			}
		}
	}
	if hits < 10*3 {
		t.Errorf("cycling over 8 lists with room for 4: %d hits in 10 rounds, want at least 30", hits)
	}
	for range 100 {
		ask(99)
	}
	if c.get(key(99)) == nil {
		t.Error("a list asked for 100 times is not kept")
	}
	if c := newPostingsCache(0); c.get(key(1)) != nil {
		t.Error("a cache of no bytes holds a list")
	} else if c.put(key(1), list(10)); c.get(key(1)) != nil {
		t.Error("a cache of no bytes keeps a list")
	}
}

// TestPostingsSeekMixedGaps: seek finds the first document at or after
// any number, from any place before it, in lists whose gaps mix one byte
// and several (seek passes runs of one-byte gaps eight at a time, and
// steps through the others), with sums of eight gaps above and below
// the distance to the target.
func TestPostingsSeekMixedGaps(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name string
		gap  func() uint32
	}{
		{"ones", func() uint32 { return 1 }},
		{"small", func() uint32 { return 1 + uint32(r.IntN(127)) }},
		{"byte-edge", func() uint32 { return 126 + uint32(r.IntN(4)) }},
		{"mixed", func() uint32 {
			if r.IntN(9) == 0 {
				return 128 + uint32(r.IntN(20000))
			}
			return 1 + uint32(r.IntN(40))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fl [nFields]fieldList
			doc := uint32(0)
			for i := range 1500 {
				if i > 0 {
					doc += tc.gap()
				}
				fl[fText].docs = append(fl[fText].docs, doc)
				fl[fText].post = append(fl[fText].post, fieldPosting{tf: 1, dl: 5})
			}
			p, err := mergeFields(&fl)
			if err != nil {
				t.Fatal(err)
			}
			docs := fl[fText].docs
			for _, from := range []int{0, 1, 7, 8, 9, blockLen - 1, blockLen, 700, p.n - 9, p.n - 1, p.n} {
				for v := uint32(0); v <= docs[len(docs)-1]+2; v += 1 + uint32(r.IntN(300)) {
					c, want := checkSeek(t, p, func(i int) uint32 { return docs[i] }, from, v)
					// The cursor walks on from there as next walks.
					if want < p.n-1 {
						if p.next(&c); c.doc != docs[want+1] {
							t.Fatalf("next after seek to %d: document %d, want %d", v, c.doc, docs[want+1])
						}
					}
				}
			}
		})
	}
}

// checkSeek moves a cursor from posting from, then seeks it to document
// v, and checks where it stops against a walk of doc (the document of
// each posting). It returns the cursor and its posting.
func checkSeek(t *testing.T, p *postings, doc func(int) uint32, from int, v uint32) (cursor, int) {
	t.Helper()
	want := from
	for want < p.n && doc(want) < v {
		want++
	}
	c := p.start()
	for c.i < from {
		p.next(&c)
	}
	p.seek(&c, v)
	wantDoc := uint32(noDoc)
	if want < p.n {
		wantDoc = doc(want)
	}
	if c.i != want || c.doc != wantDoc {
		t.Fatalf("seek from %d to %d: posting %d of document %d, want %d of %d", from, v, c.i, c.doc, want, wantDoc)
	}
	return c, want
}
