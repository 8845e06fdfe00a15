package retrieve_test

import (
	"reflect"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

// The tests the stages ask of a question (whether it asks for a set, for
// a thing, when; the speakers it names), worked out once per text on the
// Query, answer for the Query's text as it is now: asked of one Query
// whose text changes, each repeated, they give what the package's
// functions give each text.
func TestQueryTestsFollowTheText(t *testing.T) {
	speakers := []string{"Caroline", "Melanie", "Jon Snow", "assistant"}
	texts := []string{
		"How many times did Caroline go to the lake?",
		"How many times did Caroline go to the lake?",
		"When did Melanie paint a sunrise?",
		"What did Jon paint?",
		"What did Jon paint?",
		"Which books has Melanie read?",
		"",
		"When did Melanie paint a sunrise?",
		"What do Caroline and Melanie both like?",
		"Caroline",
		"How many times did Caroline go to the lake?",
	}
	set, thing, when, named := retrieve.QueryTests(texts, speakers)
	m := retrieve.NewNameMatcher(speakers)
	for i, q := range texts {
		if want := retrieve.AsksForSet(q); set[i] != want {
			t.Errorf("%d %q: asks for a set %t, AsksForSet %t", i, q, set[i], want)
		}
		if want := retrieve.AsksForThing(q); thing[i] != want {
			t.Errorf("%d %q: asks for a thing %t, AsksForThing %t", i, q, thing[i], want)
		}
		if want := retrieve.IsWhenQuestion(q); when[i] != want {
			t.Errorf("%d %q: a when-question %t, IsWhenQuestion %t", i, q, when[i], want)
		}
		if want := m.Named(q); !reflect.DeepEqual(named[i], want) {
			t.Errorf("%d %q: names %v, Named %v", i, q, named[i], want)
		}
	}
}
