package api_test

import (
	"context"
	"testing"

	"github.com/hmo-dev/hmo/api"
)

// FuzzCursors feeds arbitrary cursors to search and list: they must be
// refused with an invalid-request error or honoured, never panic.
func FuzzCursors(f *testing.F) {
	s := newLocal(f)
	ctx := context.Background()
	add(f, s, api.NewMemory{Text: "alpha beta"}, api.NewMemory{Text: "beta gamma"}, api.NewMemory{Text: "gamma delta"})
	sr, _ := s.Search(ctx, api.SearchRequest{Query: "beta", K: 1})
	lr, _ := s.List(ctx, api.ListRequest{Limit: 1})
	for _, c := range []string{sr.NextCursor, lr.NextCursor, "", "cw", "bAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "!!"} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		if _, err := s.Search(ctx, api.SearchRequest{Query: "beta", K: 1, Cursor: cursor}); err != nil && api.Code(err) != api.CodeInvalid {
			t.Errorf("search cursor %q: %v (code %s), want invalid or success", cursor, err, api.Code(err))
		}
		if _, err := s.List(ctx, api.ListRequest{Limit: 1, Cursor: cursor}); err != nil && api.Code(err) != api.CodeInvalid {
			t.Errorf("list cursor %q: %v (code %s), want invalid or success", cursor, err, api.Code(err))
		}
	})
}
