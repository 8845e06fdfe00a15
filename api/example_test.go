package api_test

import (
	"context"
	"fmt"
	"os"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/teststore"
)

func ExampleLocal() {
	dir, _ := os.MkdirTemp("", "hmo-example-")
	defer os.RemoveAll(dir)
	e, err := engine.Open(dir, teststore.Options()) // hmo.Open(dir, nil) for the embedded defaults
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	svc := api.NewLocal(e)
	ctx := context.Background()
	add, _ := svc.Add(ctx, api.AddRequest{Memories: []api.NewMemory{{Text: "I am allergic to shellfish", Scope: "me"}}})
	up, _ := svc.Update(ctx, api.UpdateRequest{ID: add.IDs[0], Text: "I am allergic to shellfish and peanuts"})
	res, _ := svc.Search(ctx, api.SearchRequest{Query: "allergic", Filter: api.Filter{Scope: "me"}})
	for _, m := range res.Results {
		fmt.Printf("%d (replaces %d): %s\n", m.ID, m.Supersedes, m.Text)
	}
	fmt.Println(up.Supersedes == add.IDs[0])
	// Output:
	// 2 (replaces 1): I am allergic to shellfish and peanuts
	// true
}
