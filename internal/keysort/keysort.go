// Package keysort sorts 128-bit keys, each naming a place, with the
// comparison inlined: the rankings' sorts (a score, then a tie-break)
// run on keys built from the score and the tie-break rather than on
// their structs with a comparison function called indirectly. Keys that
// are all distinct have one sorted order, so any sorting algorithm leaves
// the same one: a caller whose tie-break makes its keys distinct gets
// exactly the order of any other sort by the same comparison.
package keysort

import (
	"math"
	"sync"
)

// Key is Hi, then Lo, in ascending order; At is the place it stands for.
type Key struct {
	Hi, Lo uint64
	At     int32
}

func less(a, b *Key) bool {
	return a.Hi < b.Hi || (a.Hi == b.Hi && a.Lo < b.Lo)
}

// Descending returns a key half that sorts ascending as f descends. It
// reports false for NaN, which has no place in that order. Both zeros map
// to one key, as they compare equal.
func Descending(f float64) (uint64, bool) {
	if f != f {
		return 0, false
	}
	if f == 0 {
		f = 0 // -0 sorts with +0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return ^b, true
}

// Sort sorts k ascending (Hi, then Lo; At does not take part).
func Sort(k []Key) {
	quick(k, 2*bitsLen(len(k)))
}

func bitsLen(n int) int {
	l := 0
	for ; n > 0; n >>= 1 {
		l++
	}
	return l
}

// quick is an introsort: quicksort with the median of three as pivot,
// insertion sort for short runs, heapsort past depth levels.
func quick(k []Key, depth int) {
	for len(k) > 12 {
		if depth == 0 {
			heapSort(k)
			return
		}
		depth--
		m := len(k) / 2
		last := len(k) - 1
		// Median of three to k[0].
		if less(&k[m], &k[0]) {
			k[m], k[0] = k[0], k[m]
		}
		if less(&k[last], &k[m]) {
			k[last], k[m] = k[m], k[last]
			if less(&k[m], &k[0]) {
				k[m], k[0] = k[0], k[m]
			}
		}
		k[0], k[m] = k[m], k[0]
		p := k[0]
		i, j := 1, last
		for {
			for i <= j && less(&k[i], &p) {
				i++
			}
			for i <= j && less(&p, &k[j]) {
				j--
			}
			if i >= j {
				break
			}
			k[i], k[j] = k[j], k[i]
			i++
			j--
		}
		k[0], k[j] = k[j], k[0]
		// Recurse into the shorter side, loop on the longer.
		if j < len(k)-1-j {
			quick(k[:j], depth)
			k = k[j+1:]
		} else {
			quick(k[j+1:], depth)
			k = k[:j]
		}
	}
	for i := 1; i < len(k); i++ {
		for j := i; j > 0 && less(&k[j], &k[j-1]); j-- {
			k[j], k[j-1] = k[j-1], k[j]
		}
	}
}

func heapSort(k []Key) {
	n := len(k)
	for i := n/2 - 1; i >= 0; i-- {
		siftDown(k, i, n)
	}
	for end := n - 1; end > 0; end-- {
		k[0], k[end] = k[end], k[0]
		siftDown(k, 0, end)
	}
}

func siftDown(k []Key, i, n int) {
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && less(&k[c], &k[c+1]) {
			c++
		}
		if !less(&k[i], &k[c]) {
			return
		}
		k[i], k[c] = k[c], k[i]
		i = c
	}
}

// SortDescending orders s by a score, highest first, and equal scores
// by a tie-break, lowest first: key(i) gives s[i]'s. It reports false,
// leaving s as it was, when a score is NaN (which has no place in that
// order) or two elements have one score and one tie-break (whose order
// the keys do not decide); the caller then sorts another way.
func SortDescending[T any](s []T, key func(i int) (score float64, tie uint64)) bool {
	if len(s) < 2 {
		return true
	}
	buf := keyBufs.Get().(*[]Key)
	defer keyBufs.Put(buf)
	if cap(*buf) < len(s) {
		*buf = make([]Key, len(s))
	}
	keys := (*buf)[:len(s)]
	for i := range s {
		score, tie := key(i)
		hi, ok := Descending(score)
		if !ok {
			return false
		}
		keys[i] = Key{Hi: hi, Lo: tie, At: int32(i)}
	}
	Sort(keys)
	for i := 1; i < len(keys); i++ {
		if keys[i].Hi == keys[i-1].Hi && keys[i].Lo == keys[i-1].Lo {
			return false
		}
	}
	Apply(s, keys)
	return true
}

// keyBufs holds SortDescending's keys for reuse: they are the sort's
// own, dropped when s is in order.
var keyBufs = sync.Pool{New: func() any { return new([]Key) }}

// Apply rearranges s so that s[i] is the old s[k[i].At], following each
// cycle of the permutation; k is used up (At set to -1).
func Apply[T any](s []T, k []Key) {
	for i := range k {
		if k[i].At < 0 {
			continue
		}
		if int(k[i].At) == i {
			k[i].At = -1
			continue
		}
		held := s[i]
		j := i
		for {
			n := int(k[j].At)
			k[j].At = -1
			if n == i {
				s[j] = held
				break
			}
			s[j] = s[n]
			j = n
		}
	}
}
