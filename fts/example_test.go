package fts_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

func Example() {
	dir, err := os.MkdirTemp("", "fts-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	x, err := fts.Open(filepath.Join(dir, "text"), nil) // nil: default options
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()

	day := time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)
	err = x.Apply([]engine.TextDoc{
		{ID: 1, Text: "Caroline went to the LGBTQ support group yesterday.", Scope: "demo", Session: "s1", Time: day},
		{ID: 2, Text: "Melanie is running a charity race for mental health.", Scope: "demo", Session: "s1", Time: day},
		{ID: 3, Text: "Melanie's painting of a sunrise over the lake.", Scope: "demo", Session: "s2", Time: day.AddDate(0, 0, 7)},
	}, nil, 3) // 3: the last change-log sequence these docs come from
	if err != nil {
		log.Fatal(err)
	}

	hits, err := x.Search(context.Background(), "When did Melanie run a race?", 10, engine.TextFilter{Scope: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Println("record", h.ID)
	}
	wm, err := x.Watermark()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("watermark", wm)
	// Output:
	// record 2
	// record 3
	// watermark 3
}
