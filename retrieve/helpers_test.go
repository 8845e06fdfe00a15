package retrieve_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

// fakeSource serves fixed candidate lists and documents.
type fakeSource struct {
	text, vec []retrieve.Hit
	docs      map[uint64]retrieve.Doc
}

func (f *fakeSource) Text(_ context.Context, _ *retrieve.Query, c int) ([]retrieve.Hit, error) {
	return f.text[:min(c, len(f.text))], nil
}

func (f *fakeSource) Vector(_ context.Context, _ *retrieve.Query, c int) ([]retrieve.Hit, error) {
	return f.vec[:min(c, len(f.vec))], nil
}

func (f *fakeSource) Docs(ids []uint64) ([]retrieve.Doc, error) {
	out := make([]retrieve.Doc, len(ids))
	for i, id := range ids {
		out[i] = f.docs[id]
	}
	return out, nil
}

func ids(c []retrieve.Candidate) []uint64 {
	out := make([]uint64, len(c))
	for i := range c {
		out[i] = c[i].ID
	}
	return out
}

func run(o *retrieve.Options, q *retrieve.Query, src retrieve.Source) ([]retrieve.Candidate, error) {
	p, err := retrieve.New(o)
	if err != nil {
		return nil, err
	}
	return p.Run(context.Background(), q, src)
}

// checkOrder checks the candidates' ids against want, and that their
// scores do not rise down the list.
func checkOrder(t *testing.T, got []retrieve.Candidate, want []uint64) {
	t.Helper()
	if !slices.Equal(ids(got), want) {
		t.Errorf("order %v, want %v", ids(got), want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score {
			t.Errorf("score %v at %d above %v at %d", got[i].Score, i, got[i-1].Score, i-1)
		}
	}
}
