package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
)

// listAll pages through hmo list with args until the end, returning the
// ids in order and the number of pages.
func listAll(t *testing.T, dir string, args ...string) ([]uint64, int) {
	t.Helper()
	var ids []uint64
	cursor := ""
	for pages := 1; ; pages++ {
		a := append([]string{"list", "--json", "--dir", dir}, args...)
		if cursor != "" {
			a = append(a, "--cursor", cursor)
		}
		var page api.ListResponse
		decode(t, mustRun(t, "", a...), &page)
		for _, m := range page.Memories {
			ids = append(ids, m.ID)
		}
		if cursor = page.NextCursor; cursor == "" {
			return ids, pages
		}
		if pages > 100 {
			t.Fatal("list does not end")
		}
	}
}

func TestList(t *testing.T) {
	dir := newStore(t)
	conv := readConversation(t)
	// want lists the ids (line numbers) of the conversation that pass ok.
	want := func(ok func(engine.Input) bool) []uint64 {
		var ids []uint64
		for i, in := range conv {
			if ok(in) {
				ids = append(ids, uint64(i+1))
			}
		}
		return ids
	}
	all := func(engine.Input) bool { return true }
	tests := []struct {
		name  string
		args  []string
		want  []uint64
		pages int
	}{
		{"everything, default page", nil, want(all), 2},
		{"pages of 5", []string{"--limit", "5"}, want(all), 7},
		{"session", []string{"--session", "s2", "-n", "4"}, want(func(in engine.Input) bool { return in.Session == "s2" }), 0},
		{"role", []string{"--role", "user", "--limit", "4"}, want(func(in engine.Input) bool { return in.Role == "user" }), 0},
		{"role and session", []string{"--role", "assistant", "--session", "s3", "--limit", "1"}, want(func(in engine.Input) bool { return in.Role == "assistant" && in.Session == "s3" }), 0},
		{"from", []string{"--from", "2024-06-01"}, want(func(in engine.Input) bool { return in.Session == "s3" }), 0},
		{"to", []string{"--to", "2024-04-01"}, want(func(in engine.Input) bool { return in.Session == "s1" }), 0},
		{"scope", []string{"--scope", "maya"}, want(all), 0},
		{"no such scope", []string{"--scope", "nobody"}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.want) == 0 && tt.name != "no such scope" {
				t.Fatal("the case selects nothing: it would prove little")
			}
			got, pages := listAll(t, dir, tt.args...)
			if !slices.Equal(got, tt.want) {
				t.Errorf("list %v: ids %v, want %v", tt.args, got, tt.want)
			}
			if tt.pages != 0 && pages != tt.pages {
				t.Errorf("list %v: %d pages, want %d", tt.args, pages, tt.pages)
			}
			rev, _ := listAll(t, dir, append(tt.args, "--reverse")...)
			slices.Reverse(rev)
			if !slices.Equal(rev, tt.want) {
				t.Errorf("list %v --reverse: ids %v reversed, want %v", tt.args, rev, tt.want)
			}
		})
	}

	// The text form: one line per record, and the next page's command.
	r := hmoRun(t, "", "list", "--dir", dir, "--session", "s2", "--limit", "2")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "13\t2024-04-") || !strings.Contains(lines[0], "\tmaya\ts2\t") {
		t.Errorf("list --session s2 --limit 2: %v", r)
	}
	if !strings.HasPrefix(r.stderr, "more: hmo list --dir "+dir+" --session s2 --limit 2 --cursor ") {
		t.Errorf("list without the next page's command: %q", r.stderr)
	}
	// Forgotten records leave the timeline.
	mustRun(t, "", "forget", "--dir", dir, "1", "2")
	if got, _ := listAll(t, dir, "--limit", "100"); len(got) != conversationRecords-2 || got[0] != 3 {
		t.Errorf("list after forget 1 2: %v", got)
	}
}

func TestListBadInput(t *testing.T) {
	dir := newStore(t)
	var page api.ListResponse
	decode(t, mustRun(t, "", "list", "--json", "--dir", dir, "--limit", "3"), &page)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"limit 0", []string{"--limit", "0"}, 2, "--limit 0: want 1 to 100"},
		{"limit over", []string{"--limit", "101"}, 2, "--limit 101: want 1 to 100"},
		{"bad time", []string{"--from", "soon"}, 2, `time "soon"`},
		{"empty range", []string{"--from", "2024-05-01", "--to", "2024-04-01"}, 2, "empty time range"},
		{"malformed cursor", []string{"--cursor", "%%%"}, 2, "cursor"},
		{"cursor of another listing", []string{"--cursor", page.NextCursor, "--session", "s2"}, 2, "another query"},
		{"argument", []string{"cats"}, 2, "list takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hmoRun(t, "", append([]string{"list", "--dir", dir}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) || !strings.HasPrefix(r.stderr, "hmo list: ") || r.stdout != "" {
				t.Errorf("%v\nwant exit %d and %q", r, tt.code, tt.msg)
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "typo")
	if r := hmoRun(t, "", "list", "--dir", missing); r.code != 1 || !strings.Contains(r.stderr, "no store in") {
		t.Errorf("list on a missing store: %v", r)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("list created %s", missing)
	}
}
