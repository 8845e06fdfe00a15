// Package proctest finds processes by their executable, for tests that
// must show no process is left behind. It reads /proc and is for tests
// only.
package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Proc is one live process.
type Proc struct {
	PID     int
	State   string // from /proc/PID/stat: R, S, Z (zombie)...
	Cmdline string
}

// Supported reports whether processes can be listed here (Linux /proc).
func Supported() bool {
	_, err := os.Stat("/proc/self/cmdline")
	return err == nil
}

// Running lists the processes whose command line starts with exe, the
// calling process excluded. Zombies are listed too (their State is Z),
// found through their parent's record when the command line is gone.
func Running(exe string) []Proc {
	var out []Proc
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		state := procState(pid)
		if args[0] == exe || (len(b) == 0 && state == "Z" && procComm(pid) == filepath.Base(exe)[:min(15, len(filepath.Base(exe)))]) {
			out = append(out, Proc{PID: pid, State: state, Cmdline: strings.Join(args, " ")})
		}
	}
	return out
}

func procState(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	// pid (comm) state ...
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return ""
	}
	return string(b[i+2])
}

func procComm(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(b))
}
