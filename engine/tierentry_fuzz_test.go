package engine

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/tiers"
)

// FuzzDecodeEntry: decodeEntry never panics on any bytes of the active
// bucket, and an entry it accepts writes (encodeEntry) and reads back as
// it read it, whichever layout it came in (binary or the JSON of older
// stores).
func FuzzDecodeEntry(f *testing.F) {
	en := tiers.Entry{ID: 42, Session: "conv-26/session_3", SessionSeq: 7, I0: 6.5, N: 3,
		LastUsed: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), Sp: 0.25, P: 0.75, Tier: 2}
	f.Add(encodeEntry(&en))
	js, err := json.Marshal(en)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(js)
	f.Add([]byte{entryV1})
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeEntry(b)
		if err != nil {
			return
		}
		again, err := decodeEntry(encodeEntry(&got))
		if err != nil {
			t.Fatalf("%q read as %+v, which does not read back: %v", b, got, err)
		}
		want := got
		want.LastUsed = got.LastUsed.UTC()
		if !reflect.DeepEqual(again, want) && !(again.I0 != again.I0 || again.Sp != again.Sp || again.P != again.P) {
			t.Fatalf("%q: read %#v, written and read back %#v", b, got, again)
		}
	})
}
