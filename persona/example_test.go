package persona_test

import (
	"fmt"
	"log"
	"time"

	"github.com/hmo-dev/hmo/persona"
)

func Example() {
	// A fast learning rate η so that four records move the persona;
	// the default is 0.05. The gate threshold δ is the default 0.05.
	p, err := persona.New(&persona.Options{Rate: 0.3, MaxTerms: 6})
	if err != nil {
		log.Fatal(err)
	}
	day := time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)

	// The engine observes each user record: its embedding, I0 and text.
	// Toy 3-d embeddings stand in for the embedder's vectors here.
	records := []struct {
		vec  []float32
		i0   float64
		text string
	}{
		{[]float32{1, 0, 0}, 9, "I am allergic to peanuts."},
		{[]float32{1, 0.1, 0}, 6, "Peanut butter is off the menu, sadly."},
		{[]float32{0, 1, 0}, 8, "I started training for the Berlin marathon."},
		{[]float32{0, 1, 0}, 8, "Marathon training: long run on Sunday."},
	}
	for i, r := range records {
		drift, fired, err := p.Observe(r.vec, r.i0, r.text, day.AddDate(0, 0, i))
		if err != nil {
			log.Fatal(err)
		}
		// When fired, the engine re-scores tiers 1 and 2 with the new
		// alignments: tiers.Manager.Rescore(now, id -> p.Alignment(vec)).
		fmt.Printf("record %d: drift %.4f fired %v\n", i+1, drift, fired)
	}
	fmt.Printf("firings %d, anchor set %s\n", p.Firings(), p.AnchorTime().Format("Jan 2"))
	fmt.Printf("alignment with a running record: %.3f\n", p.Alignment([]float32{0, 1, 0}))
	fmt.Print(p.Profile())

	// Persist the state (e.g. in bbolt) and load it into a new Persona.
	data, err := p.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}
	q, _ := persona.New(&persona.Options{Rate: 0.3, MaxTerms: 6})
	if err := q.UnmarshalBinary(data); err != nil {
		log.Fatal(err)
	}
	fmt.Println("restored updates:", q.Updates())
	// Output:
	// record 1: drift 1.0000 fired true
	// record 2: drift 0.0002 fired false
	// record 3: drift 0.0514 fired true
	// record 4: drift 0.0351 fired false
	// firings 2, anchor set May 10
	// alignment with a running record: 0.555
	// Salient terms: marathon, training, long, run, sunday, berlin
	// Key statements:
	// - I am allergic to peanuts.
	// - Marathon training: long run on Sunday.
	// - I started training for the Berlin marathon.
	// restored updates: 4
}
