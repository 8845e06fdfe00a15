package hook

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Which transcripts the hook reads.
//
// A hook payload names the file to ingest (transcript_path), and the
// payload is input: the hook reads a path only when it is what Claude
// Code writes, a conversation transcript:
//
//   - an absolute path ending in ".jsonl";
//   - that lies, symbolic links resolved, under one of
//     Options.TranscriptRoots (default: $CLAUDE_CONFIG_DIR/projects when
//     that variable is set, else ~/.claude/projects), where Claude Code
//     keeps one directory per project;
//   - that is a regular file (not a device, FIFO, socket or directory,
//     checked on the open file, which is opened without following a
//     final symbolic link and without blocking);
//   - owned by the user running the hook.
//
// A path that fails any of these is refused with ErrTranscript before
// anything is written under Options.StateDir.
//
// Reading is bounded too: at most Options.MaxReadBytes of new transcript
// per run (the offset advances over what was read, and the next run goes
// on from there), and every read checks the hook's deadline.

// DefaultTranscriptRoots returns where Claude Code keeps transcripts:
// $CLAUDE_CONFIG_DIR/projects when that variable is set, else
// ~/.claude/projects.
func DefaultTranscriptRoots() []string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return []string{filepath.Join(d, "projects")}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	return []string{filepath.Join(home, ".claude", "projects")}
}

// openTranscript checks path against the rule above and opens it.
func openTranscript(path string, roots []string) (*os.File, os.FileInfo, error) {
	refuse := func(why string) (*os.File, os.FileInfo, error) {
		return nil, nil, fmt.Errorf("%w: %s: %s", ErrTranscript, path, why)
	}
	if !filepath.IsAbs(path) {
		return refuse("not an absolute path")
	}
	if !strings.HasSuffix(path, ".jsonl") {
		return refuse("not a .jsonl file")
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return refuse("cannot resolve: " + err.Error())
	}
	if !strings.HasSuffix(real, ".jsonl") {
		return refuse("links to a file that is not .jsonl")
	}
	if !underAny(real, roots) {
		return refuse(fmt.Sprintf("not under Claude Code's transcript directories %v", roots))
	}
	f, err := openNoBlock(real)
	if err != nil {
		return refuse(err.Error())
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return refuse(err.Error())
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return refuse("not a regular file (" + fi.Mode().Type().String() + ")")
	}
	if !ownedByMe(fi) {
		f.Close()
		return refuse("owned by another user")
	}
	return f, fi, nil
}

// underAny reports whether path lies strictly inside one of roots (each
// resolved through symbolic links).
func underAny(path string, roots []string) bool {
	for _, r := range roots {
		if r == "" || !filepath.IsAbs(r) {
			continue
		}
		if rr, err := filepath.EvalSymlinks(r); err == nil {
			r = rr
		}
		rel, err := filepath.Rel(r, path)
		if err == nil && rel != "." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != ".." {
			return true
		}
	}
	return false
}

// ctxReader fails a read once ctx ends, so a hook never reads past its
// deadline.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
