package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	bolt "go.etcd.io/bbolt"
)

// De-duplication. Every record has identity keys in bucketDedup, written
// in the transaction that stores it and deleted in the one that forgets
// it, so no crash can leave a record without its keys or a key without
// its record:
//
//   - 't' + hash(scope, normalised text): the same text in the same scope
//     is one record. A second input with other sources adds its sources
//     to the stored record (the provenance of both is kept) and stores
//     nothing else.
//   - 's' + hash(scope, role, sorted sources): the same provenance in the
//     same scope and role is one record, whatever its text (a re-imported
//     turn whose text was since edited is still the same turn).
//   - 'k' + idempotency key: a batch written with a key (Batch.Key)
//     answers a replay with the first outcome. The value is a hash of the
//     batch, then the ids of its records.
//
// bucketDedupIDs maps a record id to the keys that point at it, so Forget
// and Update find them.
var (
	bucketDedup    = []byte("dedup")
	bucketDedupIDs = []byte("dedupids")
)

// MaxKeyBytes is the longest idempotency key (Batch.Key).
const MaxKeyBytes = 200

// maxMergedSources bounds the sources a record collects from duplicates.
const maxMergedSources = 256

// Batch is one write: inputs stored in one transaction, all or none.
type Batch struct {
	Inputs []Input
	// Key, when set, makes the batch idempotent: a later batch with the
	// same key and the same inputs stores nothing and gets the first
	// outcome again (Stored.Duplicate set); the same key with other
	// inputs fails with ErrKeyReused. Keys of forgotten records are
	// forgotten with them. At most MaxKeyBytes of valid UTF-8.
	Key string
}

// Stored is what a write did with one input.
type Stored struct {
	ID uint64 `json:"id"`
	// Duplicate says the input was already stored (same scope and
	// normalised text, same scope, role and sources, or a replayed
	// idempotency key): ID is the stored record and nothing new was
	// written, except sources the stored record lacked.
	Duplicate bool `json:"duplicate,omitempty"`
}

// NormalizeText is the form texts are compared in for de-duplication:
// Unicode NFKC, lower case, runs of white space as one space, trimmed.
func NormalizeText(s string) string {
	if isASCII(s) {
		return normalizeASCII(s)
	}
	return strings.Join(strings.Fields(strings.ToLower(norm.NFKC.String(s))), " ")
}

// normalizeASCII is NormalizeText of an ASCII text, which NFKC leaves as
// it is: upper-case letters lowered, and runs of the white space
// strings.Fields splits ASCII at as one space, trimmed. A text already
// in that form is returned as it is.
func normalizeASCII(s string) string {
	space := true // before the first byte: a space there is leading
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z':
			clean = false
		case asciiSpace(c):
			clean = c == ' ' && !space
			space = true
		default:
			space = false
		}
	}
	if clean && (s == "" || !space) {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		for i < len(s) && asciiSpace(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		for ; i < len(s) && !asciiSpace(s[i]); i++ {
			c := s[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		}
	}
	return string(b)
}

// asciiSpace is the ASCII white space strings.Fields splits at.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// dedupHash is the key of kind for parts: the first 16 bytes of the
// SHA-256 of the parts, each followed by a zero byte, hashed as one
// array.
func dedupHash(kind byte, parts ...string) []byte {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(append(b, p...), 0)
	}
	sum := sha256.Sum256(b)
	return append([]byte{kind}, sum[:16]...)
}

func textKey(scope, text string) []byte { return dedupHash('t', scope, NormalizeText(text)) }

// sourceKey is nil for an input without sources.
func sourceKey(scope, role string, sources []string) []byte {
	if len(sources) == 0 {
		return nil
	}
	s := slices.Clone(sources)
	slices.Sort(s)
	s = slices.Compact(s)
	return dedupHash('s', append([]string{scope, role}, s...)...)
}

func idemKey(key string) []byte { return append([]byte{'k'}, key...) }

