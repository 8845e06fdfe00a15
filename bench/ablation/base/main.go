//go:build ignore

// Per-question turn R@10 of an older build, for bench/ablation/paired.sh:
//
//	git archive 03f5191 | tar -x -C /tmp/hmo-base
//	mkdir /tmp/hmo-base/tools/perq && cp bench/ablation/base/main.go /tmp/hmo-base/tools/perq/
//	(cd /tmp/hmo-base && go run ./tools/perq/main.go ../shared/data/locomo-dev.json flat) > base.flat.json

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/locomo"
)

func main() {
	f, _ := os.Open(os.Args[1])
	convs, err := locomo.Read(f)
	if err != nil {
		panic(err)
	}
	mode := os.Args[2]
	work, _ := os.MkdirTemp("", "perq-")
	defer os.RemoveAll(work)
	var per []float64
	ctx := context.Background()
	for i, c := range convs {
		clock := &eval.Clock{}
		e, err := hmo.Open(filepath.Join(work, fmt.Sprint(i)), &engine.Options{Clock: clock.Now, Mode: engine.Mode(mode)})
		if err != nil {
			panic(err)
		}
		turnOf, err := eval.Ingest(ctx, e, c, clock)
		if err != nil {
			panic(err)
		}
		for _, q := range c.QA {
			if q.Category == locomo.Adversarial || len(q.Evidence) == 0 {
				continue
			}
			res, err := e.Recall(ctx, engine.Query{Text: q.Question, K: 10, Scope: c.ID})
			if err != nil {
				panic(err)
			}
			ranked := make([]string, len(res))
			for j, x := range res {
				ranked[j] = turnOf[x.Record.ID]
			}
			per = append(per, eval.Score(ranked, q.Evidence).TurnRecall[10])
		}
		e.Close()
	}
	b, _ := json.Marshal(per)
	os.Stdout.Write(b)
}
