package vecfile_test

import (
	"fmt"
	"testing"

	"github.com/hmo-dev/hmo/vecfile"
)

// BenchmarkSearch is one k-10 search over 100K random 100-d vectors for
// each scan.
func BenchmarkSearch(b *testing.B) {
	ds := docsDims(1, 100_000, 100)
	qs := docsDims(2, 64, 100)
	for _, sc := range []vecfile.Scan{vecfile.ScanFloat32, vecfile.ScanInt8} {
		b.Run(fmt.Sprint(sc), func(b *testing.B) {
			x := open(b, b.TempDir(), &vecfile.Options{Dims: 100, Scan: sc})
			defer x.Close()
			mustApply(b, x, ds, nil, 1)
			i := 0
			for b.Loop() {
				if _, err := x.Search(qs[i%len(qs)].Vector, 100); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkApply is the ingest cost per vector of each scan: batches of
// 500 100-d vectors, each applied and saved (synced), as the engine does.
func BenchmarkApply(b *testing.B) {
	ds := docsDims(1, 20_000, 100)
	for _, sc := range []vecfile.Scan{vecfile.ScanFloat32, vecfile.ScanInt8} {
		b.Run(fmt.Sprint(sc), func(b *testing.B) {
			for b.Loop() {
				x := open(b, b.TempDir(), &vecfile.Options{Dims: 100, Scan: sc})
				for lo := 0; lo < len(ds); lo += 500 {
					mustApply(b, x, ds[lo:lo+500], nil, uint64(lo+1))
					if err := x.Save(); err != nil {
						b.Fatal(err)
					}
				}
				mustClose(b, x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ds)), "ns/vector")
		})
	}
}

// BenchmarkOpen is Open of 100K 100-d vectors, checksums verified, for
// each scan; "regenerate" is the first ScanInt8 Open of an index written
// without the companion.
func BenchmarkOpen(b *testing.B) {
	ds := docsDims(1, 100_000, 100)
	dir := b.TempDir()
	x := open(b, dir, &vecfile.Options{Dims: 100, Scan: vecfile.ScanFloat32})
	mustApply(b, x, ds, nil, 1)
	mustClose(b, x)
	for _, tc := range []struct {
		name string
		scan vecfile.Scan
		drop bool
	}{{"float32", vecfile.ScanFloat32, false}, {"regenerate", vecfile.ScanInt8, true}, {"int8", vecfile.ScanInt8, false}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if tc.drop {
					b.StopTimer()
					mustClose(b, open(b, dir, &vecfile.Options{Dims: 100, Scan: vecfile.ScanFloat32}))
					b.StartTimer()
				}
				mustClose(b, open(b, dir, &vecfile.Options{Dims: 100, Scan: tc.scan}))
			}
		})
	}
}
