package fts

// The package opened its index through bleve's top-level package until it
// used scorch directly (to keep bleve's older index type, its protobuf
// runtime and its search-request machinery out of the binary). These
// tests take that package as the reference: the documents and the mapping
// are the ones its index mapping made, an index it wrote opens and
// searches the same, an index written now opens through it, and the
// candidates drawn for rescoring are the ones its search returned.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/hmo-dev/hmo/engine"
)

var allAnalyzers = []Analyzer{AnalyzerEnglish, AnalyzerEnglishKeepStop, AnalyzerStandard, AnalyzerPlain}

// refMapping is the index mapping the package gave bleve.
func refMapping(a Analyzer) *mapping.IndexMappingImpl {
	im := mapping.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	name := analyzerName(a)
	if a != AnalyzerStandard {
		err := im.AddCustomAnalyzer(name, map[string]any{
			"type": custom.Name, "tokenizer": unicode.Name, "token_filters": tokenFilters(a),
		})
		if err != nil {
			panic(err)
		}
	}
	im.DefaultAnalyzer = name
	im.DefaultField = fieldText
	unstored := func(f *mapping.FieldMapping) *mapping.FieldMapping {
		f.Store, f.IncludeTermVectors, f.IncludeInAll, f.DocValues = false, false, false, false
		return f
	}
	scored := func() *mapping.FieldMapping {
		f := unstored(mapping.NewTextFieldMapping())
		f.Analyzer = name
		return f
	}
	kw := func() *mapping.FieldMapping {
		f := unstored(mapping.NewKeywordFieldMapping())
		f.Analyzer = keyword.Name
		f.SkipFreqNorm = true
		return f
	}
	dm := mapping.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldText, scored())
	dm.AddFieldMappingsAt(fieldContext, scored())
	dm.AddFieldMappingsAt(fieldRole, scored())
	dm.AddFieldMappingsAt(fieldScope, kw())
	dm.AddFieldMappingsAt(fieldSession, kw())
	dm.AddFieldMappingsAt(fieldTime, unstored(mapping.NewDateTimeFieldMapping()))
	dl := unstored(mapping.NewTextFieldMapping())
	dl.Analyzer = keyword.Name
	dl.Index = false
	dl.Store = true
	dm.AddFieldMappingsAt(fieldLengths, dl)
	dm.AddSubDocumentMapping("_all", mapping.NewDocumentDisabledMapping())
	im.DefaultMapping = dm
	if err := im.Validate(); err != nil {
		panic(err)
	}
	return im
}

// refFields is the value the package gave bleve to index for d.
func refFields(d *engine.TextDoc, l *[nFields]uint32) map[string]any {
	f := map[string]any{fieldText: d.Text, fieldLengths: encodeDocLen(l)}
	for k, v := range map[string]string{fieldContext: d.Context, fieldRole: d.Role, fieldScope: d.Scope, fieldSession: d.Session} {
		if v != "" {
			f[k] = v
		}
	}
	if !d.Time.IsZero() {
		f[fieldTime] = timeKey(d.Time)
	}
	return f
}

