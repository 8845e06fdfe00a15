package retrieve

// OpenerOptions configure the opener stage.
type OpenerOptions struct {
	// Weight is the prior given to the turn that opens a session, as a
	// share of the best candidate's score, for a question asking for a
	// set (AsksForSet), in [0, 1]. Default DefaultOpenerWeight (0 means
	// the default; leave the stage out for no prior).
	Weight float64
}

// DefaultOpenerWeight is the opener prior's weight, a share of the best
// score. On LoCoMo dev conversations 1–4 weights from 0.03 to 0.08 are a
// plateau (the same multi-hop questions found) and 0.02 and 0.1 are
// below it; 0.05 is its middle. On conversations 5–7 it gains one
// question at 0.05 and none at the plateau's other weights
// (BENCHMARKS.md, "Multi-hop set questions").
const DefaultOpenerWeight = 0.05

// openerPrior is the opener stage. A question asking for a set asks what
// happened on several occasions, and a conversation that resumes tells
// what happened since it last met in its first turn ("Since we last
// spoke, I went to a pride parade"; "Guess what, I got a puppy two weeks
// ago"); the turns after it talk about that news. For such a question the
// first record of each session (no previous record, not derived) gains w
// times the best candidate's score. Other questions are left alone: on
// LoCoMo dev an opener is evidence 5 times as often as another turn among
// a set question's candidates ranked 11–30 (10% against 1.7%, alike in
// both halves of the file). cands must be sorted best first; they stay
// sorted.
func openerPrior(w float64, q *Query, cands []Candidate, src Source) error {
	if w <= 0 || len(cands) == 0 || cands[0].Score <= 0 || !q.asksForSet() {
		return nil
	}
	if err := loadMissingDocs(cands, src); err != nil {
		return err
	}
	add := w * cands[0].Score
	moved := false
	for i := range cands {
		if d := cands[i].doc; d != nil && d.ID != 0 && d.Session != "" && d.Prev == 0 && !d.Derived {
			cands[i].Score += add
			moved = true
		}
	}
	if moved {
		selectBest(cands)
	}
	return nil
}
