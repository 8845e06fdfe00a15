package static

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
)

// corpus holds the word counts of the observed text. Its zero value is an
// empty corpus.
type corpus struct {
	total   uint64            // tokens observed; always the sum of all counts
	known   []uint32          // known[id]: count of table word id; nil until needed
	unknown map[uint64]uint32 // count of each unknown word by FNV-1a hash of its text; no zero counts
}

// tokenRef is one token of an observed text: a word id, or -1 and the hash
// of an unknown word.
type tokenRef struct {
	id   int
	hash uint64
}

// observeChunk is how many tokens Observe and Forget gather outside the
// lock before applying them under it.
const observeChunk = 1 << 14

// Observe adds the words of texts to the corpus statistics. A count stops
// at 2^32-1. Texts are tokenised outside the lock and applied in chunks,
// so an Embed running at the same time may see part of the texts. It
// waits for the table, and does nothing when the table did not decode
// (Embed and MarshalState report it).
func (s *Static) Observe(texts []string) {
	s.update(texts, func(c *corpus, r tokenRef) { c.add(r, s.limit) })
}

// Forget removes the words of texts from the corpus statistics. Words
// that were never observed are ignored, so counts never go below zero.
// Like Observe, it waits for the table.
func (s *Static) Forget(texts []string) {
	s.update(texts, (*corpus).remove)
}

// update tokenises texts and applies fn to every token.
func (s *Static) update(texts []string, fn func(*corpus, tokenRef)) {
	s.updateRefs(len(texts), func(sc *scanner, i int, refs []tokenRef) []tokenRef {
		return scanRefs(sc, texts[i], refs)
	}, fn)
}

// updateRefs applies fn to the tokens of n texts, which refsOf appends
// for the i-th, holding the lock for observeChunk tokens at a time. Like
// Observe, it waits for the table.
func (s *Static) updateRefs(n int, refsOf func(sc *scanner, i int, refs []tokenRef) []tokenRef, fn func(*corpus, tokenRef)) {
	if s.wait(context.Background()) != nil {
		return
	}
	sc := s.scratch.Get().(*scanner)
	defer s.scratch.Put(sc)
	var refs []tokenRef
	flush := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, r := range refs {
			fn(&s.corpus, r)
		}
		refs = refs[:0]
	}
	for i := range n {
		refs = refsOf(sc, i, refs)
		if len(refs) >= observeChunk {
			flush()
		}
	}
	if len(refs) > 0 {
		flush()
	}
}

func (c *corpus) add(r tokenRef, limit int) {
	if r.id >= 0 {
		if c.known == nil {
			c.known = make([]uint32, limit)
		}
		if c.known[r.id] < math.MaxUint32 {
			c.known[r.id]++
			c.total++
		}
		return
	}
	if c.unknown == nil {
		c.unknown = make(map[uint64]uint32)
	}
	if n := c.unknown[r.hash]; n < math.MaxUint32 {
		c.unknown[r.hash] = n + 1
		c.total++
	}
}

func (c *corpus) remove(r tokenRef) {
	if r.id >= 0 {
		if c.known != nil && c.known[r.id] > 0 {
			c.known[r.id]--
			c.total--
		}
		return
	}
	switch n := c.unknown[r.hash]; n {
	case 0:
		return
	case 1:
		delete(c.unknown, r.hash)
	default:
		c.unknown[r.hash] = n - 1
	}
	c.total--
}

// State encoding, version 1:
//
//	magic     "HSC1"
//	table     uint32 little-endian: checksum of the word-vector table
//	total     uvarint
//	known     uvarint k, then k × (uvarint id delta, uvarint count), ids ascending
//	unknown   uvarint u, then u × (uvarint hash delta, uvarint count), hashes ascending
//	checksum  uint32 little-endian: CRC-32C of every byte before it
//
// The first id and hash deltas are from zero; counts are positive and sum
// to total.
const stateMagic = "HSC1"

