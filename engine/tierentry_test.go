package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/tiers"
)

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// TestDecodeEntryIsJSONUnmarshal: decodeEntry gives what json.Unmarshal
// gives, value and failure, for the entries json.Marshal writes (random
// values, odd sessions and times) and for edited and malformed ones; the
// fast path takes json.Marshal's layout.
func TestDecodeEntryIsJSONUnmarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	sessions := []string{"", "s1", "conv-26/session_3", `quote"d`, `back\slash`, "tab\there", "naïve ✓", "\x00", "<html>&"}
	times := []time.Time{{}, time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", 5*3600+1800)),
		time.Unix(1e9, 1).UTC(), time.Date(2024, 5, 1, 12, 0, 0, 0, time.FixedZone("", -7*3600))}
	floats := []float64{0, 1, -1, 0.5, 1e-7, 1e21, 123456.789, math.SmallestNonzeroFloat64, math.MaxFloat64, 10}
	plain := 3 // the first sessions need no escape: json.Marshal's layout is read by the fast path
	var inputs [][]byte
	for i := range 2000 {
		en := tiers.Entry{ID: r.Uint64() >> uint(r.IntN(64)), Session: sessions[r.IntN(len(sessions))], SessionSeq: uint64(r.IntN(1000)),
			I0: floats[r.IntN(len(floats))] * r.Float64(), N: r.Uint32() >> uint(r.IntN(32)), LastUsed: times[r.IntN(len(times))].Add(time.Duration(r.Int64N(1e15))),
			Sp: r.Float64(), P: floats[r.IntN(len(floats))], Tier: uint8(r.IntN(4))}
		if i%3 == 0 {
			en.I0 = floats[r.IntN(len(floats))]
		}
		b, err := json.Marshal(en)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
		if _, ok := fastEntry(b); !ok && indexOf(sessions, en.Session) < plain {
			t.Errorf("the fast path did not read %s", b)
		}
	}
	good := string(inputs[1])
	for _, s := range []string{
		good[:len(good)-1], good + " ", " " + good, "{}", "", "null", `{"id":1}`, good[:10],
		`{"ID":01,"Session":"a","SessionSeq":1,"I0":1,"N":1,"LastUsed":"2024-05-01T12:00:00Z","Sp":0,"P":0,"Tier":1}`,
		`{"ID":1,"Session":"a","SessionSeq":1,"I0":1.,"N":1,"LastUsed":"2024-05-01T12:00:00Z","Sp":0,"P":0,"Tier":1}`,
		`{"ID":1,"Session":"a","SessionSeq":1,"I0":-.5,"N":1,"LastUsed":"2024-05-01T12:00:00Z","Sp":0,"P":0,"Tier":1}`,
		`{"ID":1,"Session":"a","SessionSeq":1,"I0":1e,"N":1,"LastUsed":"2024-05-01T12:00:00Z","Sp":0,"P":0,"Tier":1}`,
		`{"ID":1,"Session":"a","SessionSeq":1,"I0":1,"N":-1,"LastUsed":"2024-05-01T12:00:00Z","Sp":0,"P":0,"Tier":1}`,
		`{"ID":1,"Session":"a","SessionSeq":1,"I0":1,"N":4294967296,"LastUsed":"2024-05-01T12:00:00Z","Sp":0,"P":0,"Tier":1}`,
		`{"ID":1,"Session":"a","SessionSeq":1,"I0":1,"N":1,"LastUsed":"2024-05-01T12:00:00Z","Sp":0,"P":0,"Tier":256}`,
		`{"ID":1,"Session":"a","SessionSeq":1,"I0":1,"N":1,"LastUsed":"yesterday","Sp":0,"P":0,"Tier":1}`,
		`{"ID":1,"Session":"a","SessionSeq":1,"I0":1,"N":1,"LastUsed":"2024-05-01T12:00:00Z,"Sp":0,"P":0,"Tier":1}`,
		`{"ID":1,"Session":"a","SessionSeq":1,"I0":1,"N":1,"LastUsed":null,"Sp":0,"P":0,"Tier":1}`,
		`{"ID":1,"Session":"a","SessionSeq":1,"I0":1E+2,"N":1,"LastUsed":"2024-05-01T12:00:00Z","Sp":-0,"P":-0.0e-0,"Tier":1}`,
		`{"ID":1,"Session":"a","SessionSeq":1,"I0":1,"N":1,"LastUsed":"2024-05-01T12:00:00Z","Sp":0,"P":0,"Tier":1,"X":2}`,
		`{"Tier":1,"ID":1}`, `{"ID":1,"Session":"a"}x`,
	} {
		inputs = append(inputs, []byte(s))
	}
	for _, b := range inputs {
		var want tiers.Entry
		wantErr := json.Unmarshal(b, &want)
		got, err := decodeEntry(b)
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, json.Unmarshal's %v", b, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want)) {
			t.Errorf("%s:\n got %#v\nwant %#v", b, got, want)
		}
	}
}
