package fts_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

// locomoPath is where the LoCoMo development file lives, relative to the
// package directory; HMO_LOCOMO overrides it.
const locomoPath = "../../shared/data/locomo-dev.json"

var (
	evidenceRE = regexp.MustCompile(`D\d+:\d+`)
	sessionRE  = regexp.MustCompile(`^session_(\d+)$`)
)

type locomoTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	Caption string `json:"blip_caption"`
	session int
}

type locomoQA struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

type locomoConv struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []locomoQA                 `json:"qa"`
	turns        []locomoTurn               // in conversation order
}

// loadLocomo reads the LoCoMo file, or skips the test when it is absent.
func loadLocomo(t testing.TB) []locomoConv {
	t.Helper()
	path := locomoPath
	if p := os.Getenv("HMO_LOCOMO"); p != "" {
		path = p
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("LoCoMo file %s absent (set HMO_LOCOMO to its path): skipping the retrieval check", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	var convs []locomoConv
	if err := json.Unmarshal(b, &convs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for i := range convs {
		c := &convs[i]
		var sessions []int
		for k := range c.Conversation {
			if m := sessionRE.FindStringSubmatch(k); m != nil {
				n, _ := strconv.Atoi(m[1])
				sessions = append(sessions, n)
			}
		}
		slices.Sort(sessions)
		for _, n := range sessions {
			var turns []locomoTurn
			if err := json.Unmarshal(c.Conversation["session_"+strconv.Itoa(n)], &turns); err != nil {
				t.Fatalf("%s session %d: %v", c.SampleID, n, err)
			}
			for _, tu := range turns {
				tu.session = n
				c.turns = append(c.turns, tu)
			}
		}
	}
	return convs
}

// locomoConfig is one way of indexing the turns.
type locomoConfig struct {
	analyzer fts.Analyzer
	previous bool // prepend the previous turn of the same session
	speaker  bool // prefix each turn with its speaker's name
	caption  bool // append the caption of a shared image
}

func (c locomoConfig) String() string {
	s := string(c.analyzer)
	if c.previous {
		s += "+prev"
	}
	if c.speaker {
		s += "+speaker"
	}
	if c.caption {
		s += "+caption"
	}
	return s
}

func (c locomoConfig) turnText(tu locomoTurn) string {
	s := tu.Text
	if c.speaker {
		s = tu.Speaker + ": " + s
	}
	if c.caption && tu.Caption != "" {
		s += " [image: " + tu.Caption + "]"
	}
	return s
}

// locomoResult is the outcome of one configuration.
type locomoResult struct {
	recall    float64 // mean turn-level Recall@10
	questions int
	perQuery  time.Duration // mean Search time
}

// evalLocomo indexes every conversation with cfg and returns the mean
// turn-level Recall@10 over the questions with resolvable evidence,
// adversarial ones (category 5) left out. A document counts only for its
// own turn.
func evalLocomo(t testing.TB, convs []locomoConv, cfg locomoConfig) locomoResult {
	t.Helper()
	const k = 10
	var sum float64
	var n int
	var spent time.Duration
	for _, c := range convs {
		x, err := fts.Open(filepath.Join(t.TempDir(), c.SampleID), &fts.Options{Analyzer: cfg.analyzer})
		if err != nil {
			t.Fatal(err)
		}
		docs := make([]engine.TextDoc, len(c.turns))
		turnOf := map[string]uint64{}
		for i, tu := range c.turns {
			text := cfg.turnText(tu)
			if cfg.previous && i > 0 && c.turns[i-1].session == tu.session {
				text = cfg.turnText(c.turns[i-1]) + "\n" + text
			}
			docs[i] = engine.TextDoc{ID: uint64(i), Text: text}
			turnOf[tu.DiaID] = uint64(i)
		}
		if err := x.Apply(docs, nil, 1); err != nil {
			t.Fatal(err)
		}
		for _, qa := range c.QA {
			if qa.Category == 5 {
				continue
			}
			want := map[uint64]bool{}
			for _, id := range evidenceRE.FindAllString(strings.Join(qa.Evidence, " "), -1) {
				if d, ok := turnOf[id]; ok {
					want[d] = true
				}
			}
			if len(want) == 0 {
				continue
			}
			start := time.Now()
			hits, err := x.Search(context.Background(), qa.Question, k, engine.TextFilter{})
			spent += time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, h := range hits {
				if want[h.ID] {
					found++
				}
			}
			sum += float64(found) / float64(len(want))
			n++
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Fatal("no questions with resolvable evidence")
	}
	return locomoResult{recall: sum / float64(n), questions: n, perQuery: spent / time.Duration(n)}
}

// TestLocomoRecall checks turn-level Recall@10 of the default analyzer on
// LoCoMo against floors a little below the measured values. With
// HMO_FTS_LOCOMO_ALL=1 it also measures and logs the other settings.
func TestLocomoRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("LoCoMo retrieval check skipped in -short mode")
	}
	convs := loadLocomo(t)
	tests := []struct {
		cfg   locomoConfig
		floor float64 // 0: measured and logged only
	}{
		{locomoConfig{analyzer: fts.DefaultAnalyzer}, 0.55},                 // measured 0.570
		{locomoConfig{analyzer: fts.DefaultAnalyzer, previous: true}, 0.64}, // measured 0.666
	}
	if os.Getenv("HMO_FTS_LOCOMO_ALL") != "" {
		for _, a := range []fts.Analyzer{fts.AnalyzerPlain, fts.AnalyzerStandard, fts.AnalyzerEnglishKeepStop, fts.AnalyzerEnglish} {
			for _, prev := range []bool{false, true} {
				tests = append(tests, struct {
					cfg   locomoConfig
					floor float64
				}{locomoConfig{analyzer: a, previous: prev}, 0})
			}
		}
		for _, extra := range []locomoConfig{
			{analyzer: fts.DefaultAnalyzer, previous: true, speaker: true},
			{analyzer: fts.DefaultAnalyzer, previous: true, caption: true},
			{analyzer: fts.DefaultAnalyzer, previous: true, speaker: true, caption: true},
		} {
			tests = append(tests, struct {
				cfg   locomoConfig
				floor float64
			}{extra, 0})
		}
	}
	for _, tt := range tests {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			r := evalLocomo(t, convs, tt.cfg)
			t.Logf("%-32s Recall@10 %.4f over %d questions, %v per query", tt.cfg, r.recall, r.questions, r.perQuery)
			if r.recall < tt.floor {
				t.Errorf("Recall@10 = %.4f, want >= %.2f", r.recall, tt.floor)
			}
		})
	}
}
