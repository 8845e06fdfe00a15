package heuristic_test

import (
	"strings"
	"testing"
)

// BenchmarkImportance scores one conversational turn of typical length
// (LoCoMo turns average about 100 characters).
func BenchmarkImportance(b *testing.B) {
	h := newHeuristic(b, nil)
	text := "Thanks, Mel! I went to a LGBTQ support group yesterday and it was so powerful. My sister's wedding is on 12 July in Lisbon."
	b.ReportAllocs()
	for b.Loop() {
		h.Importance(text)
	}
}

// BenchmarkImportanceLong scores a 4 KB document.
func BenchmarkImportanceLong(b *testing.B) {
	h := newHeuristic(b, nil)
	text := strings.Repeat("We finally signed the lease for the flat in Porto on 3 March, and the movers come on the 28th. ", 42)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		h.Importance(text)
	}
}
