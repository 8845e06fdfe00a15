package engine_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

func themeNotes() []engine.Input {
	topics := []string{"my garden roses and tulips bloom", "the database migration to postgres", "our hiking trip in the alps", "my sister's wedding in lisbon"}
	var ins []engine.Input
	for i := range 40 {
		ins = append(ins, engine.Input{Scope: "u", Session: fmt.Sprintf("s%d", i/10), Text: fmt.Sprintf("note %d about %s", i, topics[i%4])})
	}
	return ins
}

// TestThemesRebuiltFromBbolt: the theme partition is kept in bbolt: a
// reopened store loads the same partition, records that arrive later
// join it, and every theme keeps to the cap.
func TestThemesRebuiltFromBbolt(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	ids := remember(t, e, themeNotes()...)
	before, cents, err := e.Themes("u", ids)
	if err != nil {
		t.Fatal(err)
	}
	count := map[uint64]int{}
	for i, th := range before {
		if th == 0 {
			t.Fatalf("record %d has no theme", ids[i])
		}
		count[th]++
		if cents[th] == nil {
			t.Errorf("no centroid for theme %d", th)
		}
	}
	for th, n := range count {
		if n > 12 {
			t.Errorf("theme %d holds %d records, want at most 12", th, n)
		}
	}
	if len(count) < 4 {
		t.Errorf("%d themes for 4 topics", len(count))
	}
	other, _, err := e.Themes("someone-else", ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, th := range other {
		if th != 0 {
			t.Errorf("record %d of scope u has theme %d in another scope", ids[i], th)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openAt(t, dir, clock)
	defer e.Close()
	after, _, err := e.Themes("u", ids)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("themes after reopen differ:\n%v\n%v", before, after)
	}
	late := remember(t, e, engine.Input{Scope: "u", Session: "s9", Text: "more about the database migration to postgres"})
	th, _, err := e.Themes("u", late)
	if err != nil || th[0] == 0 {
		t.Errorf("a record added after the build has theme %v (%v)", th, err)
	}
}

// TestThemesForgetAndUpdate: a forgotten or superseded record leaves the
// partition at once.
func TestThemesForgetAndUpdate(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	ids := remember(t, e, themeNotes()...)
	if _, _, err := e.Themes("u", ids); err != nil {
		t.Fatal(err)
	}
	if err := e.Forget(context.Background(), ids[3]); err != nil {
		t.Fatal(err)
	}
	newID, err := e.Update(context.Background(), ids[5], "note 5 rewritten about our hiking trip")
	if err != nil {
		t.Fatal(err)
	}
	th, _, err := e.Themes("u", []uint64{ids[3], ids[5], newID, ids[4]})
	if err != nil {
		t.Fatal(err)
	}
	if th[0] != 0 || th[1] != 0 {
		t.Errorf("forgotten/superseded records still have themes %d, %d", th[0], th[1])
	}
	if th[2] == 0 || th[3] == 0 {
		t.Errorf("live records lost their themes: %v", th)
	}
}

func TestEpisodeAndVectors(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	ids := remember(t, e, themeNotes()[:6]...)
	seg, members, summary, err := e.Episode(ids[2])
	if err != nil || seg == 0 || summary == "" || !contains(members, ids[2]) {
		t.Errorf("Episode(%d) = %d %v %q %v", ids[2], seg, members, summary, err)
	}
	if seg, _, _, _ := e.Episode(999999); seg != 0 {
		t.Errorf("Episode of an unknown record = %d", seg)
	}
	vs, err := e.Vectors([]uint64{ids[0], 999999})
	if err != nil || vs[0] == nil || vs[1] != nil {
		t.Errorf("Vectors = %v, %v", vs, err)
	}
}

// TestThemesMaxRecords: a scope larger than the bound has no themes.
func TestThemesMaxRecords(t *testing.T) {
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		limit int
		want  bool
	}{{5, false}, {40, true}, {-1, true}} {
		o := testOptions(clock)
		o.ThemesMaxRecords = tc.limit
		e, err := engine.Open(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		ids := remember(t, e, themeNotes()...)
		th, _, err := e.Themes("u", ids)
		if err != nil {
			t.Fatal(err)
		}
		if got := th[0] != 0 && th[len(th)-1] != 0; got != tc.want {
			t.Errorf("limit %d: themes %v, want themes %v", tc.limit, th, tc.want)
		}
		e.Close()
	}
}
