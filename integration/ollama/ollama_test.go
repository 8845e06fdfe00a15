//go:build ollama

package ollama_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
	"github.com/hmo-dev/hmo/localllm/ollama"
)

var longRecord = strings.Repeat("The ingestion service reads events from Kafka, validates them against the schema registry and writes Parquet files to the lake every five minutes. ", 12)

func conversation(t *testing.T) []engine.Input {
	t.Helper()
	f, err := os.Open("../../testdata/conversation.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ins, err := jsonl.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return append(ins, engine.Input{Scope: "maya", Session: "s9", Role: "user", Text: longRecord})
}

func stepOf(s engine.Stats, name string) engine.StepStats {
	for _, st := range s.Steps {
		if st.Step == name {
			return st
		}
	}
	return engine.StepStats{}
}

func wait(t *testing.T, e *engine.Engine, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := e.WaitEnriched(ctx); err != nil {
		t.Fatalf("WaitEnriched: %v", err)
	}
}

func TestWithRealOllama(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	models := &hmo.Models{Host: s.url(), ChatModel: tinyModel, Ollama: ollama.Options{CallTimeout: 2 * time.Minute}}
	hmoBin := buildHMO(t)

	t.Run("embed", func(t *testing.T) {
		emb, err := hmo.NewEmbedder(ctx, "ollama:"+tinyModel, models)
		if err != nil {
			t.Fatalf("the tiny model does not serve /api/embed: %v\nserver log:\n%s", err, s.logTail(2000))
		}
		t.Logf("ollama embedder %s: %d dimensions", emb.Name(), emb.Dims())
	})

	t.Run("ingest, recall and every LLM step", func(t *testing.T) {
		dir := t.TempDir()
		e, err := hmo.OpenWith(dir, &engine.Options{Mode: engine.ModeTiered, EnrichTimeout: 3 * time.Minute}, models)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		ins := conversation(t)
		if _, err := e.Remember(ctx, ins...); err != nil {
			t.Fatal(err)
		}
		wait(t, e, 10*time.Minute)
		res, err := e.Recall(ctx, engine.Query{Text: "what is the name of the cat", K: 3})
		if err != nil || len(res) == 0 {
			t.Fatalf("Recall = %d results, %v", len(res), err)
		}
		st, err := e.Stats()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("steps with the tiny model:\n%s", fmtSteps(st.Steps))
		invalid := uint64(0)
		for _, name := range []string{engine.StepImportance, engine.StepCompression, engine.StepProfile, engine.StepSufficiency} {
			c := stepOf(st, name)
			if c.Calls == 0 || c.OK+c.Fallbacks != c.Calls {
				t.Errorf("step %s: %+v; want calls, each either used or fallen back", name, c)
			}
			invalid += c.Reasons["invalid output"]
		}
		if invalid == 0 {
			t.Errorf("no invalid-output fallback with a random-weight model; the validation is not exercised")
		}
		if c := stepOf(st, engine.StepImportance); c.Calls != uint64(len(ins)) {
			t.Errorf("importance ran %d times, want once per record (%d)", c.Calls, len(ins))
		}
		err = e.Scan(func(r *engine.Record) error {
			if r.Header.I0 < 1 || r.Header.I0 > 10 {
				t.Errorf("record %d: I0 %v outside [1, 10]", r.ID, r.Header.I0)
			}
			if r.Text == longRecord {
				switch r.SummaryKind {
				case engine.SummarySemantic, engine.SummaryEpisodic, engine.SummaryCore, engine.SummaryExtractive:
				default:
					t.Errorf("long record: summary kind %q", r.SummaryKind)
				}
				if r.Summary == "" || len(r.Summary) >= len(r.Text) {
					t.Errorf("long record: summary of %d bytes for %d", len(r.Summary), len(r.Text))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if text, src := e.PersonaProfile(); text == "" || src == "" {
			t.Errorf("persona profile empty (source %q)", src)
		}
	})

	ollamaDir := t.TempDir()
	t.Run("reindex to the Ollama embedder and back", func(t *testing.T) {
		dir := t.TempDir()
		for _, d := range []string{dir, ollamaDir} {
			e, err := hmo.OpenWith(d, nil, &hmo.Models{Host: s.url()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Remember(ctx, conversation(t)...); err != nil {
				t.Fatal(err)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
		}
		run(t, hmoBin, s, 0, "reindex", "--dir", ollamaDir, "--embedder", "ollama:"+tinyModel)

		e, err := hmo.OpenWith(dir, nil, &hmo.Models{Host: s.url()})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		to, err := hmo.NewEmbedder(ctx, "ollama:"+tinyModel, models)
		if err != nil {
			t.Fatal(err)
		}
		var done, total int
		if err := e.Reindex(ctx, to, func(d, n int) { done, total = d, n }); err != nil {
			t.Fatalf("Reindex to %s: %v", to.Name(), err)
		}
		if st, _ := e.Stats(); st.Embedder != to.Name() || st.VectorLen != total || done != total {
			t.Errorf("after reindex: embedder %s, %d vectors, progress %d/%d", st.Embedder, st.VectorLen, done, total)
		}
		if res, err := e.Recall(ctx, engine.Query{Text: "cat", K: 3}); err != nil || len(res) == 0 {
			t.Errorf("recall with the Ollama embedder: %d results, %v", len(res), err)
		}
		back, err := hmo.NewEmbedder(ctx, "static", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Reindex(ctx, back, nil); err != nil {
			t.Fatalf("Reindex back to static: %v", err)
		}
		res, err := e.Recall(ctx, engine.Query{Text: "what is the name of the cat", K: 3})
		if err != nil || len(res) == 0 || !strings.Contains(strings.ToLower(res[0].Record.Text+res[1].Record.Text+res[2].Record.Text), "cat") {
			t.Errorf("recall after reindexing back: %v, %v", res, err)
		}
	})

	t.Run("doctor with the server up", func(t *testing.T) {
		out := run(t, hmoBin, s, 0, "doctor", "--dir", ollamaDir, "--chat-model", tinyModel)
		for _, want := range []string{"ok    ollama: ", "embedding model " + tinyModel + " present", "chat model " + tinyModel + " present"} {
			if !strings.Contains(out, want) {
				t.Errorf("doctor output lacks %q:\n%s", want, out)
			}
		}
		out = run(t, hmoBin, s, 1, "doctor", "--dir", ollamaDir, "--chat-model", "no-such-model")
		if !strings.Contains(out, "FAIL  ollama: chat model no-such-model not found — run 'ollama pull no-such-model'") {
			t.Errorf("doctor with a missing model:\n%s", out)
		}
	})

	t.Run("server killed mid-ingest", func(t *testing.T) {
		dir := t.TempDir()
		e, err := hmo.OpenWith(dir, &engine.Options{EnrichTimeout: time.Minute},
			&hmo.Models{Host: s.url(), ChatModel: tinyModel, Ollama: ollama.Options{CallTimeout: 30 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		const batches, per = 20, 10
		for b := range batches {
			if b == 5 {
				s.kill()
			}
			var ins []engine.Input
			for i := range per {
				ins = append(ins, engine.Input{Session: fmt.Sprint("s", b), Text: fmt.Sprintf("batch %d note %d: the ferry to Vila Nova leaves at %d:15", b, i, 7+i)})
			}
			if _, err := e.Remember(ctx, ins...); err != nil {
				t.Fatalf("Remember batch %d with the server down: %v", b, err)
			}
		}
		wait(t, e, 5*time.Minute)
		st, err := e.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.Records != batches*per {
			t.Errorf("records after the kill = %d, want %d", st.Records, batches*per)
		}
		if c := stepOf(st, engine.StepImportance); c.Reasons["unavailable"] == 0 || c.Calls != batches*per {
			t.Errorf("importance after the kill = %+v; want every record counted and unavailable fallbacks", c)
		}
		t.Logf("steps after the kill:\n%s", fmtSteps(st.Steps))
		if res, err := e.Recall(ctx, engine.Query{Text: "ferry to Vila Nova", K: 5}); err != nil || len(res) != 5 {
			t.Errorf("recall with the server down: %d results, %v", len(res), err)
		}

		// A store embedded by Ollama still answers, from full text, and
		// refuses writes it cannot embed without changing anything.
		oe, err := hmo.OpenWith(ollamaDir, nil, &hmo.Models{Host: s.url()})
		if err != nil {
			t.Fatalf("open the Ollama-embedded store with the server down: %v", err)
		}
		defer oe.Close()
		before, _ := oe.Stats()
		if res, err := oe.Recall(ctx, engine.Query{Text: "cat", K: 3}); err != nil || len(res) == 0 {
			t.Errorf("full-text recall on the Ollama-embedded store: %d results, %v", len(res), err)
		}
		if _, err := oe.Remember(ctx, engine.Input{Text: "new note"}); !errors.Is(err, engine.ErrModelUnavailable) {
			t.Errorf("Remember with the embedder down = %v, want ErrModelUnavailable", err)
		}
		if after, _ := oe.Stats(); after.Records != before.Records {
			t.Errorf("records %d -> %d after a refused write", before.Records, after.Records)
		}

		out := run(t, hmoBin, s, 1, "doctor", "--dir", dir, "--chat-model", tinyModel)
		if !strings.Contains(out, "FAIL  ollama: not reachable at "+s.url()+" — start it with 'ollama serve' or set OLLAMA_HOST") {
			t.Errorf("doctor with the server down:\n%s", out)
		}
	})
}

// buildHMO builds the CLI once for the test.
func buildHMO(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hmo")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/hmo")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build hmo: %v\n%s", err, out)
	}
	return bin
}

// run runs the CLI against the test server and checks its exit status.
func run(t *testing.T, bin string, s *server, wantCode int, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "OLLAMA_HOST="+s.host)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("hmo %v: %v", args, err)
	}
	if code != wantCode {
		t.Errorf("hmo %s: exit %d, want %d\n%s", strings.Join(args, " "), code, wantCode, out)
	}
	return string(out)
}
