package vecfile

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/internal/vecscan"
)

// TestIVFCurve measures the partition's recall@10 against the exact scan,
// after the engine's float32 rescoring, and its CPU per search, over a
// range of list sizes and probes, on a copy of a peers benchmark's vector
// index: HMO_IVF_VEC the copy of its vectors directory, HMO_IVF_WORK the
// benchmark's work directory (queries.json with their vectors,
// vectors.f32, hmo-ids.json). HMO_IVF_LISTROWS and HMO_IVF_PROBES are
// comma-separated lists. Skipped without them.
func TestIVFCurve(t *testing.T) {
	vdir, work := os.Getenv("HMO_IVF_VEC"), os.Getenv("HMO_IVF_WORK")
	if vdir == "" || work == "" {
		t.Skip("HMO_IVF_VEC and HMO_IVF_WORK not set")
	}
	ints := func(env, def string) []int {
		s := os.Getenv(env)
		if s == "" {
			s = def
		}
		var out []int
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}
	var qs []struct {
		Vec []float32 `json:"vec"`
	}
	b, err := os.ReadFile(filepath.Join(work, "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	if b, err = os.ReadFile(filepath.Join(work, "hmo-ids.json")); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ids); err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(filepath.Join(work, "vectors.f32")); err != nil {
		t.Fatal(err)
	}
	dims := len(qs[0].Vec)
	vecs := make([]float32, len(b)/4)
	for i := range vecs {
		vecs[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	b = nil
	for r := 0; r < len(vecs)/dims; r++ {
		unitInPlace(vecs[r*dims : (r+1)*dims])
	}
	pos := make(map[uint64]int, len(ids))
	for p, id := range ids {
		pos[id] = p
	}
	truth := make([][]int, len(qs))
	for i := range qs {
		unitInPlace(qs[i].Vec)
		hits, err := vecscan.Scan(vecs, dims, qs[i].Vec, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			truth[i] = append(truth[i], h.Row)
		}
	}
	var today [][]int // the full 4-bit pass's top 10s
	run := func(x *Index, label string) {
		var got int
		var cpu time.Duration
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		start := time.Now()
		tops := make([][]int, len(qs))
		for i, q := range qs {
			hits, err := x.Search(q.Vec, 200)
			if err != nil {
				t.Fatal(err)
			}
			var rs []vecscan.Hit
			for _, h := range hits {
				p := pos[h.ID]
				rs = append(rs, vecscan.Hit{Row: p, Score: vecscan.Dot(q.Vec, vecs[p*dims:(p+1)*dims])})
			}
			slices.SortFunc(rs, vecscan.Compare)
			for _, h := range rs[:min(10, len(rs))] {
				tops[i] = append(tops[i], h.Row)
			}
		}
		wall := time.Since(start)
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu = time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		same := 0
		for i := range qs {
			for _, r := range tops[i] {
				if slices.Contains(truth[i], r) {
					got++
				}
				if today != nil && slices.Contains(today[i], r) {
					same++
				}
			}
		}
		if today == nil {
			today = tops
		}
		label += fmt.Sprintf(" top-10 overlap with the full pass %.4f", float64(same)/float64(10*len(qs)))
		fmt.Printf("%s recall@10 %.4f cpu/search %.3f ms wall/search %.3f ms\n", label, float64(got)/float64(10*len(qs)),
			float64(cpu.Microseconds())/1000/float64(len(qs)), float64(wall.Microseconds())/1000/float64(len(qs)))
	}
	// HMO_IVF_ABOVE (default 0: the defaults) is QuickAbove and
	// PartitionAbove, to measure a store smaller than the defaults'
	// thresholds; with it the int8 scan of every row is measured first.
	above := ints("HMO_IVF_ABOVE", "0")[0]
	quick := ints("HMO_IVF_QUICK", "0")[0]
	if above > 0 {
		x, err := Open(vdir, &Options{Dims: dims, Format: Int8Rescore, KeepFormat: true, QuickAbove: -1})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			run(x, "int8 scan")
		}
		x.Close()
	}
	x, err := Open(vdir, &Options{Dims: dims, Format: Int8Rescore, KeepFormat: true, PartitionAbove: -1, QuickAbove: above, Quick: quick})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		run(x, "full q4 scan")
	}
	x.Close()
	for _, lr := range ints("HMO_IVF_LISTROWS", "1000") {
		os.Remove(filepath.Join(vdir, ivfName))
		start := time.Now()
		x, err := Open(vdir, &Options{Dims: dims, Format: Int8Rescore, KeepFormat: true, ListRows: lr,
			QuickAbove: above, PartitionAbove: above, Quick: quick})
		if err != nil {
			t.Fatal(err)
		}
		x.waitBuild()
		if x.part == nil {
			t.Fatal("no partition")
		}
		fmt.Printf("listrows %d lists %d open+build %v out %d\n", lr, x.part.lists, time.Since(start), len(x.part.outRows))
		for _, pr := range ints("HMO_IVF_PROBES", "8,16,32,64") {
			x.opts.Probes = pr
			scanned := 0
			for _, q := range qs {
				sel := vecscan.NewHeap(pr)
				for l := range x.part.lists {
					sel.Push(l, vecscan.Dot(q.Vec, x.part.centroids[l*dims:(l+1)*dims]))
				}
				for _, h := range sel.Sorted() {
					scanned += x.part.starts[h.Row+1] - x.part.starts[h.Row]
				}
			}
			fmt.Printf("probes %d: %.0f rows scanned a search (%.1f%%)\n", pr, float64(scanned)/float64(len(qs)), 100*float64(scanned)/float64(len(qs))/float64(x.part.rows))
			run(x, fmt.Sprintf("listrows %d probes %d", lr, pr))
		}
		x.Close()
	}
}

// TestSearchAB compares the CPU of two configurations of one vector
// index in one process: HMO_AB_A and HMO_AB_B are two copies of a
// peers benchmark's vectors directory (HMO_IVF_WORK: queries.json), A
// opened with the defaults, B with QuickAbove and PartitionAbove
// HMO_IVF_ABOVE, Quick HMO_IVF_QUICK, ListRows HMO_IVF_LISTROWS and
// Probes HMO_IVF_PROBES (one value each). The 200 queries' searches
// (Search for 200, the engine's candidates for k 100) alternate between
// A and B in blocks of 10, HMO_AB_ROUNDS times over; it prints the
// process CPU and wall time a search of each, per round, and the
// medians. Skipped without them.
func TestSearchAB(t *testing.T) {
	da, db, work := os.Getenv("HMO_AB_A"), os.Getenv("HMO_AB_B"), os.Getenv("HMO_IVF_WORK")
	if da == "" || db == "" || work == "" {
		t.Skip("HMO_AB_A, HMO_AB_B and HMO_IVF_WORK not set")
	}
	env := func(name string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
			return v
		}
		return def
	}
	var qs []struct {
		Vec []float32 `json:"vec"`
	}
	b, err := os.ReadFile(filepath.Join(work, "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	dims := len(qs[0].Vec)
	xa, err := Open(da, &Options{Dims: dims, Format: Int8Rescore, KeepFormat: true})
	if err != nil {
		t.Fatal(err)
	}
	defer xa.Close()
	above := env("HMO_IVF_ABOVE", 50000)
	xb, err := Open(db, &Options{Dims: dims, Format: Int8Rescore, KeepFormat: true, QuickAbove: above, PartitionAbove: above,
		Quick: env("HMO_IVF_QUICK", 0), ListRows: env("HMO_IVF_LISTROWS", 0), Probes: env("HMO_IVF_PROBES", 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer xb.Close()
	xb.waitBuild()
	fmt.Printf("B partitioned %v\n", xb.Partitioned())
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var ca, cb, wa, wb []float64
	for round := range env("HMO_AB_ROUNDS", 5) {
		var sum [2][2]time.Duration
		for lo := 0; lo < len(qs); lo += 10 {
			for i, x := range []*Index{xa, xb} {
				if round%2 == 1 {
					x = []*Index{xb, xa}[i]
					i = 1 - i
				}
				c0, w0 := cpu(), time.Now()
				for _, q := range qs[lo:min(lo+10, len(qs))] {
					if _, err := x.Search(q.Vec, 200); err != nil {
						t.Fatal(err)
					}
				}
				sum[i][0] += cpu() - c0
				sum[i][1] += time.Since(w0)
			}
		}
		per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(len(qs)) }
		ca, cb = append(ca, per(sum[0][0])), append(cb, per(sum[1][0]))
		wa, wb = append(wa, per(sum[0][1])), append(wb, per(sum[1][1]))
		fmt.Printf("round %d: cpu A %.3f B %.3f (%.3f) wall A %.3f B %.3f ms a search\n", round, ca[round], cb[round], cb[round]/ca[round], wa[round], wb[round])
	}
	med := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	ratios := make([]float64, len(ca))
	for i := range ca {
		ratios[i] = cb[i] / ca[i]
	}
	fmt.Printf("medians: cpu A %.3f B %.3f, pair ratio %.3f; wall A %.3f B %.3f\n", med(ca), med(cb), med(ratios), med(wa), med(wb))
}
