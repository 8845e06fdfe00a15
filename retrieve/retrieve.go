package retrieve

import (
	"context"
	"time"
)

// Query is what the stages see of one recall request.
type Query struct {
	Text   string
	Vector []float32 // the query's embedding; nil when there is none
	K      int       // results wanted
	// Candidates is how many candidates each generator returns (at
	// least K).
	Candidates int
	// Now is the time relative expressions in the question ("last
	// week") are resolved against; zero means no relative resolution.
	Now time.Time
}

// Hit is one candidate from one generator with its raw score.
type Hit struct {
	ID    uint64
	Score float64
	// Coverage is the IDF-weighted share of the query's terms the record
	// holds, from text generators that compute it; 0 otherwise.
	Coverage float64
}

// Doc is what the priors need of a record.
type Doc struct {
	ID      uint64 // 0 when the record is gone
	Prev    uint64 // previous record of the same session, 0 for none
	Scope   string
	Session string
	Speaker string // the record's own role or speaker
	Time    time.Time
	Text    string // the record's own text, without context
}

// Source supplies one query's candidates and metadata. The engine
// implements it over the archive and over the tier views. It need not
// be safe for concurrent use, except that Text and Vector may run
// concurrently.
type Source interface {
	// Text returns up to c lexical candidates, best first.
	Text(ctx context.Context, q *Query, c int) ([]Hit, error)
	// Vector returns up to c vector candidates (cosine), best first.
	Vector(ctx context.Context, q *Query, c int) ([]Hit, error)
	// Docs returns the metadata of ids, in order; a record that is gone
	// has a zero Doc.
	Docs(ids []uint64) ([]Doc, error)
}

// Candidate is a record under consideration with the scores stages gave
// it.
type Candidate struct {
	ID       uint64
	Text     float64 // raw lexical score; 0 when the text generator did not return it
	Vector   float64 // cosine; 0 when the vector generator did not return it
	Coverage float64 // lexical coverage (Hit.Coverage)
	Fused    float64 // after fusion, before priors
	Score    float64 // final score, higher is better
	doc      *Doc
}
