package static_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/hmo-dev/hmo/localllm/static"
)

// newStatic returns an embedder or fails the test.
func newStatic(t testing.TB, opts *static.Options) *static.Static {
	t.Helper()
	s, err := static.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// embed1 embeds one text or fails the test.
func embed1(t testing.TB, s *static.Static, text string) []float32 {
	t.Helper()
	vs, err := s.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatalf("Embed(%q): %v", text, err)
	}
	if len(vs) != 1 {
		t.Fatalf("Embed(%q) returned %d vectors, want 1", text, len(vs))
	}
	return vs[0]
}

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}

func norm(v []float32) float64 { return math.Sqrt(cosine(v, v)) }

func TestStaticDimsAndName(t *testing.T) {
	s := newStatic(t, nil)
	if got := s.Dims(); got != 100 {
		t.Errorf("Dims() = %d, want 100", got)
	}
	if got := s.Name(); !strings.HasPrefix(got, "static:wink-sg-100d/v1/") || !strings.Contains(got, "/n100000,") {
		t.Errorf("Name() = %q, want prefix static:wink-sg-100d/v1/ and n100000", got)
	}
	if a, b := s.Name(), newStatic(t, &static.Options{}).Name(); a != b {
		t.Errorf("default names differ: %q, %q", a, b)
	}
}

func TestStaticNameCoversOptions(t *testing.T) {
	base := newStatic(t, nil).Name()
	tests := []static.Options{
		{A: 1e-4},
		{Probabilities: static.ProbPrior},
		{Probabilities: static.ProbStore},
		{PriorTokens: 500},
		{CommonComponent: static.CommonNone},
		{Unknown: static.UnknownSkip},
		{UnknownNorm: 2},
		{MaxWords: 5000},
	}
	seen := map[string]bool{base: true}
	for _, o := range tests {
		name := newStatic(t, &o).Name()
		if seen[name] {
			t.Errorf("options %+v: name %q not distinct", o, name)
		}
		seen[name] = true
	}
}

func TestStaticInvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		opts static.Options
	}{
		{"negative A", static.Options{A: -1}},
		{"A above 1", static.Options{A: 2}},
		{"NaN A", static.Options{A: math.NaN()}},
		{"negative PriorTokens", static.Options{PriorTokens: -5}},
		{"infinite PriorTokens", static.Options{PriorTokens: math.Inf(1)}},
		{"negative UnknownNorm", static.Options{UnknownNorm: -1}},
		{"negative MaxWords", static.Options{MaxWords: -1}},
		{"unknown Probabilities", static.Options{Probabilities: 9}},
		{"unknown CommonComponent", static.Options{CommonComponent: -1}},
		{"unknown Unknown", static.Options{Unknown: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := static.New(&tt.opts)
			if !errors.Is(err, static.ErrOptions) {
				t.Errorf("New = %v, want ErrOptions", err)
			}
		})
	}
}

// texts of every kind the embedder must turn into unit vectors.
var edgeTexts = []string{
	"The cat sat on the mat.",
	"",
	"   \t\n",
	"!!! ??? ...",
	"😊🎉",
	"x",
	"zqxjkv vbnmqw",
	"Café naïve résumé — “quoted” it’s",
	"北京欢迎你 Привет мир",
	"\xff\xfe invalid \xc3\x28 utf-8",
	strings.Repeat("memory ", 5000),
	"2023-05-07 12:30 1,000 3.5",
}

func TestStaticUnitLength(t *testing.T) {
	for _, opts := range []static.Options{{}, {CommonComponent: static.CommonNone, Unknown: static.UnknownSkip}} {
		s := newStatic(t, &opts)
		vs, err := s.Embed(context.Background(), edgeTexts)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != len(edgeTexts) {
			t.Fatalf("%d vectors for %d texts", len(vs), len(edgeTexts))
		}
		for i, v := range vs {
			if len(v) != s.Dims() {
				t.Errorf("%q: %d dims, want %d", edgeTexts[i], len(v), s.Dims())
			}
			if n := norm(v); math.IsNaN(n) || math.Abs(n-1) > 1e-5 {
				t.Errorf("%s: |Embed(%.20q)| = %v, want 1", s.Name(), edgeTexts[i], n)
			}
		}
	}
}

