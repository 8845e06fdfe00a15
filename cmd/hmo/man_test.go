package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestManPagesKeepHelpVerbatim: flag help is plain text, written as it
// reads in --help. (Rendered as Markdown, "ollama[:model] (default ...)"
// became a link: "ollama:model" and "<default ...>".)
func TestManPagesKeepHelpVerbatim(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	mustRun(t, "", "man", dir)
	b, err := os.ReadFile(filepath.Join(dir, "hmo-add.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"static or ollama[:model] (default $HMO_EMBEDDER or static;",
		"\\fB--embedder\\fP=\"\"\n",
		".SH SEE ALSO\n\\fBhmo(1)\\fP\n",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("hmo-add.1 lacks %q:\n%s", want, b)
		}
	}
	b, err = os.ReadFile(filepath.Join(dir, "hmo-completion-bash.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".SS Linux:\n.EX\nhmo completion bash > /etc/bash_completion.d/hmo\n.EE\n", ".PP\nYou will need"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("hmo-completion-bash.1 lacks %q:\n%s", want, b)
		}
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("no groff here to check the roff")
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.1"))
	if err != nil || len(pages) < 20 {
		t.Fatalf("%d pages (%v)", len(pages), err)
	}
	for _, p := range pages {
		out, err := exec.Command(groff, "-man", "-ww", "-z", p).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff -man -ww %s: %v\n%s", filepath.Base(p), err, out)
		}
	}
}

func TestRoffEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{`C:\path`, `C:\epath`},
		{".hidden starts a request", `\&.hidden starts a request`},
		{"'quote starts a request", `\&'quote starts a request`},
		{"two\nlines", "two lines"},
		{"plain - text [x] (y) <z> *w* _v_", "plain - text [x] (y) <z> *w* _v_"},
	}
	for _, tt := range tests {
		if got := roffLine(tt.in); got != tt.want {
			t.Errorf("roffLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := roffArg(`say "hi"`); got != `"say ""hi"""` {
		t.Errorf("roffArg = %s", got)
	}
}

func TestManDate(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "SOURCE_DATE_EPOCH" {
				return v
			}
			return ""
		}
	}
	if got, err := manDate(env("1700000000")); err != nil || got != "Nov 2023" {
		t.Errorf("SOURCE_DATE_EPOCH=1700000000: %q, %v; want Nov 2023", got, err)
	}
	if _, err := manDate(env("yesterday")); err == nil {
		t.Error("SOURCE_DATE_EPOCH=yesterday: no error")
	}
}
