package retrieve

import "strings"

// PriorOptions are the weights of the priors. A prior adds weight times
// its value in [0, 1] times the best fused score to a candidate's score,
// so it means the same share under every fusion method.
type PriorOptions struct {
	// Speaker is the weight of the speaker prior: candidates spoken by
	// the one speaker the question names. Default DefaultSpeakerWeight.
	Speaker float64
	// Time is the weight of the time prior: for "when" questions,
	// candidates holding a time expression; for questions naming a
	// time, candidates dated or mentioning a time inside it. Default
	// DefaultTimeWeight.
	Time float64
	// Session is the weight of the session prior: each candidate gets
	// this share of its session's best score. Default
	// DefaultSessionWeight.
	Session float64
	// SpeechAct is the share of its score a question loses (the speech
	// act prior). Default DefaultSpeechActWeight.
	SpeechAct float64
	// Context is the share of its score a record loses when its own
	// text holds none of the query's terms (the context prior). Default
	// DefaultContextWeight.
	Context float64
	// WordSim is the weight of the soft word match (wordsim stage).
	// Default DefaultWordSimWeight.
	WordSim float64
	// Answer is the weight of the answer prior (answer stage): a share
	// of the best fused score for records naming a specific entity the
	// question does not name, when it asks for a thing. Default
	// DefaultAnswerWeight.
	Answer float64
}

// Defaults of the prior weights, chosen on principle (a named speaker is
// strong evidence, a time cue and a session's strength weaker ones) and
// checked on plateaus of LoCoMo dev (BENCHMARKS.md).
const (
	DefaultSpeakerWeight = 0.5
	DefaultTimeWeight    = 0.25
	DefaultSessionWeight = 0.25
	DefaultWordSimWeight = 0.25
)

// speakerPrior boosts the candidates spoken by the one speaker the
// question names. Names resolve against the speakers of the candidates:
// a speaker who said nothing relevant has no candidate to boost.
func speakerPrior(q *Query, cands []Candidate, w, scale float64) {
	who := oneNamedSpeaker(q, cands)
	if who == "" {
		return
	}
	for i := range cands {
		if d := cands[i].doc; d != nil && strings.ToLower(strings.TrimSpace(d.Speaker)) == who {
			cands[i].Score += w * scale
		}
	}
}

// timePrior boosts, for a "when" question (when: IsWhenQuestion of
// q.Text), candidates that hold a time expression; for a question naming
// a time ("in May 2023", "last week" relative to q.Now), candidates dated
// inside it or mentioning a time inside it (resolved against their own
// date).
func timePrior(q *Query, cands []Candidate, when bool, w, scale float64) {
	spans := q.resolvedMentions()
	if !when && len(spans) == 0 {
		return
	}
	for i := range cands {
		d := cands[i].doc
		if d == nil {
			continue
		}
		mentions := d.mentions()
		hit := when && len(mentions) > 0
		for _, s := range spans {
			if hit {
				break
			}
			if !d.Time.IsZero() && s.Contains(d.Time) {
				hit = true
			}
			for _, m := range mentions {
				if m.Resolved() && s.Overlaps(m) {
					hit = true
				}
			}
		}
		if hit {
			cands[i].Score += w * scale
		}
	}
}

// sessionPrior adds to each candidate a share of its session's best
// score, so turns of sessions that match well rise together.
func sessionPrior(cands []Candidate, w float64) {
	// Each candidate's session is looked up once: at[i] is its place in
	// best, -1 for none.
	place := sessionMaps.take()
	defer sessionMaps.drop(place)
	best := make([]float64, 0, len(cands))
	at := make([]int32, len(cands))
	for i := range cands {
		at[i] = -1
		if d := cands[i].doc; d != nil && d.Session != "" {
			k := session{d.Scope, d.Session}
			j, ok := place[k]
			if !ok {
				j = int32(len(best))
				place[k] = j
				best = append(best, 0) // max(0, score), as a missing key read 0
			}
			best[j] = max(best[j], cands[i].Score)
			at[i] = j
		}
	}
	for i, j := range at {
		if j >= 0 {
			cands[i].Score += w * best[j]
		}
	}
}
