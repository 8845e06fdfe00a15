package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/server"
)

// TestUI runs hmo ui as a user does: it starts the daemon, asks it for a
// login link and hands the link to the browser ($BROWSER here), or prints
// it; each link logs in once.
func TestUI(t *testing.T) {
	dir := newStore(t)
	t.Cleanup(func() { stopDaemon(t, dir) })
	opened := filepath.Join(t.TempDir(), "opened")
	browser := writeFile(t, "browser", []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+opened+"\n"))
	if err := os.Chmod(browser, 0o700); err != nil {
		t.Fatal(err)
	}
	noDisplay := []string{"DISPLAY=", "WAYLAND_DISPLAY="}

	r := execHMO(t, "", append(noDisplay, "BROWSER="+browser), "ui", "--dir", dir)
	link := strings.TrimSpace(r.stdout)
	got, _ := os.ReadFile(opened)
	if r.code != 0 || !strings.HasPrefix(link, "http://127.0.0.1:") || !strings.Contains(link, "/ui/login?code=") ||
		string(got) != link || !strings.Contains(r.stderr, "Opened the memory browser") {
		t.Fatalf("hmo ui: %v; the browser got %q", r, got)
	}
	if info, err := server.ReadInfo(dir); err != nil || !strings.HasPrefix(link, "http://"+info.Addr+"/") {
		t.Errorf("link %s is not the daemon's address (%+v, %v)", link, info, err)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	for i, want := range []int{http.StatusSeeOther, http.StatusForbidden} {
		resp, err := noRedirect.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want || (want == http.StatusSeeOther && len(resp.Cookies()) != 1) {
			t.Errorf("use %d of the link: %d, cookies %v; want %d", i+1, resp.StatusCode, resp.Cookies(), want)
		}
	}

	os.Remove(opened)
	for _, tc := range []struct {
		name    string
		environ []string
		args    []string
		stderr  string
	}{
		{"--no-open", append(noDisplay, "BROWSER="+browser), []string{"--no-open"}, "Open this link"},
		{"no display", append(noDisplay, "BROWSER="), nil, "No browser to open (no display"},
		{"opener fails", append(noDisplay, "BROWSER=false"), nil, "No browser to open (false: exit status 1)"},
	} {
		r := execHMO(t, "", tc.environ, append([]string{"ui", "--dir", dir}, tc.args...)...)
		l := strings.TrimSpace(r.stdout)
		if r.code != 0 || !strings.Contains(l, "/ui/login?code=") || l == link || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%s: %v; want a new link on stdout and %q", tc.name, r, tc.stderr)
		}
	}
	if _, err := os.Stat(opened); err == nil {
		t.Error("a browser was opened with --no-open")
	}
	var out server.UILogin
	r = execHMO(t, "", append(noDisplay, "BROWSER="+browser), "ui", "--dir", dir, "--json")
	decode(t, r.stdout, &out)
	if r.code != 0 || !strings.Contains(out.URL, "/ui/login?code=") || time.Until(out.Expires) <= 0 || time.Until(out.Expires) > time.Minute {
		t.Errorf("--json: %v", r)
	}
	if r := execHMO(t, "", nil, "ui", "--dir", dir, "extra"); r.code != 2 {
		t.Errorf("hmo ui extra: %v, want exit 2", r)
	}
}
