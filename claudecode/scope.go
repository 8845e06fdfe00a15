package claudecode

import (
	"os"
	"path/filepath"
)

// ProjectScope is the scope hmo gives a Claude Code project: the root of
// the git work tree holding dir (the nearest ancestor with a .git entry,
// a directory or a worktree's file), else dir itself, cleaned. Empty dir
// gives "".
func ProjectScope(dir string) string {
	if dir == "" {
		return ""
	}
	dir = filepath.Clean(dir)
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}