// corpus is a deterministic set of documents over a small vocabulary, so
// that queries match many documents with many equal scores.
func corpus(n int) []engine.TextDoc {
	words := strings.Fields("the cat sat on a mat with Mel's dog running runs ran to Paris in spring meeting notes budget plan " +
		"café naïve résumé 2024 v1.2 e-mail don't wouldn't Caroline Melanie painting camping lake pottery")
	r := rand.New(rand.NewPCG(1, 2))
	text := func(k int) string {
		var b strings.Builder
		for range k {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	docs := make([]engine.TextDoc, n)
	for i := range docs {
		d := engine.TextDoc{ID: uint64(i + 1), Text: text(1 + r.IntN(12))}
		if r.IntN(3) > 0 {
			d.Context = text(r.IntN(20))
		}
		if r.IntN(2) == 0 {
			d.Role = []string{"user", "assistant", "Caroline"}[r.IntN(3)]
		}
		if r.IntN(4) > 0 {
			d.Scope = []string{"work", "home", "Work Items"}[r.IntN(3)]
		}
		if r.IntN(4) > 0 {
			d.Session = fmt.Sprintf("s%d", r.IntN(5))
		}
		if r.IntN(5) > 0 {
			d.Time = base.Add(time.Duration(r.IntN(90*24)) * time.Hour).Add(time.Duration(r.IntN(1e9)))
		}
		docs[i] = d
	}
	docs[0].Text = "" // the text field is indexed even when empty
	return docs
}

// filters are the restrictions the tests search with.
func filters() []engine.TextFilter {
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	return []engine.TextFilter{
		{},
		{Scope: "work"},
		{Scope: "Work Items", Session: "s2"},
		{Session: "s1"},
		{From: base.Add(10 * 24 * time.Hour)},
		{To: base.Add(40 * 24 * time.Hour)},
		{Scope: "home", From: base.Add(5 * 24 * time.Hour), To: base.Add(60 * 24 * time.Hour)},
		{Scope: "nowhere"},
	}
}

var queries = []string{"cat", "the cat sat", "Mel's running dog", "paris spring budget", "café resume naive",
	"don't", "2024 v1.2", "caroline painting lake", "user", "assistant camping", "meeting notes plan pottery e-mail"}

// lengthsOf are d's field lengths as Apply counts them.
func lengthsOf(t *testing.T, a Analyzer, d *engine.TextDoc) [nFields]uint32 {
	t.Helper()
	an, err := newAnalyzers(a)
	if err != nil {
		t.Fatal(err)
	}
	return (&Index{an: an}).fieldLengths(d)
}

func TestMappingJSONIsBleves(t *testing.T) {
	for _, a := range allAnalyzers {
		got, err := mappingJSON(a)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(refMapping(a))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: mapping\n got %s\nwant %s", a, got, want)
		}
		var im mapping.IndexMappingImpl
		if err := json.Unmarshal(got, &im); err != nil {
			t.Fatalf("%s: bleve cannot read the mapping: %v", a, err)
		}
		if err := im.Validate(); err != nil {
			t.Errorf("%s: mapping does not validate: %v", a, err)
		}
	}
}

// fieldSummary is what the segment writer takes from an analysed field:
// its value only when it is stored (bleve's analysis lowercases the value
// of an unstored field in place; the writer never reads it).
func fieldSummary(f index.Field) string {
	tf := f.AnalyzedTokenFrequencies()
	terms := make([]string, 0, len(tf))
	for term, freq := range tf {
		terms = append(terms, fmt.Sprintf("%q:%d", term, freq.Frequency()))
	}
	slices.Sort(terms)
	var value []byte
	if f.Options().IsStored() {
		value = f.Value()
	}
	return fmt.Sprintf("%s type=%c opts=%v pos=%d value=%q plain=%d len=%d terms=%v",
		f.Name(), f.EncodedFieldType(), f.Options(), len(f.ArrayPositions()), value, f.NumPlainTextBytes(), f.AnalyzedLength(), terms)
}

func docSummary(d index.Document) []string {
	var out []string
	d.VisitFields(func(f index.Field) {
		if f.Options().IsIndexed() {
			f.Analyze()
		}
		out = append(out, fieldSummary(f))
	})
	slices.Sort(out)
	return out
}

func TestDocumentsAreBleves(t *testing.T) {
	docs := corpus(200)
	// As in a conversation, the context of some is the text before.
	for i := 1; i < len(docs); i += 3 {
		docs[i].Context = docs[i-1].Text
	}
	for _, a := range allAnalyzers {
		an, err := newAnalyzers(a)
		if err != nil {
			t.Fatal(err)
		}
		im := refMapping(a)
		for i := range docs {
			d := &docs[i]
			l := lengthsOf(t, a, d)
			want := document.NewDocument(docID(d.ID))
			if err := im.MapDocument(want, refFields(d, &l)); err != nil {
				t.Fatal(err)
			}
			// Analysed by its fields, and beforehand as Apply does (the
			// text before shares its analysis with this context).
			_, fq := an.analyseForIndex(docs[max(0, i-1) : i+1])
			for k, prep := range []*docFreqs{nil, &fq[len(fq)-1]} {
				got, err := an.newDocument(d, &l, prep)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := docSummary(got), docSummary(want); !slices.Equal(g, w) {
					t.Fatalf("%s: document %d (way %d):\n got %q\nwant %q", a, d.ID, k, g, w)
				}
				got.VisitFields(func(f index.Field) {
					if p, ok := f.(*preparedField); ok && p.size != p.freqs.Size() {
						t.Errorf("%s: document %d, field %s: size %d, bleve counts %d", a, d.ID, p.name, p.size, p.freqs.Size())
					}
				})
			}
		}
	}
}

// writeWithBleve writes docs into a new index in dir as the package did
// through bleve's top-level package.
func writeWithBleve(t *testing.T, dir string, docs []engine.TextDoc, wm uint64) {
	t.Helper()
	o, err := (*Options)(nil).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	bi, err := bleve.NewUsing(dir, refMapping(o.Analyzer), scorch.Name, bleve.Config.DefaultKVStore, map[string]any{"bolt_timeout": "1s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bi.SetInternal(keySchema, []byte(schemaValue(o))); err != nil {
		t.Fatal(err)
	}
	b := bi.NewBatch()
	var tot totals
	for i := range docs {
		l := lengthsOf(t, o.Analyzer, &docs[i])
		tot.add(&l)
		if err := b.Index(docID(docs[i].ID), refFields(&docs[i], &l)); err != nil {
			t.Fatal(err)
		}
	}
	b.SetInternal(keyLengths, tot.encode())
	b.SetInternal(keyWatermark, []byte{0, 0, 0, 0, 0, 0, 0, byte(wm)})
	if err := bi.Batch(b); err != nil {
		t.Fatal(err)
	}
	if err := bi.Close(); err != nil {
		t.Fatal(err)
	}
}

// searchAll runs every query with every filter, with k above the number of
// documents, so that every matching document is rescored: with a smaller
// k, which of the documents bleve scores equally at the k-th place become
// candidates depends on their order within a segment, which bleve leaves
// to its analysis workers.
func searchAll(t *testing.T, x *Index) []string {
	t.Helper()
	var out []string
	for _, q := range queries {
		for _, f := range filters() {
			hits, err := x.Search(context.Background(), q, 1000, f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%q %+v: %v", q, f, hits))
		}
	}
	return out
}

// TestOpensIndexBleveWrote: an index written through bleve's top-level
// package opens without a rebuild, searches exactly as an index written
// now, and takes new batches.
func TestOpensIndexBleveWrote(t *testing.T) {
	docs := corpus(300)
	old := filepath.Join(t.TempDir(), "old")
	writeWithBleve(t, old, docs, 7)
	x, err := Open(old, nil)
	if err != nil {
		t.Fatalf("Open an index bleve wrote: %v", err)
	}
	defer x.Close()
	y, err := Open(filepath.Join(t.TempDir(), "new"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if err := y.Apply(docs, nil, 7); err != nil {
		t.Fatal(err)
	}
	if wm, err := x.Watermark(); err != nil || wm != 7 {
		t.Fatalf("watermark %d, %v; want 7", wm, err)
	}
	diff(t, "the index bleve wrote", searchAll(t, x), searchAll(t, y))
	more := []engine.TextDoc{{ID: 1000, Text: "a cat on a new mat", Scope: "work"}, {ID: 5, Text: "replaced"}}
	for _, z := range []*Index{x, y} {
		if err := z.Apply(more, []uint64{9}, 8); err != nil {
			t.Fatal(err)
		}
	}
	diff(t, "after a batch, the index bleve wrote", searchAll(t, x), searchAll(t, y))
}

func diff(t *testing.T, what string, got, want []string) {
	t.Helper()
	n := 0
	for i := range got {
		if got[i] != want[i] {
			if n++; n <= 3 {
				t.Errorf("%s searches differently:\n got %s\nwant %s", what, got[i], want[i])
			}
		}
	}
	if n > 3 {
		t.Errorf("... %d searches of %d differ", n, len(got))
	}
}
