package hnsw_test

import (
	"fmt"
	"log"
	"os"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hnsw"
)

func Example() {
	dir, err := os.MkdirTemp("", "hnsw-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	x, err := hnsw.Open(dir, &hnsw.Options{Dims: 3})
	if err != nil {
		log.Fatal(err)
	}
	// Index three records as of change-log sequence 1, then replace
	// record 2 and delete record 3 as of sequence 2.
	err = x.Apply([]engine.VectorDoc{
		{ID: 1, Vector: []float32{1, 0, 0}},
		{ID: 2, Vector: []float32{0, 1, 0}},
		{ID: 3, Vector: []float32{0.8, 0.6, 0}},
	}, nil, 1)
	if err != nil {
		log.Fatal(err)
	}
	err = x.Apply([]engine.VectorDoc{{ID: 2, Vector: []float32{0.6, 0.8, 0}}}, []uint64{3}, 2)
	if err != nil {
		log.Fatal(err)
	}
	hits, err := x.Search([]float32{1, 0, 0}, 5)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("id %d score %.2f\n", h.ID, h.Score)
	}
	if err := x.Close(); err != nil { // Close saves
		log.Fatal(err)
	}

	x, err = hnsw.Open(dir, &hnsw.Options{Dims: 3})
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	fmt.Println("reopened: watermark", x.Watermark(), "live", x.Len())
	// Output:
	// id 1 score 1.00
	// id 2 score 0.60
	// reopened: watermark 2 live 2
}
