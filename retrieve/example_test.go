package retrieve_test

import (
	"context"
	"fmt"

	"github.com/hmo-dev/hmo/retrieve"
)

// A pipeline over a source that has two records: the speaker prior lifts
// the record of the person the question names.
func Example() {
	stages, err := retrieve.ParseStages("none,text,speaker")
	if err != nil {
		panic(err)
	}
	p, err := retrieve.New(&retrieve.Options{Stages: stages})
	if err != nil {
		panic(err)
	}
	src := &fakeSource{
		text: []retrieve.Hit{{ID: 1, Score: 2}, {ID: 2, Score: 1.8}, {ID: 3, Score: 1}},
		docs: map[uint64]retrieve.Doc{
			1: {ID: 1, Speaker: "Melanie", Text: "I painted a lake"},
			2: {ID: 2, Speaker: "Caroline", Text: "I painted a sunset"},
			3: {ID: 3, Speaker: "Melanie", Text: "Painting calms me"},
		},
	}
	res, err := p.Run(context.Background(), &retrieve.Query{Text: "What did Caroline paint?", K: 2, Candidates: 10}, src)
	if err != nil {
		panic(err)
	}
	for _, c := range res {
		fmt.Printf("%d %.2f\n", c.ID, c.Score)
	}
	// Output:
	// 2 1.30
	// 1 1.00
	// 3 0.00
}
