package persona_test

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/persona"
)

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name string
		in   *persona.Options
		want error
	}{
		{"nil", nil, nil},
		{"negative counts mean none", &persona.Options{MaxTerms: -1, MaxStatements: -1, MaxHistory: -1, HistoryTerms: -1}, nil},
		{"negative Dims", &persona.Options{Dims: -1}, persona.ErrInvalidOption},
		{"Dims too large", &persona.Options{Dims: persona.MaxDims + 1}, persona.ErrInvalidOption},
		{"Rate above 1", &persona.Options{Rate: 1.5}, persona.ErrInvalidOption},
		{"negative Rate", &persona.Options{Rate: -0.1}, persona.ErrInvalidOption},
		{"NaN Rate", &persona.Options{Rate: math.NaN()}, persona.ErrInvalidOption},
		{"Delta above 2", &persona.Options{Delta: 3}, persona.ErrInvalidOption},
		{"NaN Delta", &persona.Options{Delta: math.NaN()}, persona.ErrInvalidOption},
		{"TermCapacity below MaxTerms", &persona.Options{MaxTerms: 50, TermCapacity: 10}, persona.ErrInvalidOption},
		{"negative TermCapacity", &persona.Options{TermCapacity: -1}, persona.ErrInvalidOption},
		{"StatementMin above 10", &persona.Options{StatementMin: 11}, persona.ErrInvalidOption},
		{"MaxStatementBytes too small", &persona.Options{MaxStatementBytes: 8}, persona.ErrInvalidOption},
		{"MaxStatementBytes too large", &persona.Options{MaxStatementBytes: 1 << 16}, persona.ErrInvalidOption},
		{"HistoryTerms too large", &persona.Options{HistoryTerms: 256}, persona.ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := persona.New(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if err != nil {
				return
			}
			o := p.Options()
			if got := newPersona(t, &o).Options(); got != o {
				t.Errorf("Options do not round-trip: %+v, then %+v", o, got)
			}
		})
	}
	def := newPersona(t, nil).Options()
	want := persona.Options{Rate: 0.05, Delta: 0.05, MaxTerms: 32, TermCapacity: 1024, MaxStatements: 8,
		StatementMin: 7, MaxStatementBytes: 240, MaxHistory: 64, HistoryTerms: 5}
	if def != want {
		t.Errorf("defaults = %+v\n want %+v", def, want)
	}
}

func TestObserveRejects(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name       string
		vec        []float32
		importance float64
		text       string
		want       error
	}{
		{"wrong dims", []float32{1, 0}, 5, "", persona.ErrDims},
		{"empty vector", nil, 5, "", persona.ErrDims},
		{"NaN component", []float32{1, nan, 0}, 5, "", persona.ErrInvalidVector},
		{"infinite component", []float32{inf, 0, 0}, 5, "", persona.ErrInvalidVector},
		{"zero vector", []float32{0, 0, 0}, 5, "", persona.ErrInvalidVector},
		{"importance above 10", []float32{1, 0, 0}, 10.5, "", persona.ErrInvalidImportance},
		{"negative importance", []float32{1, 0, 0}, -1, "", persona.ErrInvalidImportance},
		{"NaN importance", []float32{1, 0, 0}, math.NaN(), "", persona.ErrInvalidImportance},
		{"invalid UTF-8", []float32{1, 0, 0}, 5, "caf\xe9 latte", persona.ErrInvalidText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPersona(t, nil)
			observe(t, p, []float32{0, 1, 0}, 8, "pottery class on weekends", t0)
			before, _ := p.MarshalBinary()
			if _, _, err := p.Observe(tt.vec, tt.importance, tt.text, t0.Add(time.Hour)); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if after, _ := p.MarshalBinary(); !bytes.Equal(before, after) {
				t.Error("a rejected Observe changed the persona")
			}
		})
	}
	// A fixed Options.Dims is enforced from the first update.
	p := newPersona(t, &persona.Options{Dims: 4})
	if _, _, err := p.Observe([]float32{1, 0, 0}, 5, "", t0); !errors.Is(err, persona.ErrDims) {
		t.Errorf("Options.Dims 4, 3-d vector: err = %v, want ErrDims", err)
	}
}

func TestProfileTerms(t *testing.T) {
	// η = 0.5 and I0 = 10: every update halves the old weights and adds
	// 0.5 for each term the text mentions (once, however often).
	p := newPersona(t, &persona.Options{Rate: 0.5, MaxTerms: 3})
	v := []float32{1, 0}
	observe(t, p, v, 10, "Pottery class: pottery, POTTERY!", t0)
	observe(t, p, v, 10, "pottery and hiking", t0)
	observe(t, p, v, 0, "ignored entirely: zero importance", t0)
	want := []persona.Term{{Text: "pottery", Weight: 0.75}, {Text: "hiking", Weight: 0.5}, {Text: "class", Weight: 0.25}}
	if got := p.Profile().Terms; !reflect.DeepEqual(got, want) {
		t.Errorf("terms = %v, want %v", got, want)
	}
}

