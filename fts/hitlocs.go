package fts

import (
	"context"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/hmo-dev/hmo/engine"
)

// A pooled search beyond its budget scores the pool's documents alone
// (pool.go). Its pool is, in the retrieval pipeline, the hits of a search
// the index has just answered, and the index knew where each of them was:
// a document number in a segment. Reading the records again and
// counting their words (engine.TextPool.Docs, countDocs) cost the pooled
// search most of its time; the words' postings in those segments hold
// each document's frequency and field length, the very numbers the
// counting finds, so the pool is scored from them (scoreLocated) when
// every pool document's place is known and still live in the snapshot
// searched, and when the lists to decode for it fit the postings cache
// (below).

// hitLocs keeps, by record id, where recent searches found their hits:
// the segment's id and the document's number in it. A segment never
// changes once made (docids.go), so a place is right for as long as the
// snapshot searched holds the segment and has not deleted the document;
// scoreLocated checks both. Safe for concurrent use; the zero value is
// empty and ready, and allocates its sets at the first put.
type hitLocs struct {
	mu    sync.Mutex
	sets  []hitLoc
	clock uint64
}

// hitLoc is one record's place; id 0 marks an empty way.
type hitLoc struct {
	id, seg, doc uint64
	used         uint64 // the clock at its last put, for replacement
}

// The table is hitLocSets sets of hitLocWays ways (32 bytes each, 256
// KiB): a pool of a hundred hits whose ids fall five in one set loses
// one of them, far less often than a direct-mapped table would.
const (
	hitLocBits = 11
	hitLocSets = 1 << hitLocBits
	hitLocWays = 4
)

func hitLocSet(id uint64) uint64 { return (id * 0x9e3779b97f4a7c15) >> (64 - hitLocBits) }

// put keeps the places of ids: document docs[i] of segment segIDs[i].
func (c *hitLocs) put(ids, segIDs, docs []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sets == nil {
		c.sets = make([]hitLoc, hitLocSets*hitLocWays)
	}
	for i, id := range ids {
		if id == 0 {
			continue
		}
		c.clock++
		set := c.sets[hitLocSet(id)*hitLocWays:][:hitLocWays]
		w := 0 // the way of id, or else the least recently put
		for j := range set {
			if set[j].id == id {
				w = j
				break
			}
			if set[j].used < set[w].used {
				w = j
			}
		}
		set[w] = hitLoc{id: id, seg: segIDs[i], doc: docs[i], used: c.clock}
	}
}

// get returns the place of id, false when the table does not hold it.
func (c *hitLocs) get(id uint64) (seg, doc uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sets == nil || id == 0 {
		return 0, 0, false
	}
	for _, l := range c.sets[hitLocSet(id)*hitLocWays:][:hitLocWays] {
		if l.id == id {
			return l.seg, l.doc, true
		}
	}
	return 0, 0, false
}

// A pool's lists are decoded whole and kept in the postings cache. They
// are the words of the feedback records, common words most of them
// ("felt", "proud", "kitchen" on the synthetic stream), asked for again
// by most later questions: at 100K records the first pools decode about
// 200,000 postings each (some 10-20 ms, once), the later ones seldom
// any. scoreLocated decodes the lists a pool needs only when they fit
// the cache's free room, when all the lists pools decoded take at most
// 1/poolDecodeShare of its size (poolPostingBytes a posting, the lists'
// size on the synthetic stream with room to spare: 788,516 postings,
// about 3 MiB, for the 200 workload questions at 100K), and when they
// are at most poolDecodeMax postings: lists the cache would keep out
// would be decoded at every pool, and lists that filled it would push
// out the first searches' (at 1M, where the first searches' lists take
// 22 MB of the 32 MiB, the text query's CPU median went from 4.3-4.5 ms
// to 6.2-7.0 without this bound, in two runs each). The
// pool's records are otherwise read and counted as before (about 10 µs
// a record).
const (
	poolDecodeShare  = 8
	poolPostingBytes = 4
)

// poolDecodeMax bounds the postings scoreLocated decodes for one pool,
// and so the time one question spends decoding (some 25-40 ms): the
// largest first pools of the 100K workload decode 222,000-245,000. A
// variable for the tests.
var poolDecodeMax = 1 << 18

// located is a pool document found in the snapshot: segment si's
// document doc, record id.
type located struct {
	si  int
	doc uint32
	id  uint64
	at  int // its first place in the ids located
}

