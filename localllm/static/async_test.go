package static_test

import (
	"context"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/localllm/static"
)

var asyncTexts = []string{
	"When did Caroline go to the LGBTQ support group?",
	"I went to a LGBTQ support group yesterday and it was so powerful.",
	"Zyxwvut Qqq 1234 café don't",
	"",
	"!!!",
}

// TestEmbeddedMatchesSuppliedTable checks that the embedded table, whose
// identity, Zipf normaliser and common component are compiled in, gives
// the embedder that decoding the same bytes as a supplied table gives:
// same name and dimensions, bit-identical vectors and state.
func TestEmbeddedMatchesSuppliedTable(t *testing.T) {
	packed, err := os.ReadFile("words.bin.zst")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []static.Options{{}, {A: 1e-4}, {MaxWords: 5000}, {CommonComponent: static.CommonNone}, {Probabilities: static.ProbPrior}} {
		emb := newStatic(t, &o)
		o.Table = packed
		sup := newStatic(t, &o)
		if emb.Name() != sup.Name() || emb.Dims() != sup.Dims() {
			t.Fatalf("%+v: embedded %q/%d, supplied %q/%d", o, emb.Name(), emb.Dims(), sup.Name(), sup.Dims())
		}
		for _, s := range []*static.Static{emb, sup} {
			s.Observe(asyncTexts[1:3])
		}
		a, err := emb.Embed(context.Background(), asyncTexts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := sup.Embed(context.Background(), asyncTexts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if !slices.Equal(a[i], b[i]) {
				t.Errorf("%+v: text %q: embedded %v, supplied %v", o, asyncTexts[i], a[i][:3], b[i][:3])
			}
		}
		sa, _ := emb.MarshalState()
		sb, _ := sup.MarshalState()
		if !slices.Equal(sa, sb) {
			t.Errorf("%+v: states differ", o)
		}
	}
}

// TestStaticConcurrentFirstUse calls every method at once on embedders
// fresh from New, while their table may still be decoding; run under
// -race. Each result must equal that of an embedder used one call at a
// time in one of the states the calls can leave, and Close must leave no
// goroutine behind.
func TestStaticConcurrentFirstUse(t *testing.T) {
	ref := newStatic(t, nil)
	state := func() []byte {
		s := newStatic(t, nil)
		s.Observe(asyncTexts)
		b, err := s.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}()
	if err := ref.UnmarshalState(state); err != nil {
		t.Fatal(err)
	}
	want, err := ref.Embed(context.Background(), asyncTexts)
	if err != nil {
		t.Fatal(err)
	}
	// An Embed may run between the Observe and the Forget below: it
	// sees the state with that text observed, all its texts alike.
	ref.Observe(asyncTexts[:1])
	wantObserved, err := ref.Embed(context.Background(), asyncTexts)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b [][]float32) bool {
		return slices.EqualFunc(a, b, func(x, y []float32) bool { return slices.Equal(x, y) })
	}
	before := runtime.NumGoroutine()
	const embedders = 8
	var wg sync.WaitGroup
	for range embedders {
		s := newStatic(t, nil)
		if s.Name() != ref.Name() || s.Dims() != ref.Dims() {
			t.Fatalf("fresh embedder %q/%d, want %q/%d", s.Name(), s.Dims(), ref.Name(), ref.Dims())
		}
		if err := s.UnmarshalState(state); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			wg.Go(func() {
				got, err := s.Embed(context.Background(), asyncTexts)
				if err != nil {
					t.Error(err)
					return
				}
				if !same(got, want) && !same(got, wantObserved) {
					t.Errorf("vectors differ from the reference's, with and without the observed text")
				}
			})
		}
		wg.Go(func() {
			s.Observe(asyncTexts[:1])
			s.Forget(asyncTexts[:1])
			if b, err := s.MarshalState(); err != nil || !slices.Equal(b, state) {
				t.Errorf("MarshalState = %d bytes, %v; want the loaded state", len(b), err)
			}
		})
		wg.Go(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // goroutines that returned may not be reaped yet
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

// TestStaticEmbedCancelled checks that a cancelled context
// is reported, not waited out.
func TestStaticEmbedCancelled(t *testing.T) {
	s := newStatic(t, nil)
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Embed(ctx, asyncTexts); err != context.Canceled {
		t.Errorf("Embed with a cancelled context = %v, want context.Canceled", err)
	}
}