// batchHash identifies a batch's content for its idempotency key.
func batchHash(ins []Input) []byte {
	h := sha256.New()
	for i := range ins {
		in := &ins[i]
		t := ""
		if !in.Time.IsZero() {
			t = in.Time.UTC().Format(time.RFC3339Nano)
		}
		for _, p := range append([]string{in.Scope, in.Session, in.Role, t, in.Text}, in.Sources...) {
			h.Write(binary.AppendUvarint(nil, uint64(len(p))))
			h.Write([]byte(p))
		}
		h.Write([]byte{0xff})
	}
	return h.Sum(nil)[:16]
}

// identity is a record's identity keys: its text key and its source key
// (nil without sources). An input's are computed once, for the duplicate
// check and, when it is stored, for registerKeys.
type identity struct {
	text, source []byte
}

func identityOf(scope, role, text string, sources []string) identity {
	return identity{text: textKey(scope, text), source: sourceKey(scope, role, sources)}
}

// findDuplicate returns the stored record in duplicates of the input
// with keys k, or 0.
func findDuplicate(tx *bolt.Tx, k identity) uint64 {
	b := tx.Bucket(bucketDedup)
	if k.source != nil {
		if id := keyU64(b.Get(k.source)); id != 0 {
			return id
		}
	}
	return keyU64(b.Get(k.text))
}

// replay returns the outcome of the batch first written with key, or nil
// when the key is new.
func replay(tx *bolt.Tx, key string, ins []Input) ([]Stored, error) {
	v := tx.Bucket(bucketDedup).Get(idemKey(key))
	if v == nil {
		return nil, nil
	}
	if len(v) < 16 || (len(v)-16)%8 != 0 || !bytes.Equal(v[:16], batchHash(ins)) {
		return nil, fmt.Errorf("%w: %q", ErrKeyReused, key)
	}
	out := make([]Stored, 0, (len(v)-16)/8)
	for p := v[16:]; len(p) > 0; p = p[8:] {
		out = append(out, Stored{ID: keyU64(p[:8]), Duplicate: true})
	}
	if len(out) != len(ins) {
		return nil, fmt.Errorf("%w: %q", ErrKeyReused, key)
	}
	return out, nil
}

// putKey points k at id unless it points at a record already, and
// remembers it among id's keys.
func putKey(tx *bolt.Tx, k []byte, id uint64) error {
	b := tx.Bucket(bucketDedup)
	if cur := keyU64(b.Get(k)); cur != 0 {
		return nil
	}
	if err := putU64(b, k, id); err != nil {
		return err
	}
	return addOwnKey(tx, id, k)
}

func addOwnKey(tx *bolt.Tx, id uint64, k []byte) error {
	ib := tx.Bucket(bucketDedupIDs)
	old := ib.Get(u64key(id))
	v := make([]byte, 0, len(old)+1+len(k))
	v = append(append(v, old...), byte(len(k)))
	v = append(v, k...)
	return ib.Put(u64key(id), v)
}

// registerKeys writes the identity keys k of record id.
func registerKeys(tx *bolt.Tx, id uint64, k identity) error {
	if err := putKey(tx, k.text, id); err != nil {
		return err
	}
	if k.source != nil {
		return putKey(tx, k.source, id)
	}
	return nil
}

// registerNewKeys is registerKeys for a record just created whose keys
// no record holds (findDuplicate found none in this transaction): the
// same writes, without reading back what is known to be absent.
func registerNewKeys(tx *bolt.Tx, id uint64, k identity) error {
	b := tx.Bucket(bucketDedup)
	if err := putU64(b, k.text, id); err != nil {
		return err
	}
	own := make([]byte, 0, 2+len(k.text)+len(k.source))
	own = append(append(own, byte(len(k.text))), k.text...)
	if k.source != nil {
		if err := putU64(b, k.source, id); err != nil {
			return err
		}
		own = append(append(own, byte(len(k.source))), k.source...)
	}
	return tx.Bucket(bucketDedupIDs).Put(u64key(id), own)
}

