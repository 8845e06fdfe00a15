package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// encodeRecordV1 is the JSON layout stores written before the binary
// codec hold; decodeRecord must still read it.
func encodeRecordV1(r *Record) []byte {
	meta := *r
	meta.Text = ""
	mb, _ := json.Marshal(&meta)
	out := []byte{recordV1, 0}
	out = binary.AppendUvarint(out, uint64(len(mb)))
	return append(append(out, mb...), r.Text...)
}

func sampleRecords() []Record {
	t := time.Date(2024, 3, 5, 7, 9, 11, 123456789, time.UTC)
	return []Record{
		{},
		{ID: 1, Text: "hello"},
		{
			ID: 1 << 40, Scope: "work", Session: "s-ü", Role: "assistant", Time: t, Created: t.Add(time.Hour),
			Text: "the café is on the corner", Summary: "café", SummaryKind: SummaryEpisodic,
			Sources: []string{"D1:3", "", "D1:4"}, Prev: 7, Supersedes: 3, SupersededBy: 9,
			Header: Header{I0: 7.25, N: 42, LastUsed: t.Add(-time.Hour), P: 0.125, Tier: TierBuffer},
		},
		{ID: 5, Text: strings.Repeat("long text compresses well. ", 100), Time: time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
}

func TestRecordCodecRoundTrip(t *testing.T) {
	for _, r := range sampleRecords() {
		b, err := encodeRecord(&r, 64)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeRecord(b)
		if err != nil {
			t.Fatalf("decode %d: %v", r.ID, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
		}
		v1, err := decodeRecord(encodeRecordV1(&r))
		if err != nil {
			t.Fatalf("decode v1 %d: %v", r.ID, err)
		}
		if !reflect.DeepEqual(v1, r) {
			t.Fatalf("version 1:\n got %+v\nwant %+v", v1, r)
		}
	}
}

// TestRecordCodecCoversEveryField fills every field of a Record (and its
// Header) with a non-zero value by reflection: a field added to Record
// without a place in the binary codec fails here.
func TestRecordCodecCoversEveryField(t *testing.T) {
	var r Record
	fill(t, reflect.ValueOf(&r).Elem(), "Record")
	b, err := encodeRecord(&r, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(r)
	for i := range wv.NumField() {
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			t.Errorf("field %s is lost by the codec (encodeFields/decodeFields)", wv.Type().Field(i).Name)
		}
	}
}

func fill(t *testing.T, v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(path + "-value")
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(len(path)))
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(len(path)))
	case reflect.Float64, reflect.Float32:
		v.SetFloat(float64(len(path)) + 0.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.String {
			t.Fatalf("%s: fill knows no %s", path, v.Type())
		}
		v.Set(reflect.ValueOf([]string{path + "-a", path + "-b"}))
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Unix(int64(len(path))*1e6, int64(len(path))).UTC()))
			return
		}
		for i := range v.NumField() {
			fill(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	default:
		t.Fatalf("%s: fill knows no %s", path, v.Type())
	}
}

func TestRecordCodecRefusesDamage(t *testing.T) {
	r := sampleRecords()[2]
	b, _ := encodeRecord(&r, 1<<20)
	for _, bad := range [][]byte{nil, {2}, {9, 0, 0}, b[:10], append([]byte{2, 0}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)} {
		if _, err := decodeRecord(bad); err == nil {
			t.Errorf("decodeRecord(%x) accepted", bad)
		}
	}
}

// TestRecordCodecSize measures the bytes per record of a typical
// conversational record in both layouts (reported in BENCHMARKS.md).
func TestRecordCodecSize(t *testing.T) {
	tm := time.Date(2024, 3, 5, 7, 9, 11, 0, time.UTC)
	r := Record{
		ID: 123456, Scope: "synthetic", Session: "s4821", Role: "assistant", Time: tm, Created: tm,
		Text: "on monday alice visited the garden in paris and felt happy about the guitar",
		Prev: 123455, Header: Header{I0: 5, LastUsed: tm, Tier: TierArchive},
	}
	v2, _ := encodeRecord(&r, DefaultCompressAbove)
	v1 := encodeRecordV1(&r)
	t.Logf("record of %d text bytes: JSON layout %d bytes, binary %d bytes", len(r.Text), len(v1), len(v2))
	if len(v2) >= len(v1) {
		t.Fatalf("binary layout (%d) not smaller than JSON (%d)", len(v2), len(v1))
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, r := range sampleRecords() {
		b, _ := encodeRecord(&r, 64)
		f.Add(b)
		f.Add(encodeRecordV1(&r))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		again, err := encodeRecord(&r, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := decodeRecord(again)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		// Compared by encoding: NaN scores are not DeepEqual to themselves.
		if third, _ := encodeRecord(&r2, 1<<20); !bytes.Equal(third, again) {
			t.Fatalf("re-encoded record differs:\n%+v\n%+v", r, r2)
		}
	})
}