// locate finds the places of ids in segs (first document numbers
// segStart), each id once, in the snapshot's document order. It reports
// false when one is not known or not live in the snapshot.
func (x *Index) locate(ids []uint64, segs []*scorch.SegmentSnapshot) ([]located, bool) {
	at := make(map[uint64]int, len(segs))
	for si, seg := range segs {
		at[seg.Id()] = si
	}
	out := make([]located, 0, len(ids))
	seen := make(map[uint64]bool, len(ids))
	for place, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		segID, doc, ok := x.locs.get(id)
		if !ok {
			return nil, false
		}
		si, ok := at[segID]
		if !ok || doc >= segs[si].Segment().Count() {
			return nil, false
		}
		if del := segs[si].Deleted(); del != nil && del.Contains(uint32(doc)) {
			return nil, false
		}
		out = append(out, located{si: si, doc: uint32(doc), id: id, at: place})
	}
	slices.SortFunc(out, func(a, b located) int {
		if a.si != b.si {
			return a.si - b.si
		}
		return int(a.doc) - int(b.doc)
	})
	return out, true
}

// scoreLocated scores the located pool docs for terms by BM25F with the
// statistics qs, as scoreDocs scores them from their counted words, and
// returns those pass keeps (nil: all) that hold a word, in no order.
// lists[word][segment] are the words' postings as topK found them: a
// live list's nil postings are decoded here. It reports false, having
// decoded nothing, when those lists are more than the bounds above let
// it decode. When first > 0, starts[i] holds docs[i]'s score and
// coverage by the first words of terms (firstPasses.starts): those words
// are not looked up, and the sums go on from there.
func (x *Index) scoreLocated(ctx context.Context, segs []*scorch.SegmentSnapshot, segStart []uint64, terms []string, qs *queryStats, lists [][]termList, docs []located, first int, starts []passHit, pass func(uint64) bool) ([]engine.TextHit, bool, error) {
	inPool := make([]bool, len(segs))
	for _, d := range docs {
		inPool[d.si] = true
	}
	decode := 0
	for pos := first; pos < len(terms); pos++ {
		for si, l := range lists[pos] {
			if inPool[si] && l.live && l.p == nil {
				decode += l.postings
			}
		}
	}
	if decode > 0 {
		// The pools' share of the cache, counted as decoded (lists the
		// cache drops later still count): the lists the first searches
		// read keep the rest.
		free, size := x.postings.room()
		n := int64(decode) * poolPostingBytes
		if decode > poolDecodeMax || n > free || x.poolDecoded.Load()+n > size/poolDecodeShare {
			return nil, false, nil
		}
		x.poolDecoded.Add(n)
	}
	if pass != nil {
		kept := docs[:0]
		for i, d := range docs {
			if pass(segStart[d.si] + uint64(d.doc)) {
				if first > 0 {
					starts[len(kept)] = starts[i]
				}
				kept = append(kept, d)
			}
		}
		docs = kept
	}
	// tf[i*len(terms)+j] and dl[i]: pool document i's frequencies of word
	// j and its field lengths, gathered word by word.
	buf := takeFreqs(len(docs)*len(terms) + len(docs))
	defer freqBufs.Put(buf)
	tf, dl := (*buf)[:len(docs)*len(terms)], (*buf)[len(docs)*len(terms):]
	for pos := first; pos < len(terms); pos++ {
		t := terms[pos]
		for i := 0; i < len(docs); {
			si := docs[i].si
			end := i + 1
			for end < len(docs) && docs[end].si == si {
				end++
			}
			l := &lists[pos][si]
			if l.live && l.p == nil {
				p, err := x.segmentPostings(ctx, segs[si], t, nil)
				if err != nil {
					return nil, false, err
				}
				l.p = p
			}
			if l.live && l.p.n > 0 {
				c := l.p.start()
				for ; i < end; i++ {
					if l.p.seek(&c, docs[i].doc); c.doc == noDoc {
						break
					}
					if c.doc != docs[i].doc {
						continue
					}
					// The posting's fields, looked up once (an escaped
					// posting's by a search of the escapes).
					fs := l.p.fields(c.i)
					for f, fp := range fs {
						if fp.tf != 0 {
							tf[i*len(terms)+pos][f] = float64(fp.tf)
							dl[i][f] = float64(fp.dl)
						}
					}
				}
			}
			i = end
		}
	}
	var idfSum float64
	for _, v := range qs.idf {
		idfSum += v
	}
	var hits []engine.TextHit
	for i, d := range docs {
		var from engine.TextHit
		if first > 0 {
			from.Score, from.Coverage = starts[i].score, starts[i].cov
		}
		if h, ok := x.docHitFrom(d.id, qs, tf[i*len(terms):(i+1)*len(terms)], &dl[i], idfSum, first, from); ok {
			hits = append(hits, h)
		}
	}
	return hits, true, nil
}

// freqBufs holds scoreLocated's frequencies and lengths for reuse: the
// hits it returns are values, so none of them refers to a buffer after
// the call.
var freqBufs = sync.Pool{New: func() any { return new([][nFields]float64) }}

// takeFreqs returns a buffer from freqBufs of n zero entries.
func takeFreqs(n int) *[][nFields]float64 {
	b := freqBufs.Get().(*[][nFields]float64)
	if cap(*b) < n {
		*b = make([][nFields]float64, n)
	} else {
		*b = (*b)[:n]
		clear(*b)
	}
	return b
}
