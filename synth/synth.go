// Package synth generates seeded synthetic memory streams for benchmarks:
// sentence-like records built from real English words (so the embedded
// embedder sees known vocabulary), grouped in sessions, with planted
// needles whose queries have exactly one right answer.
package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

var (
	names    = strings.Fields("alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia peggy rupert sybil trent victor walter yara zoe liam noah emma ava mia ethan lucas amelia harper")
	verbs    = strings.Fields("visited cooked painted repaired bought sold planned discussed cancelled booked finished started watched read wrote cleaned organised reviewed tested deployed moved borrowed returned designed measured")
	objects  = strings.Fields("garden kitchen bicycle guitar novel report budget roof fence laptop camera piano boat recipe schedule contract website database server garage painting sweater tent telescope aquarium")
	places   = strings.Fields("paris london tokyo berlin lisbon madrid rome vienna prague oslo dublin boston denver austin seattle chicago toronto sydney auckland nairobi cairo mumbai seoul lima quito")
	times    = strings.Fields("monday tuesday wednesday thursday friday saturday sunday morning evening afternoon weekend yesterday today tonight")
	feelings = strings.Fields("happy tired excited worried proud calm nervous curious grateful annoyed relieved bored")
	fillers  = []string{"hey, how are you doing?", "thanks, that sounds good.", "ok, talk to you later.", "haha yes exactly!", "sure, no problem.", "nice, good to hear."}
)

// Needle is a planted fact with its query.
type Needle struct {
	Index int    // position of the needle in the stream
	Query string // a query whose only right answer is the needle
	Text  string
}

// Options configure a stream.
type Options struct {
	Seed        uint64        // default 1
	Records     int           // total records
	SessionLen  int           // records per session; default 20
	Needles     int           // planted needles; default 100
	Start       time.Time     // event time of the first record; default 2020-01-01 UTC
	Step        time.Duration // event time between records; default 1 minute
	ScopeEveryN int           // a new scope every N sessions; default 0 (one scope)
}

// Stream generates records on demand, in order.
type Stream struct {
	o       Options
	rng     *rand.Rand
	needles map[int]Needle
	next    int
}

// New returns a stream. The same options give the same records.
func New(o Options) *Stream {
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.SessionLen == 0 {
		o.SessionLen = 20
	}
	if o.Needles == 0 {
		o.Needles = 100
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if o.Step == 0 {
		o.Step = time.Minute
	}
	s := &Stream{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x686d6f)), needles: map[int]Needle{}}
	for i := 0; i < o.Needles && o.Records > 0; i++ {
		idx := int(uint64(i)*uint64(o.Records)/uint64(o.Needles)) + o.Records/(2*o.Needles)
		idx = min(idx, o.Records-1)
		code := fmt.Sprintf("zq%05dx", i)
		s.needles[idx] = Needle{
			Index: idx,
			Text:  fmt.Sprintf("the locker combination for the %s project is %s, keep it private", places[i%len(places)], code),
			Query: "locker combination " + code,
		}
	}
	return s
}

// Needles returns the planted needles in stream order.
func (s *Stream) Needles() []Needle {
	out := make([]Needle, 0, len(s.needles))
	for i := 0; i < s.o.Records; i++ {
		if n, ok := s.needles[i]; ok {
			out = append(out, n)
		}
	}
	return out
}

// Next returns the next batch of up to n records, or nil at the end.
func (s *Stream) Next(n int) []engine.Input {
	var out []engine.Input
	for ; s.next < s.o.Records && len(out) < n; s.next++ {
		out = append(out, s.record(s.next))
	}
	return out
}

func (s *Stream) record(i int) engine.Input {
	sess := i / s.o.SessionLen
	scope := "synthetic"
	if s.o.ScopeEveryN > 0 {
		scope = fmt.Sprintf("scope%d", sess/s.o.ScopeEveryN)
	}
	in := engine.Input{
		Scope: scope, Session: fmt.Sprintf("s%d", sess), Role: []string{"user", "assistant"}[i%2],
		Time: s.o.Start.Add(time.Duration(i) * s.o.Step),
	}
	if n, ok := s.needles[i]; ok {
		in.Text = n.Text
		return in
	}
	in.Text = s.sentence()
	return in
}

func (s *Stream) pick(words []string) string { return words[s.rng.IntN(len(words))] }

func (s *Stream) sentence() string {
	switch s.rng.IntN(6) {
	case 0:
		return s.pick(fillers)
	case 1:
		return fmt.Sprintf("%s said they felt %s after the %s in %s", s.pick(names), s.pick(feelings), s.pick(objects), s.pick(places))
	default:
		return fmt.Sprintf("on %s %s %s the %s in %s and felt %s about the %s",
			s.pick(times), s.pick(names), s.pick(verbs), s.pick(objects), s.pick(places), s.pick(feelings), s.pick(objects))
	}
}

// Queries returns n seeded everyday queries (not needles).
func Queries(seed uint64, n int) []string {
	s := New(Options{Seed: seed, Records: 0})
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("when did %s %s the %s in %s", s.pick(names), s.pick(verbs), s.pick(objects), s.pick(places))
	}
	return out
}
