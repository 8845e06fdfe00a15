package heuristic_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/localllm/heuristic"
)

// readFixture returns a file of testdata or fails the test.
func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wordRuns returns the maximal runs of letters and digits of s.
func wordRuns(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// checkSummary checks the promises of Summarize for one text and budget:
// at most maxRunes runes, valid UTF-8, deterministic, and made of whole
// words of the text.
func checkSummary(t *testing.T, text string, maxRunes int) string {
	t.Helper()
	got := heuristic.Summarize(text, maxRunes)
	if n := utf8.RuneCountInString(got); n > max(maxRunes, 0) {
		t.Fatalf("Summarize(%.40q, %d) has %d runes", text, maxRunes, n)
	}
	if !utf8.ValidString(got) {
		t.Fatalf("Summarize(%.40q, %d) = %q: invalid UTF-8", text, maxRunes, got)
	}
	if again := heuristic.Summarize(text, maxRunes); again != got {
		t.Fatalf("Summarize(%.40q, %d) not deterministic: %q then %q", text, maxRunes, got, again)
	}
	words := map[string]bool{}
	for _, w := range wordRuns(strings.ToValidUTF8(text, "\uFFFD")) {
		words[w] = true
	}
	for _, w := range wordRuns(got) {
		if !words[w] {
			t.Fatalf("Summarize(%.40q, %d) = %q: %q is not a word of the text", text, maxRunes, got, w)
		}
	}
	return got
}

func TestSummarizeFitsOrEmpty(t *testing.T) {
	tests := []struct {
		text     string
		maxRunes int
		want     string
	}{
		{"", 10, ""},
		{"Short  text,\n kept as is. ", 30, "Short  text,\n kept as is. "},
		{"héllo wörld", 11, "héllo wörld"},
		{"anything", 0, ""},
		{"anything", -5, ""},
		{"bad \xff byte", 20, "bad \uFFFD byte"},
		{strings.Repeat("x", 50) + " is one long word.", 10, ""},
		{"Supercalifragilistic", 5, ""},
		{"Thanks! Wow, great! Haha.", 12, "Thanks! Wow…"},
		{"The flight costs 3.5 thousand euros and leaves at 10:30.", 22, "The flight costs 3.5…"},
		{"The flight costs 3.5 thousand euros and leaves at 10:30.", 19, "The flight costs…"},
		{"I don't know what we're doing here, honestly.", 10, "I don't…"},
	}
	for _, tt := range tests {
		if got := heuristic.Summarize(tt.text, tt.maxRunes); got != tt.want {
			t.Errorf("Summarize(%q, %d) = %q, want %q", tt.text, tt.maxRunes, got, tt.want)
		}
	}
}

func TestSummarizeProse(t *testing.T) {
	text := readFixture(t, "importance_summary_prose.txt")
	lease := "We finally signed the lease for the flat in Porto on 3 March, and the movers come on the 28th."
	job := "My new job at the hospital starts on 2 April; I'll be working night shifts in the cardiology ward for the first six months."
	tests := []struct {
		maxRunes int
		want     string
	}{
		{250, lease + " " + job},
		{120, lease},
		{40, "My new job at the hospital starts on 2…"},
	}
	for _, tt := range tests {
		if got := checkSummary(t, text, tt.maxRunes); got != tt.want {
			t.Errorf("Summarize(prose, %d) =\n%q\nwant\n%q", tt.maxRunes, got, tt.want)
		}
	}
	// With room for everything salient, the allergy joins, in text order.
	got := checkSummary(t, text, 340)
	if i, j := strings.Index(got, "lease"), strings.Index(got, "allergic"); i < 0 || j < i || strings.Contains(got, "Hi there") {
		t.Errorf("Summarize(prose, 340) = %q: want the lease, then the allergy, and no greeting", got)
	}
}

// TestSummarizeCode: code is summarised by whole lines, the first lines
// and the declarations first.
func TestSummarizeCode(t *testing.T) {
	text := readFixture(t, "importance_summary_code.txt")
	lines := strings.Split(text, "\n")
	for _, tt := range []struct {
		maxRunes int
		want     []string
	}{
		{250, []string{"package cache", "type LRU struct {", "func (c *LRU) Get(key string) (string, bool) {", "func (c *LRU) Put(key, value string) {"}},
		{40, []string{"package cache", `import "sync"`}},
	} {
		got := checkSummary(t, text, tt.maxRunes)
		last := -1
		for _, l := range strings.Split(got, "\n") {
			i := slices.Index(lines, l)
			if i <= last {
				t.Fatalf("Summarize(code, %d) line %q: not a line of the input after line %d", tt.maxRunes, l, last)
			}
			last = i
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w+"\n") && !strings.HasSuffix(got, w) {
				t.Errorf("Summarize(code, %d) =\n%s\nwant the line %q", tt.maxRunes, got, w)
			}
		}
		if strings.Contains(got, "c.mu.Lock()") {
			t.Errorf("Summarize(code, %d) kept a body line before the declarations:\n%s", tt.maxRunes, got)
		}
	}
}

func TestSummarizeList(t *testing.T) {
	text := readFixture(t, "importance_summary_list.txt")
	got := checkSummary(t, text, 120)
	want := "# Trip to Lisbon, 12-19 July\n## Bookings\n- Flight TP1351 leaves Berlin at 06:40 on 12 July\n## To do"
	if got != want {
		t.Errorf("Summarize(list, 120) =\n%s\nwant\n%s", got, want)
	}
}

// TestSummarizeBudgets sweeps the budget over fixtures and edge texts.
func TestSummarizeBudgets(t *testing.T) {
	texts := []string{
		readFixture(t, "importance_summary_prose.txt"),
		readFixture(t, "importance_summary_code.txt"),
		readFixture(t, "importance_summary_list.txt"),
		"Wait...what? She said: \"We're moving to São Paulo in 2025!\" Really... e.g. next spring.",
		"日本語の文です。これは二つ目の文です。最後の文！",
		"one\ntwo\n\n\nthree\n  four;\n  five;\n",
		"bad \xff\xfe bytes. In the middle \xc3 of words. Fine.",
		strings.Repeat("I adopted a dog named Rex in 2020. ", 30),
	}
	for _, text := range texts {
		for n := 0; n < utf8.RuneCountInString(text)+3; n += 1 + n/16 {
			checkSummary(t, text, n)
		}
	}
}

func BenchmarkSummarize(b *testing.B) {
	text := readFixture(b, "importance_summary_prose.txt")
	b.ReportAllocs()
	for b.Loop() {
		heuristic.Summarize(text, 200)
	}
}

// FuzzSummarize: any text and budget give a valid summary within budget,
// of whole words, deterministically.
func FuzzSummarize(f *testing.F) {
	f.Add("Hi! I moved to Lisbon on 3 May. It was great.", 20)
	f.Add("func main() {\n\tfmt.Println(1)\n}\n", 12)
	f.Add("- a\n- b\n# c\n", 3)
	f.Add("bad \xff byte...what?", 7)
	f.Fuzz(func(t *testing.T, text string, maxRunes int) {
		checkSummary(t, text, maxRunes%1000)
	})
}
