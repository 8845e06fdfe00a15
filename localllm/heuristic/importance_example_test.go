package heuristic_test

import (
	"fmt"
	"log"

	"github.com/hmo-dev/hmo/localllm/heuristic"
)

func ExampleHeuristic() {
	h, err := heuristic.New(nil) // nil: the default weights
	if err != nil {
		log.Fatal(err)
	}
	for _, text := range []string{
		"Hey! How are you?",
		"haha nice",
		"I love hiking in the mountains.",
		"I'm allergic to peanuts.",
		"My sister's wedding is on 12 July in Lisbon.",
	} {
		fmt.Printf("%.0f  %s\n", h.Importance(text), text)
	}
	// Output:
	// 1  Hey! How are you?
	// 1  haha nice
	// 5  I love hiking in the mountains.
	// 7  I'm allergic to peanuts.
	// 9  My sister's wedding is on 12 July in Lisbon.
}

func ExampleHeuristic_Explain() {
	h, err := heuristic.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	i0, parts := h.Explain("Thanks, Mel! We adopted a puppy named Max last month.")
	fmt.Printf("I0 = %.1f\n", i0)
	for _, p := range parts {
		if p.Value != 0 {
			fmt.Printf("%-8s %+.2f\n", p.Feature, p.Points)
		}
	}
	// Output:
	// I0 = 6.9
	// event    +1.20
	// entity   +0.50
	// time     +0.60
	// density  +1.95
	// phatic   -0.60
}

func ExampleSummarize() {
	text := "Hi there! Quick update on the move. We signed the lease for the flat in Porto on 3 March. " +
		"It was a long search, honestly. My new job at the hospital starts on 2 April. Talk soon!"
	fmt.Println(heuristic.Summarize(text, 100))
	// Output:
	// We signed the lease for the flat in Porto on 3 March. My new job at the hospital starts on 2 April.
}