func TestStaticDeterministic(t *testing.T) {
	a, b := newStatic(t, nil), newStatic(t, nil)
	batch, err := a.Embed(context.Background(), edgeTexts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range edgeTexts {
		if got := embed1(t, b, text); !equalVec(got, batch[i]) {
			t.Errorf("%.20q: vector differs between instances or between batch and single call", text)
		}
	}
}

func equalVec(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func TestStaticSimilarity(t *testing.T) {
	s := newStatic(t, nil)
	tests := []struct{ anchor, near, far string }{
		{"The cat slept on the carpet.", "A kitten rested on the rug.", "Stock markets fell sharply on Monday."},
		{"I adopted a puppy last week.", "We got a new dog from the shelter.", "The quarterly tax report is due."},
		{"My sister is getting married in June.", "Her wedding is planned for the summer.", "The compiler rejected the Go program."},
	}
	for _, tt := range tests {
		a, n, f := embed1(t, s, tt.anchor), embed1(t, s, tt.near), embed1(t, s, tt.far)
		if cn, cf := cosine(a, n), cosine(a, f); cn <= cf {
			t.Errorf("cos(%q, %q) = %.3f, not above cos(.., %q) = %.3f", tt.anchor, tt.near, cn, tt.far, cf)
		}
	}
}

// TestStaticTokens checks the tokenisation through its effect: texts that
// tokenise alike embed alike.
func TestStaticTokens(t *testing.T) {
	s := newStatic(t, nil)
	skip := newStatic(t, &static.Options{Unknown: static.UnknownSkip})
	tests := []struct {
		s    *static.Static
		a, b string
		same bool
	}{
		{s, "CAT Dog", "cat dog", true},
		{s, "I don't know", "do not know", true},
		{s, "we can't, they won't", "we can not they will not", true},
		{s, "We're sure you'll see I've been", "we are sure you will see have been", true},
		{s, "It’s Caroline’s café", "it's caroline's cafe", true},
		{s, "Caroline's", "caroline", true},
		{s, "naïve résumé", "naive resume", true},
		{s, "a well-known fact", "well-known fact", true},
		{s, "well-known", "well known", false},
		{s, "self-care", "self care", true},
		{s, "cat... dog!!! (cat)", "cat dog cat", true},
		{s, "cat 😊 dog", "cat dog", true},
		{s, "cat zqxjkv", "cat", false},
		{skip, "cat zqxjkv", "cat", true},
		{s, "meeting in 2023", "meeting in 2024", false},
		{s, "U.S. a b c", "", true},
	}
	for _, tt := range tests {
		a, b := embed1(t, tt.s, tt.a), embed1(t, tt.s, tt.b)
		if got := equalVec(a, b); got != tt.same {
			t.Errorf("Embed(%q) == Embed(%q) is %v, want %v (cosine %.4f)", tt.a, tt.b, got, tt.same, cosine(a, b))
		}
	}
}

func TestStaticTextWithoutWords(t *testing.T) {
	s := newStatic(t, nil)
	empty := embed1(t, s, "")
	for _, text := range []string{"...", "😊", "   ", "a I"} {
		if v := embed1(t, s, text); !equalVec(v, empty) {
			t.Errorf("Embed(%q) differs from Embed(\"\")", text)
		}
	}
	for _, text := range []string{"The cat sat on the mat.", "zqxjkv", "hello"} {
		if c := cosine(embed1(t, s, text), empty); math.Abs(c) > 1e-5 {
			t.Errorf("cos(Embed(%q), Embed(\"\")) = %g, want 0", text, c)
		}
	}
}

func TestStaticObserveReweights(t *testing.T) {
	s := newStatic(t, nil)
	before := cosine(embed1(t, s, "pottery painting"), embed1(t, s, "painting"))
	var texts []string
	for range 200 {
		texts = append(texts, "pottery class pottery wheel pottery bowl")
	}
	s.Observe(texts)
	after := cosine(embed1(t, s, "pottery painting"), embed1(t, s, "painting"))
	if after <= before {
		t.Errorf("after observing pottery 600 times, cos(pottery painting, painting) = %.4f, want above %.4f", after, before)
	}
	s.Forget(texts)
	if again := cosine(embed1(t, s, "pottery painting"), embed1(t, s, "painting")); again != before {
		t.Errorf("after Forget, cosine = %v, want %v", again, before)
	}
}

func TestStaticStateRoundTrip(t *testing.T) {
	texts := []string{
		"I went to a LGBTQ support group yesterday.",
		"Melanie painted a sunrise in 2022 — zqxjkv!",
		"don't forget the café",
	}
	a := newStatic(t, nil)
	empty := mustMarshal(t, a)
	a.Observe(texts)
	a.Observe(texts[:1])
	state := mustMarshal(t, a)
	if bytes.Equal(state, empty) {
		t.Fatal("state unchanged by Observe")
	}

	b := newStatic(t, nil)
	if err := b.UnmarshalState(state); err != nil {
		t.Fatalf("UnmarshalState: %v", err)
	}
	if got := mustMarshal(t, b); !bytes.Equal(got, state) {
		t.Errorf("state after round trip differs: %x, want %x", got, state)
	}
	for _, text := range append(texts, "support group") {
		if !equalVec(embed1(t, a, text), embed1(t, b, text)) {
			t.Errorf("%q: vectors differ after state round trip", text)
		}
	}

	// The same texts in another order give the same bytes.
	c := newStatic(t, nil)
	c.Observe([]string{texts[2], texts[0], texts[1], texts[0]})
	if got := mustMarshal(t, c); !bytes.Equal(got, state) {
		t.Errorf("state depends on the order of Observe")
	}

	// Forgetting everything returns to the empty state; forgetting the
	// unobserved changes nothing.
	b.Forget(texts)
	b.Forget(texts[:1])
	b.Forget([]string{"never observed words", "zzyzx"})
	if got := mustMarshal(t, b); !bytes.Equal(got, empty) {
		t.Errorf("state after forgetting all = %x, want %x", got, empty)
	}
	if err := b.UnmarshalState(nil); err != nil {
		t.Errorf("UnmarshalState(nil) = %v, want nil (empty state)", err)
	}
}

func mustMarshal(t testing.TB, s *static.Static) []byte {
	t.Helper()
	b, err := s.MarshalState()
	if err != nil {
		t.Fatalf("MarshalState: %v", err)
	}
	return b
}

func TestStaticUnmarshalMalformed(t *testing.T) {
	s := newStatic(t, nil)
	s.Observe([]string{"the quick brown fox jumps over the lazy dog zqxjkv"})
	good := mustMarshal(t, s)
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x40
		return b
	}
	tests := []struct {
		name  string
		state []byte
	}{
		{"short", []byte("HSC1")},
		{"bad magic", append([]byte("XXXX"), good[4:]...)},
		{"truncated", good[:len(good)-3]},
		{"flipped count", flip(len(good) / 2)},
		{"other table", reseal(withTable(good, 0xdeadbeef))},
		{"counts do not add up", reseal(withTotal(good))},
		{"trailing bytes", reseal(append(bytes.Clone(good[:len(good)-4]), 0, 0, 0, 0, 0))},
		{"garbage", bytes.Repeat([]byte{0xff}, 64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.UnmarshalState(tt.state)
			if !errors.Is(err, static.ErrState) {
				t.Errorf("UnmarshalState = %v, want ErrState", err)
			}
			if got := mustMarshal(t, s); !bytes.Equal(got, good) {
				t.Errorf("state changed by a failed UnmarshalState")
			}
		})
	}
}

// reseal replaces the trailing CRC-32C of a state.
func reseal(b []byte) []byte {
	body := b[:len(b)-4]
	return binaryAppendCRC(bytes.Clone(body))
}

func withTable(b []byte, sum uint32) []byte {
	b = bytes.Clone(b)
	b[4], b[5], b[6], b[7] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
	return b
}

// withTotal adds one to the total token count (a one-byte uvarint in the
// test state).
func withTotal(b []byte) []byte {
	b = bytes.Clone(b)
	b[8]++
	return b
}

func TestStaticTableChecks(t *testing.T) {
	packed, err := os.ReadFile("words.bin.zst")
	if err != nil {
		t.Fatal(err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	raw, err := dec.DecodeAll(packed, nil)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	corrupt := func(i int) []byte {
		b := bytes.Clone(raw)
		b[i] ^= 1
		return enc.EncodeAll(b, nil)
	}
	s, err := static.New(&static.Options{Table: packed})
	if err != nil {
		t.Fatalf("committed table: %v", err)
	}
	if want := fmt.Sprintf("/%08x/", binaryCRC(raw[:len(raw)-4])); !strings.Contains(s.Name(), want) {
		t.Errorf("Name() = %q, want the table checksum %s", s.Name(), want)
	}
	tests := []struct {
		name  string
		table []byte
	}{
		{"vector byte", corrupt(len(raw) - 100)},
		{"word byte", corrupt(len(raw) / 20)},
		{"header", corrupt(12)},
		{"truncated zstd", packed[:len(packed)/2]},
		{"not zstd", []byte("HMOWVTAB not compressed")},
		{"empty", []byte{}},
		{"truncated table", enc.EncodeAll(raw[:len(raw)/2], nil)},
		{"truncated table, resealed", enc.EncodeAll(binaryAppendCRC(bytes.Clone(raw[:len(raw)/2])), nil)},
		{"word count doubled, resealed", enc.EncodeAll(reseal(setByte(raw, 14, raw[14]*2+1)), nil)},
		{"dimensions changed, resealed", enc.EncodeAll(reseal(setByte(raw, 10, 99)), nil)},
		{"version changed, resealed", enc.EncodeAll(reseal(setByte(raw, 8, 2)), nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := static.New(&static.Options{Table: tt.table})
			if !errors.Is(err, static.ErrTable) {
				t.Errorf("New = %v, want ErrTable", err)
			}
		})
	}
}

func setByte(b []byte, i int, v byte) []byte {
	b = bytes.Clone(b)
	b[i] = v
	return b
}

func TestStaticConcurrent(t *testing.T) {
	s := newStatic(t, nil)
	texts := []string{"I love hiking in the mountains.", "We adopted a cat.", "zqxjkv project kickoff"}
	state := func() []byte {
		o := newStatic(t, nil)
		o.Observe(texts)
		return mustMarshal(t, o)
	}()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				vs, err := s.Embed(ctx, texts)
				if err != nil {
					errs <- err
					return
				}
				for _, v := range vs {
					if n := norm(v); math.Abs(n-1) > 1e-5 {
						errs <- fmt.Errorf("norm %v", n)
						return
					}
				}
				switch (g + i) % 3 {
				case 0:
					s.Observe(texts)
				case 1:
					s.Forget(texts)
				default:
					if err := s.UnmarshalState(state); err != nil {
						errs <- err
						return
					}
					if _, err := s.MarshalState(); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := s.UnmarshalState(state); err != nil {
		t.Fatal(err)
	}
	ref := newStatic(t, nil)
	ref.Observe(texts)
	if !equalVec(embed1(t, s, texts[0]), embed1(t, ref, texts[0])) {
		t.Error("vectors differ from a fresh embedder with the same state")
	}
}

func TestStaticEmbedCanceled(t *testing.T) {
	s := newStatic(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Embed(ctx, []string{"hello"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with canceled context = %v, want context.Canceled", err)
	}
}

func TestStaticMaxWords(t *testing.T) {
	small := newStatic(t, &static.Options{MaxWords: 1000, Unknown: static.UnknownSkip})
	// "pottery" ranks near 12,000: unknown within the first 1,000 words.
	if !equalVec(embed1(t, small, "pottery"), embed1(t, small, "")) {
		t.Error("a word beyond MaxWords was not treated as unknown")
	}
	if equalVec(embed1(t, small, "people"), embed1(t, small, "")) {
		t.Error("a frequent word was treated as unknown")
	}
}
