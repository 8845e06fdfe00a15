package fts

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
)

// benchList is a word's postings in a segment of n documents holding it
// in one of every density, mostly in the text field once, with lengths
// spread as turns' are, some also in the context field.
func benchList(b *testing.B, n, density int) *postings {
	r := rand.New(rand.NewPCG(1, 2))
	var fl [nFields]fieldList
	doc := uint32(0)
	for range n {
		doc += 1 + uint32(r.IntN(2*density-1))
		fl[fText].docs = append(fl[fText].docs, doc)
		fl[fText].post = append(fl[fText].post, fieldPosting{tf: 1 + uint32(r.IntN(20)/18), dl: 3 + uint32(r.IntN(60))})
		if r.IntN(20) == 0 {
			fl[fContext].docs = append(fl[fContext].docs, doc)
			fl[fContext].post = append(fl[fContext].post, fieldPosting{tf: 1, dl: 20 + uint32(r.IntN(200))})
		}
	}
	p, err := mergeFields(&fl)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkPostings measures a decoded list's walk (next and the
// posting's enc, as the words that bring candidates read it) and seeks
// every stride documents (as the words that only score are looked up),
// per posting visited or seek; bytes/posting is the list's size.
func BenchmarkPostings(b *testing.B) {
	p := benchList(b, 100_000, 20)
	size := float64(p.arrayBytes()) / float64(p.n)
	b.Run("walk", func(b *testing.B) {
		var sum uint64
		cpu0 := processCPU()
		for b.Loop() {
			for c := p.start(); c.doc != noDoc; p.next(&c) {
				sum += uint64(p.encAt(c.i))
			}
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*p.n), "cpu-ns/posting")
		b.ReportMetric(size, "bytes/posting")
		sink = sum
	})
	last := p.doc(p.n - 1)
	for _, stride := range []uint32{10, 100, 10_000} {
		b.Run(fmt.Sprintf("seek/stride=%d", stride), func(b *testing.B) {
			var sum uint64
			seeks := 0
			cpu0 := processCPU()
			for b.Loop() {
				c := p.start()
				for v := uint32(0); v <= last; v += stride {
					p.seek(&c, v)
					sum += uint64(c.doc)
					seeks++
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(seeks), "cpu-ns/seek")
			sink = sum
		})
	}
}

var sink uint64

// processCPU is the CPU time the process used so far, in nanoseconds:
// steadier than wall time on a shared machine.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
