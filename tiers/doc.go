// Package tiers is hmo's tier membership: the priority score of HMO
// (Eq. 5) and the rules that place records in tier 1 (the RAM cache),
// tier 2 (the buffer) or only tier 3 (the archive). It is pure domain
// logic: it imports no store and no adapter, holds no I/O and never reads
// the clock (every operation takes now).
//
// # Priority
//
// Priority is Eq. 5 of DESIGN.md section 3.3:
//
//	P = (α·I0/10 + β·S_p + γ·ln(1+n)) · exp(−λ·Δt / (1 + ln(1+n)))
//
// with the defaults α = 0.6, β = 0.4, γ = 0.2, λ = 0.05 per day (Params).
//
// # Membership rules
//
// The Manager holds the active records (tiers 1 and 2) as Entries. Tier 3
// is the caller's archive: every record is in it, and a record the Manager
// does not hold is "in tier 3". Records are ranked by P, highest first;
// equal P ranks the larger (newer) id first, so every order is total and
// every result deterministic. Among the active records:
//
//   - The recent window is the RecentSessions largest SessionSeq values
//     among the active records (all of them if there are fewer).
//   - Tier 1 holds the records of the recent window, the highest-ranked
//     first, up to Tier1Cap: if the recent sessions alone exceed the cap,
//     the highest-P of them are kept and the rest compete for tier 2. The
//     remaining slots, at most PivotalK, go to the highest-ranked records
//     outside the window (the pivotal records, see Pivotal). Recent
//     records thus take precedence over pivotal ones.
//   - Tier 2 holds the next Tier2Cap records by rank, among all the
//     others.
//   - When more remain, the lowest-ranked record outside tier 1 goes to
//     tier 3, one at a time (the window is re-derived after each, which
//     matters only when that removes the last active record of a recent
//     session), until tier 2 fits.
//
// Priorities are updated lazily (HMO section 3.3): Add and Access score
// only the record they are given, and rank it against the stored P of the
// active records, as computed at their last Add, Access or Rescore. A
// tier-3 record is scored only when Access brings it back; no operation
// ever visits the archive. Rescore refreshes tiers 1 and 2 (decay and, via
// a callback, S_p) — call it when the persona drift gate fires, and, if
// decay should show between firings, at some coarse interval such as a
// session change.
//
// # Moves
//
// Every mutating operation returns its net membership changes as Moves,
// sorted by id: a record placed by Add or Access comes from tier 3, a
// record dropped from tier 2 goes to tier 3, and a record that changes
// tier and back within one operation has no move. Applying the moves to
// the persisted tiers keeps them equal to the Manager's (the property
// tests check exactly this).
//
// # Integration with the engine
//
//   - Remember: Add(entry, now) with n = 0 and LastUsed = the event time;
//     store the returned Entry as the record's header and apply the moves
//     to the headers of the other records, in the same bbolt transaction.
//   - Recall: for every record returned to the caller, Access(header,
//     now) with the header as stored and its current S_p; persist the
//     returned Entry and the moves. To search tier 1 or 2, filter by
//     Tier(id) or Members.
//   - Persona drift gate fired: Rescore(now, persona alignment by id),
//     then persist Entries (their P and S_p changed) and the moves.
//   - Forget: Forget(id); persist the moves.
//   - Open: Restore(the persisted Entries of tiers 1 and 2); normally no
//     moves, or the moves implied by changed options.
//
// Call the mutating methods in the order their results are committed
// (under the store's write lock), so the persisted tiers replay the
// Manager's history.
//
// # Cost
//
// With A = Len(1) + Len(2) <= Tier1Cap + Tier2Cap (4352 by default) and
// S the number of distinct sessions among them:
//
//   - Add, Access, Forget: O(log A) to find the place, O(A + S) pointer
//     copying (a slice insert or delete) and O(1) tier changes; when the
//     recent window moves (a new session, about once per session) an O(A)
//     merge re-partitions the records. Measured at the default capacities
//     with 8192 records behind them, on a loaded 2-core machine
//     (bench_test.go): Add 2-3 µs within a session and 9-11 µs on average
//     with a new session every 20 records; Access 4.5-6 µs for an active
//     record and about 3 µs for a tier-3 one.
//   - Rescore and Restore: O(A log A) (a sort of the active records), plus
//     A calls of the S_p callback; independent of the archive's size.
//     Rescore 1.2 ms and Restore 3-3.4 ms for A = 4193.
//
// Note that with the defaults tier 1 holds the records of the last two
// sessions plus 64 pivotal ones: Tier1Cap (256) binds only when the two
// recent sessions hold more than 192 records between them.
//
// Memory is O(A): one Entry per active record, nothing per archived one.
package tiers
