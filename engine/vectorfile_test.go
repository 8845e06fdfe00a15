package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// vectorStore fills a flat, vector-only store with records in ten
// sessions and returns it closed, with the queries' answers before any
// damage.
func vectorStore(t *testing.T, dir string) []engine.Query {
	t.Helper()
	o := testOptions(&fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
	o.Mode, o.NoText = engine.ModeFlat, true
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	var ins []engine.Input
	for i := range 300 {
		ins = append(ins, engine.Input{
			Session: fmt.Sprint("s", i%10), Text: fmt.Sprintf("note %d about topic%d and item%d", i, i%7, i%13),
			Time: time.Date(2024, 1, 1, 0, i, 0, 0, time.UTC),
		})
	}
	remember(t, e, ins...)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return []engine.Query{
		{Text: "topic3 item5", K: 10},
		{Text: "note about topic1", K: 10, Session: "s4"},
		{Text: "item2", K: 5, From: time.Date(2024, 1, 1, 2, 0, 0, 0, time.UTC), To: time.Date(2024, 1, 1, 3, 0, 0, 0, time.UTC)},
	}
}

func vectorAnswers(t *testing.T, dir string, qs []engine.Query) [][]uint64 {
	t.Helper()
	o := testOptions(&fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
	o.Mode, o.NoText = engine.ModeFlat, true
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var out [][]uint64
	for _, q := range qs {
		res, err := e.Recall(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint64
		for _, r := range res {
			if (q.Session != "" && r.Record.Session != q.Session) ||
				(!q.From.IsZero() && (r.Record.Time.Before(q.From) || !r.Record.Time.Before(q.To))) {
				t.Fatalf("%+v returned %+v, outside the filter", q, r.Record)
			}
			ids = append(ids, r.Record.ID)
		}
		if len(ids) != q.K {
			t.Fatalf("%+v: %d results, want %d", q, len(ids), q.K)
		}
		out = append(out, ids)
	}
	return out
}

// TestVectorFileDamageRebuilds damages the archive's vector files in
// several ways: the store reopens, rebuilds them from bbolt and answers
// exactly as before.
func TestVectorFileDamageRebuilds(t *testing.T) {
	cases := []struct {
		name   string
		damage func(dir string) error
	}{
		{"directory removed", func(d string) error { return os.RemoveAll(d) }},
		{"slots removed", func(d string) error { return os.Remove(filepath.Join(d, "slots")) }},
		{"matrix removed", func(d string) error { return os.Remove(filepath.Join(d, "matrix")) }},
		{"vector scribbled", func(d string) error { return scribble(filepath.Join(d, "matrix"), 4096+400) }},
		{"matrix scribbled", func(d string) error { return scribbleAll(filepath.Join(d, "matrix"), 4096, 300*64*4) }},
		{"slots scribbled", func(d string) error { return scribbleAll(filepath.Join(d, "slots"), 4096+48*7, 48*200) }},
		{"header scribbled", func(d string) error {
			return scribbleAll(filepath.Join(d, "slots"), 0, 4096)
		}},
		{"matrix truncated", func(d string) error { return os.Truncate(filepath.Join(d, "matrix"), 5000) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			qs := vectorStore(t, dir)
			want := vectorAnswers(t, dir, qs)
			if err := tc.damage(filepath.Join(dir, engine.VectorDir)); err != nil {
				t.Fatal(err)
			}
			if got := vectorAnswers(t, dir, qs); !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("after damage: %v, want %v", got, want)
			}
		})
	}
}

func scribble(path string, off int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt([]byte("scribbled!"), off)
	return err
}

func scribbleAll(path string, off, n int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	_, err = f.WriteAt(b, off)
	return err
}
