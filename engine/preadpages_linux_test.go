package engine

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkBucketGet is the CPU of one Get of a random key of a bucket
// of 50,000 vector-sized values, by pread (pageReader) and through
// bbolt's mapping once every page is mapped: what a query's reads cost
// each way (BENCHMARKS.md, branch rss5).
func BenchmarkBucketGet(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), DBFile), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	d := &boltDB{DB: db}
	defer d.Close()
	const n = 50_000
	val := make([]byte, 400)
	for lo := 0; lo < n; lo += 5000 {
		err := db.Update(func(tx *bolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			bk.FillPercent = 1
			for id := lo; id < lo+5000; id++ {
				if err := bk.Put(u64key(uint64(id)), val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, via := range []string{"pread", "mapped"} {
		b.Run(via, func(b *testing.B) {
			err := d.View(func(tx *bolt.Tx) error {
				get := kvGetter(tx.Bucket([]byte("b")))
				if via == "pread" {
					get = d.preadBucket(tx, []byte("b"))
				} else {
					for id := range uint64(n) { // every page mapped, as in a long-running process
						get.Get(u64key(id))
					}
				}
				b.ResetTimer()
				c0 := processCPU()
				for range b.N {
					if get.Get(u64key(rng.Uint64N(n))) == nil {
						return fmt.Errorf("a key is missing")
					}
				}
				// The machine is shared: CPU time, not wall time.
				b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

// processCPU is the process's user and system CPU time in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