// MarshalState encodes the corpus statistics. The encoding is
// deterministic: equal statistics give equal bytes. It waits for the
// table; a table that did not decode is an error wrapping ErrTable.
func (s *Static) MarshalState() ([]byte, error) {
	if err := s.wait(context.Background()); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := &s.corpus
	b := append([]byte(stateMagic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[4:], s.checksum)
	b = binary.AppendUvarint(b, c.total)
	var ids []int
	for id, n := range c.known {
		if n > 0 {
			ids = append(ids, id)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(ids)))
	prev := 0
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id-prev))
		b = binary.AppendUvarint(b, uint64(c.known[id]))
		prev = id
	}
	hashes := make([]uint64, 0, len(c.unknown))
	for h := range c.unknown {
		hashes = append(hashes, h)
	}
	slices.Sort(hashes)
	b = binary.AppendUvarint(b, uint64(len(hashes)))
	var prevH uint64
	for _, h := range hashes {
		b = binary.AppendUvarint(b, h-prevH)
		b = binary.AppendUvarint(b, uint64(c.unknown[h]))
		prevH = h
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// UnmarshalState replaces the corpus statistics with a state from
// MarshalState. An empty b resets them to an empty corpus. A state that
// is malformed or was made with another table or vocabulary size is an
// error wrapping ErrState and leaves the statistics unchanged. It needs
// only the table's identity, not the table: it does not wait for the
// embedded table to decode.
func (s *Static) UnmarshalState(b []byte) error {
	c, err := s.decodeState(b)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.corpus = c
	return nil
}

func (s *Static) decodeState(b []byte) (corpus, error) {
	var c corpus
	if len(b) == 0 {
		return c, nil
	}
	if len(b) < len(stateMagic)+8 || string(b[:4]) != stateMagic {
		return c, fmt.Errorf("%w: no state header", ErrState)
	}
	body := b[:len(b)-4]
	if binary.LittleEndian.Uint32(b[len(b)-4:]) != crc32.Checksum(body, castagnoli) {
		return c, fmt.Errorf("%w: checksum mismatch", ErrState)
	}
	if t := binary.LittleEndian.Uint32(b[4:]); t != s.checksum {
		return c, fmt.Errorf("%w: made with table %08x, this is %08x", ErrState, t, s.checksum)
	}
	r := &tableReader{b: body, off: 8}
	c.total = r.uvarint()
	var sum uint64
	k := r.uvarint()
	if k > uint64(s.limit) {
		r.fail("more words than the vocabulary")
	}
	id := uint64(0)
	for i := uint64(0); i < k && r.err == ""; i++ {
		d, n := r.uvarint(), r.uvarint()
		id += d
		if (i > 0 && d == 0) || id >= uint64(s.limit) || n == 0 || n > math.MaxUint32 {
			r.fail("bad word count")
			break
		}
		if c.known == nil {
			c.known = make([]uint32, s.limit)
		}
		c.known[id] = uint32(n)
		sum += n
	}
	s.decodeUnknown(r, &c, &sum)
	if r.err == "" && (r.off != len(body) || sum != c.total) {
		r.fail("counts do not add up")
	}
	if r.err != "" {
		return corpus{}, fmt.Errorf("%w: %s at byte %d", ErrState, r.err, r.off)
	}
	return c, nil
}

func (s *Static) decodeUnknown(r *tableReader, c *corpus, sum *uint64) {
	u := r.uvarint()
	if u > uint64(len(r.b)-r.off)/2 {
		r.fail("truncated")
		return
	}
	var h uint64
	for i := uint64(0); i < u && r.err == ""; i++ {
		d, n := r.uvarint(), r.uvarint()
		if (i > 0 && d == 0) || h+d < h || n == 0 || n > math.MaxUint32 {
			r.fail("bad unknown-word count")
			return
		}
		h += d
		if c.unknown == nil {
			c.unknown = make(map[uint64]uint32, u)
		}
		c.unknown[h] = uint32(n)
		*sum += n
	}
}
