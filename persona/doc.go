// Package persona is hmo's user persona (HMO section 3.4): a unit vector
// p that follows the user's record embeddings, an extractive text profile,
// and the drift gate (Eq. 6) that tells the engine when to re-score tiers
// 1 and 2. It is pure domain logic: it imports no store and no adapter and
// never reads the clock (Observe takes now).
//
// # Update rule
//
// Each Observe folds in one record with embedding e (normalised), initial
// importance I0 and text. With w = I0/10 and the learning rate η
// (Options.Rate, default 0.05):
//
//	p ← normalise((1 − η·w)·p + η·w·e)
//
// an importance-weighted exponential moving average on the unit sphere:
// important records move p more, a record of importance 0 not at all. At
// the default rate and average importance 5, p remembers about the last
// 40 records. The first Observe sets p to e.
//
// # Drift gate
//
// The anchor p̄ is p as of the last firing. After each update the drift
// d = 1 − cos(p, p̄) is compared with δ (Options.Delta, default 0.05): if
// d > δ the gate fires: Observe reports fired, the anchor moves to p (its
// time, AnchorTime, to now), Firings grows by one and a Snapshot {time,
// update, drift, top terms} joins the bounded History. The caller then
// re-scores tiers 1 and 2 (tiers.Manager.Rescore with Alignment as the
// S_p callback); moves below δ never fire, so frequent small persona
// refinements cost nothing. Options.GateOff fires on every update, the
// ablation "re-score on every persona change". The first Observe counts
// as a firing with drift 1: every alignment changes from 0 (no persona)
// to a real value.
//
// # Profile
//
// The profile is extractive and bounded:
//
//   - Terms: lowercase words (letters, digits, inner apostrophes; at least
//     one letter; MinTermRunes to MaxTermRunes long; a possessive 's
//     removed; a built-in English stop-word and chat-filler list
//     skipped). Each term's weight follows the same moving average as p,
//     applied to "the record mentions the term" (once per record): t ←
//     (1 − η·w)·t + η·w·[mentioned], so weights lie in [0, 1] and fade as
//     the user moves on. At most TermCapacity terms are tracked; beyond
//     it the lowest-weighted are dropped (down to 7/8 of the capacity).
//     Profile returns the MaxTerms heaviest, ties broken by the most
//     recent mention, then alphabetically.
//   - Statements: the text of records with I0 >= StatementMin, whitespace
//     collapsed and cut to MaxStatementBytes at a word boundary; the
//     MaxStatements most important are kept (ties: newer first, then
//     alphabetically); a repeated statement (ignoring case) takes the
//     larger importance and the later time.
//
// Profile.String renders both for a prompt.
//
// # Persistence
//
// MarshalBinary encodes the whole state (vector, anchor, counters, term
// table, statements, history; not the Options) in a versioned,
// CRC-32C-checksummed, deterministic format; UnmarshalBinary restores it
// exactly, so a restored persona continues bit for bit as the original
// would have. Malformed input fails with ErrCorrupt or ErrVersion and
// changes nothing. Times are kept in UTC.
//
// # Cost
//
// Observe is O(dims + len(text)), plus an occasional O(T log T) prune of
// the term table (T = TermCapacity): measured 18 µs at 100 dimensions and
// 36 µs at 768 with ~20-word texts and a full table. Alignment is
// O(dims): 77 ns at 16 dimensions. Marshal and Unmarshal of a full
// 100-d state (1024 terms, 27 KB) take about 0.5 ms.
package persona
