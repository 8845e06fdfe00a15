package engine

import (
	"runtime"
	"testing"
	"time"
)

// TestViewKeepsNoCallerSlice: a view keeps its own copy of each record
// it is given, so the slice of viewDocs the records were read into (with
// their decoded vectors and indexed texts) is left to the collector once
// the caller drops it. Tier 2's fill at open gives the view 4,096
// records in one slice; a pointer into it kept the whole slice alive,
// for the collector to mark at every cycle.
func TestViewKeepsNoCallerSlice(t *testing.T) {
	for _, n := range []int{1, 3, 64} {
		v, err := newView(func() (TextIndex, error) { return &mapText{docs: map[uint64]TextDoc{}}, nil })
		if err != nil {
			t.Fatal(err)
		}
		freed := make(chan struct{})
		func() {
			docs := make([]viewDoc, n)
			for i := range docs {
				id := uint64(i + 1)
				docs[i] = viewDoc{rec: Record{ID: id, Scope: "s", Text: "text"}, vec: []float32{1, float32(i)}, text: TextDoc{ID: id, Text: "text"}}
			}
			runtime.SetFinalizer(&docs[0], func(*viewDoc) { close(freed) })
			if err := v.add(docs); err != nil {
				t.Fatal(err)
			}
			docs[0].rec.Text = "changed" // the caller's copy, not the view's
		}()
		deadline := time.Now().Add(5 * time.Second)
	wait:
		for {
			runtime.GC()
			select {
			case <-freed:
				break wait
			case <-time.After(10 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d records: the view keeps the slice they were given in alive", n)
			}
		}
		for i := range n {
			r, ok := v.recs[uint64(i+1)]
			if !ok || r.Text != "text" || v.rows[v.pos[r.ID]] != r {
				t.Fatalf("%d records: record %d in the view: %+v, %v", n, i+1, r, ok)
			}
		}
		runtime.KeepAlive(v)
	}
}
