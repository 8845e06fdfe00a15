package static_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/hmo-dev/hmo/localllm/static"
)

// FuzzStaticText drives the tokenizer through Embed, Observe and Forget:
// any text gives a deterministic unit vector, and observing then
// forgetting it leaves the corpus state as it was.
func FuzzStaticText(f *testing.F) {
	for _, text := range edgeTexts {
		if len(text) < 1024 { // long seeds make minimisation crawl
			f.Add(text)
		}
	}
	for _, text := range []string{"don't can't won't y'all rock'n'roll o'clock", "well-known--x -a- 'b' ’c’", "ǅemal ﬁne ½ ² Ⅻ", "e\u0301te\u0301", "a\u200db"} {
		f.Add(text)
	}
	s := newStatic(f, nil)
	s.Observe([]string{"the cat sat on the mat with caroline"})
	state := mustMarshal(f, s)
	f.Fuzz(func(t *testing.T, text string) {
		v1, v2 := embed1(t, s, text), embed1(t, s, text)
		if len(v1) != s.Dims() || !equalVec(v1, v2) {
			t.Fatalf("Embed(%q): %d dims or not deterministic", text, len(v1))
		}
		if n := norm(v1); math.IsNaN(n) || math.Abs(n-1) > 1e-5 {
			t.Fatalf("|Embed(%q)| = %v", text, n)
		}
		s.Observe([]string{text})
		s.Forget([]string{text})
		if got := mustMarshal(t, s); !bytes.Equal(got, state) {
			t.Fatalf("Observe+Forget(%q) changed the state", text)
		}
	})
}

// FuzzStaticUnmarshalState feeds arbitrary bytes to UnmarshalState: no
// panic; a rejected state leaves the statistics unchanged; an accepted one
// re-encodes canonically.
func FuzzStaticUnmarshalState(f *testing.F) {
	s := newStatic(f, nil)
	f.Add([]byte{})
	f.Add(mustMarshal(f, s))
	s.Observe([]string{"I went to a support group yesterday zqxjkv 2023"})
	good := mustMarshal(f, s)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(reseal(withTotal(good)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := s.UnmarshalState(good); err != nil {
			t.Fatal(err)
		}
		err := s.UnmarshalState(b)
		if err != nil {
			if !errors.Is(err, static.ErrState) {
				t.Fatalf("UnmarshalState error %v does not wrap ErrState", err)
			}
			if got := mustMarshal(t, s); !bytes.Equal(got, good) {
				t.Fatal("rejected state changed the statistics")
			}
			return
		}
		m1 := mustMarshal(t, s)
		if err := s.UnmarshalState(m1); err != nil {
			t.Fatalf("re-encoded state rejected: %v", err)
		}
		if m2 := mustMarshal(t, s); !bytes.Equal(m1, m2) {
			t.Fatal("state encoding not canonical")
		}
		if _, err := s.Embed(context.Background(), []string{"support group"}); err != nil {
			t.Fatal(err)
		}
	})
}
