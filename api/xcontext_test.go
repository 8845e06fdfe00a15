package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/api"
)

// TestContextAssemblies: every assembly keeps to the budget, holds the
// memory that answers, and none shows a forgotten memory.
func TestContextAssemblies(t *testing.T) {
	l := newLocal(t)
	var ms []api.NewMemory
	for i := range 40 {
		ms = append(ms, api.NewMemory{Session: fmt.Sprintf("s%d", i/8), Role: "user",
			Text: fmt.Sprintf("Wow! Note %d: %s", i, []string{"my garden roses need water", "the postgres migration is done", "we hiked in the alps", "my sister lives in lisbon"}[i%4])})
	}
	ms = append(ms, api.NewMemory{Session: "s9", Role: "user", Text: "Thanks! I am allergic to shellfish and peanuts."})
	ids := add(t, l, ms...)
	allergy := ids[len(ids)-1]
	for _, a := range []api.Assembly{api.AssemblyTopK, api.AssemblyRanked, api.AssemblyRankedFacts, api.AssemblyThemes} {
		t.Run(a.String(), func(t *testing.T) {
			la := l.WithAssembly(a)
			for _, budget := range []int{100, 300, 1500} {
				resp, err := la.Context(context.Background(), api.ContextRequest{Prompt: "what is she allergic to, shellfish?", MaxTokens: budget, MinScore: -1})
				if err != nil {
					t.Fatal(err)
				}
				if resp.Tokens > budget || api.EstimateTokens(resp.Context) > budget {
					t.Errorf("budget %d: block of %d tokens", budget, resp.Tokens)
				}
				if len(resp.IDs) == 0 || resp.IDs[0] != allergy {
					t.Errorf("budget %d: ids %v, want %d first", budget, resp.IDs, allergy)
				}
				facts := a == api.AssemblyRankedFacts || a == api.AssemblyThemes
				if facts && strings.Contains(resp.Context, "Thanks!") {
					t.Errorf("the fact keeps the small talk: %q", resp.Context)
				}
				if !strings.Contains(resp.Context, "allergic to shellfish") {
					t.Errorf("budget %d: block %q lacks the answer", budget, resp.Context)
				}
			}
		})
	}
	if _, err := l.Delete(context.Background(), api.DeleteRequest{IDs: []uint64{allergy}}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []api.Assembly{api.AssemblyTopK, api.AssemblyThemes} {
		resp, err := l.WithAssembly(a).Context(context.Background(), api.ContextRequest{Prompt: "allergic shellfish", MinScore: -1})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(resp.Context, "shellfish") {
			t.Errorf("%s: forgotten memory in the block %q", a, resp.Context)
		}
	}
}
