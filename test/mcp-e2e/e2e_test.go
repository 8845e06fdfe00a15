package mcpe2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/internal/proctest"
)

func TestMCPWithTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with node: skipped in -short mode")
	}
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		t.Skip("SKIPPING the MCP end-to-end test: node and npm are needed (node 20+) and were not found on PATH")
	}
	bin := filepath.Join(t.TempDir(), "hmo")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/hmo")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if _, err := os.Stat("node_modules"); err != nil {
		ci := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		if out, err := ci.CombinedOutput(); err != nil {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
	}
	store := t.TempDir()
	cmd := exec.Command(node, "--test", "e2e.test.mjs")
	cmd.Env = append(os.Environ(), "HMO_BIN="+bin, "HMO_E2E_DIR="+store)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test e2e.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the TypeScript MCP client test failed: %v", err)
	}
	if !proctest.Supported() {
		return
	}
	// The MCP server and the daemon it started must both be gone.
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := proctest.Running(bin)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hmo processes left behind: %+v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
