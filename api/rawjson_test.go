package api_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/api"
)

func TestCheckRawJSON(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{`{"text":"plain"}`, true},
		{`{"text":"caf\u00e9 \ud83d\ude00"}`, true},
		{`{"text":"a \\ud800 escaped backslash"}`, true},
		{`{"text":"\\\ud83d\ude00"}`, true},
		{`{"text":"lone \ud800"}`, false},
		{`{"text":"lone at end \udbff"}`, false},
		{`{"text":"low alone \udc00"}`, false},
		{`{"text":"high then text \ud800abc"}`, false},
		{`{"text":"two highs \ud800\ud800"}`, false},
		{"{\"text\":\"bad \xff byte\"}", false},
		{"{\"text\":\"truncated \xe2\x82\"}", false},
		{`{"\ud800":"key"}`, false},
	}
	for _, tt := range tests {
		err := api.CheckRawJSON([]byte(tt.in))
		if (err == nil) != tt.ok {
			t.Errorf("%q: got %v, want ok=%v", tt.in, err, tt.ok)
		}
		if err != nil && !errors.Is(err, api.ErrInvalid) {
			t.Errorf("%q: %v does not wrap ErrInvalid", tt.in, err)
		}
	}
}

// FuzzCheckRawJSON: whatever CheckRawJSON accepts, encoding/json decodes
// to strings without a replacement character it did not contain.
func FuzzCheckRawJSON(f *testing.F) {
	for _, s := range []string{`{"text":"x"}`, `{"text":"\ud800"}`, `"\\u00e9"`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if api.CheckRawJSON(b) != nil {
			return
		}
		var s string
		if json.Unmarshal(b, &s) != nil {
			return
		}
		if containsFFFD(s) && !containsFFFDInput(b) {
			t.Fatalf("accepted %q, decoded with U+FFFD: %q", b, s)
		}
	})
}

func containsFFFD(s string) bool {
	for _, r := range s {
		if r == '\uFFFD' {
			return true
		}
	}
	return false
}

// containsFFFDInput reports whether the input itself spells U+FFFD.
func containsFFFDInput(b []byte) bool {
	for i := 0; i+2 < len(b); i++ {
		if b[i] == 0xef && b[i+1] == 0xbf && b[i+2] == 0xbd {
			return true
		}
	}
	for i := 0; i+5 < len(b); i++ {
		if b[i] == '\\' && b[i+1] == 'u' && strings.EqualFold(string(b[i+2:i+6]), "fffd") {
			return true
		}
	}
	return false
}
