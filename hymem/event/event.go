// Package event is HyMem's event unit (seed 001) as it is stored: the
// contiguous turns of one topic (Level-2 memory) and the unit's Level-1
// summary, with the rule that writes the summary offline. It is pure: the
// engine keeps one unit per level-1 segment of the segment tree in its own
// bbolt bucket, rewritten in the transaction that changes the segment, so
// a summary never outlives a turn it was drawn from.
package event

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/xmemory"
)

// ErrCorrupt is returned by Decode for bytes Encode did not write.
var ErrCorrupt = errors.New("event: corrupt encoding")

// DefaultSummaryRunes bounds a Level-1 summary: about three LoCoMo turns'
// facts, a fifth of a full unit (16 turns) of raw text.
const DefaultSummaryRunes = 300

// Summarise writes a unit's Level-1 summary offline from its turns'
// vectors (nil counts as far from all) and texts: the semantic facts
// (xmemory.StatedFact: small talk is left out) of the turns nearest the unit's
// centroid, nearest first until one does not fit in maxRunes runes (the
// nearest always goes in, cut with "…" if need be), in the turns' order, joined by " ". text is asked only for
// the turns it considers, nearest first. maxRunes < 1 means
// DefaultSummaryRunes.
func Summarise(vecs [][]float32, text func(i int) string, maxRunes int) string {
	if maxRunes < 1 {
		maxRunes = DefaultSummaryRunes
	}
	if len(vecs) == 0 {
		return ""
	}
	var sum []float32
	for _, v := range vecs {
		if sum == nil && len(v) > 0 {
			sum = make([]float32, len(v))
		}
		if n := norm(v); len(v) == len(sum) && n > 0 {
			for i, x := range v {
				sum[i] += float32(float64(x) / n)
			}
		}
	}
	order := make([]int, len(vecs))
	sims := make([]float64, len(vecs))
	for i, v := range vecs {
		order[i] = i
		sims[i] = cosine(sum, v)
	}
	sort.SliceStable(order, func(a, b int) bool { return sims[order[a]] > sims[order[b]] })
	facts := make([]string, len(vecs))
	used, taken := 0, 0
	for _, i := range order {
		if used+taken >= maxRunes { // the joining spaces count
			break
		}
		f := xmemory.StatedFact(text(i))
		n := utf8.RuneCountInString(f)
		switch {
		case f == "":
		case taken == 0 && n > maxRunes:
			facts[i], taken, used = string([]rune(f)[:maxRunes-1])+"…", 1, maxRunes
		case used+n+taken <= maxRunes:
			facts[i], taken, used = f, taken+1, used+n
		default:
			used = maxRunes // full: stop at the first fact that does not fit
		}
	}
	var out []string
	for _, f := range facts {
		if f != "" {
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}

func norm(v []float32) float64 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	return math.Sqrt(n)
}

func cosine(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return math.Inf(-1)
	}
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	na, nb := norm(a), norm(b)
	if na == 0 || nb == 0 {
		return math.Inf(-1)
	}
	return d / (na * nb)
}

// Unit is a stored event unit.
type Unit struct {
	Scope   string
	Turns   []uint64 // Level-2 memory, in time order
	Summary string   // Level-1 memory
}

const codecVersion = 1

// Encode writes u for storage.
func Encode(u *Unit) []byte {
	b := []byte{codecVersion}
	b = binary.AppendUvarint(b, uint64(len(u.Scope)))
	b = append(b, u.Scope...)
	b = binary.AppendUvarint(b, uint64(len(u.Turns)))
	for _, t := range u.Turns {
		b = binary.AppendUvarint(b, t)
	}
	return append(b, u.Summary...)
}

// Decode reads what Encode wrote; other bytes give ErrCorrupt, never a
// panic.
func Decode(b []byte) (*Unit, error) {
	bad := func(what string) (*Unit, error) { return nil, fmt.Errorf("%w: %s", ErrCorrupt, what) }
	if len(b) == 0 || b[0] != codecVersion {
		return bad("version")
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return bad("scope")
	}
	u := &Unit{Scope: string(b[k : k+int(n)])}
	b = b[k+int(n):]
	nt, k := binary.Uvarint(b)
	if k <= 0 || nt > uint64(len(b)-k) {
		return bad("turns")
	}
	b = b[k:]
	u.Turns = make([]uint64, nt)
	for i := range u.Turns {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return bad("turn")
		}
		u.Turns[i], b = v, b[k:]
	}
	u.Summary = string(b)
	return u, nil
}
