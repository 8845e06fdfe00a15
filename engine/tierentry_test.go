package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

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

// TestEntryCodecRoundTrip: every tier entry encodeEntry writes reads back
// as it was (LastUsed in UTC, as record headers are read), and every
// truncation or extension of one is refused, never misread.
func TestEntryCodecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	sessions := []string{"", "s1", "conv-26/session_3", `quote"d`, "naïve ✓", "\x00", string([]byte{entryV1})}
	times := []time.Time{{}, time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", 5*3600+1800)), time.Unix(-1e10, 7).UTC()}
	floats := []float64{0, 1, -1, 0.5, 1e-7, 1e21, math.SmallestNonzeroFloat64, math.MaxFloat64, math.Inf(1), 10}
	for range 2000 {
		en := tiers.Entry{ID: r.Uint64() >> uint(r.IntN(64)), Session: sessions[r.IntN(len(sessions))], SessionSeq: r.Uint64() >> uint(r.IntN(64)),
			I0: floats[r.IntN(len(floats))] * r.Float64(), N: r.Uint32() >> uint(r.IntN(32)), LastUsed: times[r.IntN(len(times))].Add(time.Duration(r.Int64N(1e15))),
			Sp: r.Float64(), P: floats[r.IntN(len(floats))], Tier: uint8(r.IntN(256))}
		b := encodeEntry(&en)
		got, err := decodeEntry(b)
		if err != nil {
			t.Fatalf("%+v: %v", en, err)
		}
		want := en
		want.LastUsed = en.LastUsed.UTC()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, want)
		}
		for n := range len(b) {
			if _, err := decodeEntry(b[:n]); err == nil {
				t.Fatalf("%+v cut to %d of %d bytes: no error", en, n, len(b))
			}
		}
		if _, err := decodeEntry(append(b[:len(b):len(b)], 0)); err == nil {
			t.Fatalf("%+v with a byte more: no error", en)
		}
	}
}

// TestWithHeaderIsReencoding: replacing a stored record's header gives
// what decoding it, setting the header and encoding it again gives,
// compressed text or not; a JSON (version 1) record comes back in the
// current layout; damaged records are refused.
func TestWithHeaderIsReencoding(t *testing.T) {
	hdrs := []Header{{}, {I0: 3, N: 1 << 31, LastUsed: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC), P: 0.75, Tier: TierArchive},
		{I0: 10, N: 0, LastUsed: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), P: 1e-9, Tier: TierCache}}
	for _, r := range sampleRecords() {
		for _, h := range hdrs {
			for _, v1 := range []bool{false, true} {
				stored, err := encodeRecord(&r, 64)
				if err != nil {
					t.Fatal(err)
				}
				if v1 {
					stored = encodeRecordV1(&r)
				}
				got, err := withHeader(stored, h, 64)
				if err != nil {
					t.Fatalf("record %d: %v", r.ID, err)
				}
				w := r
				w.Header = h
				want, err := encodeRecord(&w, 64)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("record %d (v1 %v), header %+v:\n got %x\nwant %x", r.ID, v1, h, got, want)
				}
				back, err := recordHeader(got)
				if err != nil || back != h {
					t.Fatalf("record %d: header read back %+v, %v; want %+v", r.ID, back, err, h)
				}
			}
		}
		stored, _ := encodeRecord(&r, 64)
		for n := range len(stored) {
			if _, err := decodeRecord(stored[:n]); err != nil {
				if _, err := withHeader(stored[:n], hdrs[1], 64); err == nil && n < headerEnd(t, stored) {
					t.Fatalf("record %d cut to %d bytes: decodeRecord refuses it, withHeader does not", r.ID, n)
				}
			}
		}
	}
}

// headerEnd is the length of stored's bytes up to the end of its header.
func headerEnd(t *testing.T, stored []byte) int {
	t.Helper()
	var r Record
	rest, err := decodeFields(stored[2:], &r)
	if err != nil {
		t.Fatal(err)
	}
	return len(stored) - len(rest)
}

// TestActiveEntriesStoredBinary: a tiered store writes its tier entries
// in the binary layout, and a store whose entries are JSON (written
// before it) opens with the same tiers and headers.
func TestActiveEntriesStoredBinary(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	open := func() *Engine {
		o := probeTieredOptions(clock, &probeText{})
		o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 5, 20, 1, -1
		e, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	var ids []uint64
	for b := range 5 {
		var ins []Input
		for j := range 20 {
			ins = append(ins, Input{Scope: "s", Session: fmt.Sprint("session ", b*20+j/3), Role: "user", Time: clock.Add(time.Duration(b*20+j-200) * time.Hour),
				Text: fmt.Sprintf("note %d of batch %d about topic%d", j, b, (b*20+j)%7)})
		}
		got, err := e.Remember(context.Background(), ins...)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got...)
	}
	headers := func(e *Engine) map[uint64]Header {
		out := map[uint64]Header{}
		for _, id := range ids {
			r, err := e.Get(id)
			if err != nil {
				t.Fatal(err)
			}
			out[id] = r.Header
		}
		return out
	}
	want, wantStats := headers(e), e.TierStats()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketActive)
		entries := map[string][]byte{}
		if err := b.ForEach(func(k, v []byte) error {
			if len(v) == 0 || v[0] != entryV1 {
				return fmt.Errorf("entry %d is not binary: %q", keyU64(k), v)
			}
			en, err := decodeEntry(v)
			if err != nil {
				return err
			}
			j, err := json.Marshal(en)
			if err != nil {
				return err
			}
			entries[string(k)] = j
			return nil
		}); err != nil {
			return err
		}
		for k, j := range entries {
			if err := b.Put([]byte(k), j); err != nil {
				return err
			}
		}
		n = len(entries)
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if n != wantStats.Tier1+wantStats.Tier2 || n == 0 {
		t.Fatalf("%d entries stored, tiers hold %d + %d", n, wantStats.Tier1, wantStats.Tier2)
	}
	e = open()
	defer e.Close()
	if got, st := headers(e), e.TierStats(); !reflect.DeepEqual(got, want) || st.Tier1 != wantStats.Tier1 || st.Tier2 != wantStats.Tier2 {
		t.Fatalf("after reading JSON entries: tiers %d + %d, want %d + %d; headers equal: %v", st.Tier1, st.Tier2, wantStats.Tier1, wantStats.Tier2, reflect.DeepEqual(got, want))
	}
}