func TestTokenising(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"stop words and short tokens", "I am the one who is at it, ok? Yes: go to bed", []string{"bed"}},
		{"possessive and contraction", "My sister's wedding; I'm sure it's Caroline’s", []string{"caroline", "sister", "wedding"}},
		{"numbers without letters skipped", "2023 and 42 but k8s and 3d printing", []string{"k8s", "printing"}},
		{"unicode letters lowercased", "Café CRÈME brûlée", []string{"brûlée", "café", "crème"}},
		{"overlong tokens skipped", strings.Repeat("x", persona.MaxTermRunes+1) + " garden", []string{"garden"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPersona(t, &persona.Options{Rate: 1})
			observe(t, p, []float32{1}, 10, tt.text, t0)
			var got []string
			for _, term := range p.Profile().Terms {
				got = append(got, term.Text)
			}
			if !reflect.DeepEqual(got, tt.want) { // equal weights: sorted by text
				t.Errorf("terms of %q = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestTermCapacity(t *testing.T) {
	p := newPersona(t, &persona.Options{MaxTerms: 4, TermCapacity: 8, Rate: 0.5})
	v := []float32{1}
	// "alpha" is mentioned every time; the others once each.
	for i := range 20 {
		observe(t, p, v, 10, "alpha word"+string(rune('a'+i))+"x", t0)
	}
	terms := p.Profile().Terms
	if len(terms) != 4 || terms[0].Text != "alpha" {
		t.Fatalf("terms = %v, want 4 led by alpha", terms)
	}
	// The newest one-off term ranks right after alpha: older ones decayed.
	if terms[1].Text != "wordtx" {
		t.Errorf("second term %q, want the newest, wordtx", terms[1].Text)
	}
}

func TestProfileStatements(t *testing.T) {
	p := newPersona(t, &persona.Options{MaxStatements: 2, MaxStatementBytes: 24})
	v := []float32{1}
	observe(t, p, v, 9, "I am allergic to peanuts.", t0)                   // 25 bytes: cut where a word ends
	observe(t, p, v, 5, "Nice weather today.", t0)                         // below StatementMin
	observe(t, p, v, 8, "My  sister   is getting married in June", t0)     // whitespace collapsed, cut
	observe(t, p, v, 7, "We moved to Berlin.", t0.Add(time.Hour))          // ranks below 8 and 9: dropped
	observe(t, p, v, 10, "i am ALLERGIC to peanuts.", t0.Add(2*time.Hour)) // same statement ignoring case: importance and time updated
	observe(t, p, v, 10, "   ", t0)                                        // blank: nothing
	want := []persona.Statement{
		{Text: "I am allergic to peanuts", Importance: 10, Time: t0.Add(2 * time.Hour)},
		{Text: "My sister is getting", Importance: 8, Time: t0},
	}
	got := p.Profile().Statements
	if !reflect.DeepEqual(got, want) {
		t.Errorf("statements = %+v\n want %+v", got, want)
	}
	if s := p.Profile().String(); !strings.Contains(s, "- I am allergic to peanuts\n") || !strings.HasPrefix(s, "Salient terms: ") {
		t.Errorf("String() = %q", s)
	}
	if s := (persona.Profile{}).String(); s != "" {
		t.Errorf("empty profile renders %q", s)
	}
}

func TestHistoryBounded(t *testing.T) {
	p := newPersona(t, &persona.Options{GateOff: true, MaxHistory: 3, HistoryTerms: 2, Rate: 1})
	texts := []string{"garden", "garden roses", "roses tulips", "tulips orchids", "orchids ferns"}
	for i, text := range texts {
		observe(t, p, []float32{1}, 10, text, t0.Add(time.Duration(i)*time.Hour))
	}
	h := p.History()
	if len(h) != 3 {
		t.Fatalf("%d snapshots, want 3", len(h))
	}
	want := persona.Snapshot{Time: t0.Add(4 * time.Hour), Update: 5, Drift: 0, Terms: []string{"ferns", "orchids"}}
	if !reflect.DeepEqual(h[2], want) || h[0].Update != 3 {
		t.Errorf("history = %+v, want last %+v and first update 3", h, want)
	}
	h[2].Terms[0] = "changed"
	if p.History()[2].Terms[0] != "ferns" {
		t.Error("History returned shared slices")
	}
}

// TestConcurrentUse exercises the locks under the race detector.
func TestConcurrentUse(t *testing.T) {
	p := newPersona(t, nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				v := rot(4, float64(g*200+i)/100)
				if _, _, err := p.Observe(v, 6, "concurrent pottery hiking", t0); err != nil {
					t.Error(err)
					return
				}
				_ = p.Alignment(v)
				_ = p.Profile()
				if _, err := p.MarshalBinary(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if p.Updates() != 800 {
		t.Errorf("Updates() = %d, want 800", p.Updates())
	}
}

func TestForgetTextRemovesStatement(t *testing.T) {
	p, err := persona.New(&persona.Options{Dims: 2})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	secret := "My bank PIN is   4711 and I keep it in my wallet."
	for _, text := range []string{secret, "I am allergic to shellfish and never eat shrimp."} {
		if _, _, err := p.Observe([]float32{1, 0}, 9, text, now); err != nil {
			t.Fatal(err)
		}
	}
	if !p.ForgetText(secret) {
		t.Fatal("ForgetText = false, want the statement removed")
	}
	for _, st := range p.Profile().Statements {
		if strings.Contains(st.Text, "4711") {
			t.Errorf("profile still quotes the forgotten text: %q", st.Text)
		}
	}
	for _, term := range p.Profile().Terms {
		if term.Text == "4711" || term.Text == "wallet" {
			t.Errorf("profile still lists the forgotten term %q", term.Text)
		}
	}
	if st, err := p.MarshalBinary(); err != nil || bytes.Contains(st, []byte("wallet")) {
		t.Errorf("encoded persona still holds a forgotten term (err %v)", err)
	}
	if got := len(p.Profile().Statements); got != 1 {
		t.Errorf("statements = %d, want 1 left", got)
	}
	if p.ForgetText(secret) {
		t.Error("second ForgetText = true, want false")
	}
}
