package proctest

import (
	"os"
	"strconv"
	"strings"
)

// ResidentKB sums the resident pages (Rss, in KiB) of this process's
// mappings of the files for which match is true (/proc/self/smaps). ok is
// false where there is no smaps to read.
func ResidentKB(match func(path string) bool) (kb int, ok bool) {
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	in := false
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case !strings.HasSuffix(f[0], ":"):
			// A mapping's first line: address, perms, offset, dev, inode, path.
			in = len(f) >= 6 && match(f[5])
		case in && f[0] == "Rss:" && len(f) >= 2:
			n, _ := strconv.Atoi(f[1])
			kb += n
		}
	}
	return kb, true
}
