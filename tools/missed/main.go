// Command missed prints the evidence turns of LoCoMo questions that the
// default pipeline does not rank in the top 10, with the rank they got in
// the top 100: a diagnostic for retrieval work.
//
//	go run ./tools/missed -data ../shared/data/locomo-dev.json -category multi-hop
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/locomo"
)

func main() {
	data := flag.String("data", "../shared/data/locomo-dev.json", "LoCoMo file")
	cat := flag.String("category", "multi-hop", "question category")
	stages := flag.String("stages", "", "pipeline stages")
	convN := flag.Int("conversations", 2, "conversations to read")
	flag.Parse()
	f, err := os.Open(*data)
	if err != nil {
		fail(err)
	}
	convs, err := locomo.Read(f)
	f.Close()
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	work, err := os.MkdirTemp("", "hmo-missed-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(work)
	for i, c := range convs[:min(*convN, len(convs))] {
		clock := &eval.Clock{}
		e, err := hmo.Open(filepath.Join(work, fmt.Sprint(i)), &engine.Options{Clock: clock.Now, Mode: engine.ModeFlat, Stages: *stages})
		if err != nil {
			fail(err)
		}
		turnOf, err := eval.Ingest(ctx, e, c, clock)
		if err != nil {
			fail(err)
		}
		idOf := map[string]uint64{}
		for id, t := range turnOf {
			idOf[t] = id
		}
		for _, q := range c.QA {
			if locomo.CategoryName(q.Category) != *cat || len(q.Evidence) == 0 {
				continue
			}
			res, err := e.Recall(ctx, engine.Query{Text: q.Question, K: 100, Scope: c.ID, NoAccess: true})
			if err != nil {
				fail(err)
			}
			rank := map[string]int{}
			for j, r := range res {
				rank[turnOf[r.Record.ID]] = j + 1
			}
			fmt.Printf("\nQ: %s  [%s]\n", q.Question, q.Answer)
			for _, ev := range q.Evidence {
				r, err := e.Get(idOf[ev])
				txt := "?"
				if err == nil {
					txt = r.Role + ": " + r.Text
				}
				fmt.Printf("  %-7s rank %3d  %.110s\n", ev, rank[ev], txt)
			}
		}
		e.Close()
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "missed:", err)
	os.Exit(1)
}
