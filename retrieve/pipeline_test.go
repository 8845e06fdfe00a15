package retrieve_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

func TestParseStages(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want retrieve.Stages
		err  bool
	}{
		{"", retrieve.DefaultStages, false},
		{"default", retrieve.DefaultStages, false},
		{"-vector", retrieve.DefaultStages &^ retrieve.StageVector, false},
		{"none,text,speaker", retrieve.StageText | retrieve.StageSpeaker, false},
		{" None , +VECTOR ", retrieve.StageVector, false},
		{"none,text,segtree,-segtree", retrieve.StageText, false},
		{"none", 0, true},
		{"-text,-vector", 0, true},
		{"bogus", 0, true},
		{"-", 0, true},
	} {
		got, err := retrieve.ParseStages(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseStages(%q) error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if tc.err {
			if !errors.Is(err, retrieve.ErrInvalidStages) {
				t.Errorf("ParseStages(%q) error %v does not wrap ErrInvalidStages", tc.in, err)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("ParseStages(%q) = %s, want %s", tc.in, got, tc.want)
		}
		again, err := retrieve.ParseStages("none," + got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %s: %s, %v", got, again, err)
		}
	}
}

func TestFusion(t *testing.T) {
	src := &fakeSource{
		text: []retrieve.Hit{{ID: 1, Score: 10}, {ID: 2, Score: 6}, {ID: 3, Score: 2}},
		vec:  []retrieve.Hit{{ID: 3, Score: 0.9}, {ID: 4, Score: 0.5}, {ID: 1, Score: 0.1}},
	}
	q := &retrieve.Query{Text: "q", Vector: []float32{1}, K: 10, Candidates: 10}
	for _, tc := range []struct {
		name string
		o    retrieve.Options
		want []uint64
	}{
		// linear 0.8/0.2: 1 = 0.8, 2 = 0.4, 3 = 0.2, 4 = 0.2*0.5 = 0.1
		{"linear", retrieve.Options{}, []uint64{1, 2, 3, 4}},
		// linear 0.2/0.8: 1 = 0.2, 2 = 0.1, 3 = 0.8, 4 = 0.4
		{"vector-heavy", retrieve.Options{Fusion: retrieve.FusionOptions{TextWeight: 0.2}}, []uint64{3, 4, 1, 2}},
		{"text only", retrieve.Options{Stages: retrieve.StageText}, []uint64{1, 2, 3}},
		{"vector only", retrieve.Options{Stages: retrieve.StageVector}, []uint64{3, 4, 1}},
		// rrf: 1 = 1/61 + 1/63 = 3; 2 = 1/62 = 4: ties, higher id first
		{"rrf", retrieve.Options{Fusion: retrieve.FusionOptions{Method: retrieve.FusionRRF}}, []uint64{3, 1, 4, 2}},
	} {
		got, err := run(&tc.o, q, src)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("%s: order %v, want %v", tc.name, ids(got), tc.want)
		}
	}
}

func TestNewRejects(t *testing.T) {
	for _, o := range []retrieve.Options{
		{Fusion: retrieve.FusionOptions{Method: "avg"}},
		{Fusion: retrieve.FusionOptions{TextWeight: 1.5}},
		{Fusion: retrieve.FusionOptions{RRFK: -1}},
		{Stages: retrieve.StageSpeaker},
	} {
		if _, err := retrieve.New(&o); !errors.Is(err, retrieve.ErrInvalidOption) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOption", o, err)
		}
	}
}
