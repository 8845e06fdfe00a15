package peers_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/bench/peers"
)

func TestParseResults(t *testing.T) {
	out := `progress: 50%
RESULT {"engine":"lancedb-flat","ingest_rps":1500.5}
[WARN lance] something
RESULT {"engine":"lancedb-flat","vector_ms":[1,2,3],"vector_top":[[4,5]],"needle_hits":3,"needles":4}
`
	got, err := peers.ParseResults(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].IngestRPS != 1500.5 || len(got[1].VectorMs) != 3 || got[1].VectorTop[0][1] != 5 || got[1].NeedleHits != 3 {
		t.Fatalf("got %+v", got)
	}
	for _, bad := range []string{"RESULT {not json", `RESULT {"ingest_rps":1}`} {
		if _, err := peers.ParseResults(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestSummariseAndTable(t *testing.T) {
	results := []peers.Result{
		{Engine: "hmo", IngestRPS: 1000, DiskMB: 200},
		{Engine: "exact", VectorMs: []float64{1, 1, 1}, VectorTop: [][]int{{1, 2}, {3, 4}}},
		{Engine: "hmo", HybridMs: []float64{2, 4, 100}, VectorMs: []float64{2}, VectorTop: [][]int{{1, 2}, {3, 9}}, ColdMs: 50, RSSMB: 100, AnonMB: 40, NeedleHits: 1, Needles: 2},
		{Engine: "hmo", HybridMs: []float64{3}, ColdMs: 70, RSSMB: 120, AnonMB: 60, NeedleHits: 2, Needles: 2},
		{Engine: "peer", IngestRPS: 4000, HybridMs: []float64{6}, VectorTop: [][]int{{2, 1}, {4, 3}}},
	}
	sums := peers.Summarise(results, "exact")
	if len(sums) != 3 || sums[0].Engine != "hmo" || sums[1].Engine != "exact" || sums[2].Engine != "peer" {
		t.Fatalf("order: %+v", sums)
	}
	h := sums[0]
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"hybrid median over rounds", h.Hybrid, 3.5},
		{"cold median", h.ColdMs, 60},
		{"rss median", h.RSSMB, 110},
		{"anonymous median", h.AnonMB, 50},
		{"recall@10", h.Recall10, 0.75},
		{"needle hit@10", h.NeedleHit10, 0.75},
		{"peer recall ignores order", sums[2].Recall10, 1},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !math.IsNaN(sums[2].Text) || !math.IsNaN(sums[2].NeedleHit10) || !math.IsNaN(sums[2].AnonMB) {
		t.Errorf("unmeasured figures should be NaN: %+v", sums[2])
	}
	var b bytes.Buffer
	peers.Table(&b, sums, "hmo")
	table := b.String()
	for _, want := range []string{
		"| | hmo | exact | peer |",
		"| ingest, records/s | 1000 | – | 4000 (4.00×) |",
		"| hybrid median, ms | 3.50 | – | 6.00 (1.71×) |",
		"| text median, ms | – | – | – |",
		"| of which anonymous, MB | 50 | – | – |",
	} {
		if !strings.Contains(table, want+"\n") {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	js, err := json.Marshal(sums)
	if err != nil {
		t.Fatalf("summaries with NaN must marshal: %v", err)
	}
	if !strings.Contains(string(js), `"text_ms":null`) {
		t.Errorf("NaN should be null: %s", js)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}} {
		if got := peers.Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(peers.Median(nil)) {
		t.Error("Median(nil) should be NaN")
	}
}