// registerBatchKey stores an idempotency key with its batch's outcome.
func registerBatchKey(tx *bolt.Tx, key string, ins []Input, out []Stored) error {
	k := idemKey(key)
	v := batchHash(ins)
	for _, s := range out {
		v = append(v, u64key(s.ID)...)
	}
	if err := tx.Bucket(bucketDedup).Put(k, v); err != nil {
		return err
	}
	seen := map[uint64]bool{}
	for _, s := range out {
		if !seen[s.ID] {
			seen[s.ID] = true
			if err := addOwnKey(tx, s.ID, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// mergeDuplicate adds the sources of in that record id lacks, and points
// in's source key at it.
func (e *Engine) mergeDuplicate(tx *bolt.Tx, id uint64, in *Input) error {
	if len(in.Sources) == 0 {
		return nil
	}
	r, err := getRecord(tx, id)
	if err != nil {
		return err
	}
	changed := false
	for _, s := range in.Sources {
		if !slices.Contains(r.Sources, s) && len(r.Sources) < maxMergedSources {
			r.Sources = append(r.Sources, s)
			changed = true
		}
	}
	if changed {
		if err := putRecord(tx, &r, e.opts.CompressAbove); err != nil {
			return err
		}
	}
	if k := sourceKey(in.Scope, in.Role, in.Sources); k != nil {
		return putKey(tx, k, id)
	}
	return nil
}

// dropKeys deletes the identity keys of forgotten records. A key shared
// with a record that stays (an idempotency key of a batch) goes too:
// replaying that batch writes the forgotten records again.
func dropKeys(tx *bolt.Tx, ids []uint64) error {
	b, ib := tx.Bucket(bucketDedup), tx.Bucket(bucketDedupIDs)
	for _, id := range ids {
		v := ib.Get(u64key(id))
		for len(v) > 0 {
			n := int(v[0])
			if 1+n > len(v) {
				break // damaged list: the rest is unreadable
			}
			k := v[1 : 1+n]
			v = v[1+n:]
			cur := b.Get(k)
			if cur == nil {
				continue
			}
			if owns(k, cur, id) {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
		}
		if err := ib.Delete(u64key(id)); err != nil {
			return err
		}
	}
	return nil
}

// batchKeysOf returns the idempotency keys naming record id, with their
// values.
func batchKeysOf(tx *bolt.Tx, id uint64) map[string][]byte {
	b := tx.Bucket(bucketDedup)
	out := map[string][]byte{}
	v := tx.Bucket(bucketDedupIDs).Get(u64key(id))
	for len(v) > 0 && 1+int(v[0]) <= len(v) {
		k := v[1 : 1+int(v[0])]
		v = v[1+int(v[0]):]
		if cur := b.Get(k); k[0] == 'k' && cur != nil && owns(k, cur, id) {
			out[string(k)] = bytes.Clone(cur)
		}
	}
	return out
}

// moveBatchKeys restores idempotency keys, naming record to instead of
// from.
func moveBatchKeys(tx *bolt.Tx, keys map[string][]byte, from, to uint64) error {
	b := tx.Bucket(bucketDedup)
	for k, v := range keys {
		for p := v[16:]; len(p) >= 8; p = p[8:] {
			if keyU64(p[:8]) == from {
				binary.BigEndian.PutUint64(p[:8], to)
			}
		}
		if err := b.Put([]byte(k), v); err != nil {
			return err
		}
		if err := addOwnKey(tx, to, []byte(k)); err != nil {
			return err
		}
	}
	return nil
}

// owns reports whether key k, holding value v, belongs to record id.
func owns(k, v []byte, id uint64) bool {
	if k[0] != 'k' {
		return keyU64(v) == id
	}
	if len(v) < 16 {
		return true // damaged: drop it
	}
	for p := v[16:]; len(p) >= 8; p = p[8:] {
		if keyU64(p[:8]) == id {
			return true
		}
	}
	return false
}

// buildKeys indexes the records of a store written before de-duplication
// existed. Records that are duplicates of earlier ones stay; the keys
// point at the earliest.
func buildKeys(tx *bolt.Tx) error {
	return tx.Bucket(bucketRecords).ForEach(func(_, v []byte) error {
		r, err := decodeRecord(v)
		if err != nil {
			return nil // unreadable records are doctor's business
		}
		return registerKeys(tx, r.ID, identityOf(r.Scope, r.Role, r.Text, r.Sources))
	})
}
