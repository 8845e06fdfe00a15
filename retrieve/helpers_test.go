package retrieve_test

import (
	"context"

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
