package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/hook"
)

// pluginDir is the Claude Code plugin bundle.
const pluginDir = "../../integrations/claude-code"

// pendingCommands are subcommands the plugin runs that are built on
// another branch (the daemon's); remove an entry once it is merged, so
// the test checks it here too.
var pendingCommands = []string{}

// readJSON decodes a bundle file strictly into v.
func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pluginDir, name))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// isCommand reports whether name is a subcommand of hmo.
func isCommand(name string) bool {
	for _, c := range newRoot(&env{}).Commands() {
		if c.Name() == name {
			return true
		}
	}
	return false
}

// checkCommand fails unless argv runs a real hmo subcommand.
func checkCommand(t *testing.T, where string, argv []string) {
	t.Helper()
	if len(argv) < 2 || argv[0] != "hmo" {
		t.Errorf("%s: command %q does not run hmo", where, argv)
		return
	}
	if !isCommand(argv[1]) && !slices.Contains(pendingCommands, argv[1]) {
		t.Errorf("%s: %q is not an hmo subcommand", where, argv[1])
	}
	if argv[1] == "hook" && (len(argv) != 4 || argv[2] != "claude" || !slices.Contains(hook.Events, argv[3])) {
		t.Errorf("%s: %q: want hmo hook claude <one of %v>", where, argv, hook.Events)
	}
}

func TestClaudeCodePlugin(t *testing.T) {
	var manifest struct {
		Name        string `json:"name"`
		Version     string `json:"version"`
		Description string `json:"description"`
		Author      struct {
			Name string `json:"name"`
		} `json:"author"`
		Keywords []string `json:"keywords"`
		Network  struct {
			Hosts []string `json:"hosts"`
		} `json:"network"`
	}
	readJSON(t, ".claude-plugin/plugin.json", &manifest)
	if manifest.Name != "hmo" || manifest.Version == "" || manifest.Description == "" {
		t.Errorf("plugin.json: %+v", manifest)
	}
	// hmo reaches only loopback: its daemon and a local Ollama.
	for _, h := range manifest.Network.Hosts {
		if h != "127.0.0.1" && h != "localhost" {
			t.Errorf("plugin.json declares non-loopback host %q", h)
		}
	}

	var market struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Owner       struct {
			Name string `json:"name"`
		} `json:"owner"`
		Plugins []struct {
			Name, Source, Description string
		} `json:"plugins"`
	}
	readJSON(t, ".claude-plugin/marketplace.json", &market)
	if len(market.Plugins) != 1 || market.Plugins[0].Name != manifest.Name || market.Plugins[0].Source != "./" || market.Owner.Name == "" || market.Description == "" {
		t.Errorf("marketplace.json: %+v", market)
	}

	var mcp struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	readJSON(t, ".mcp.json", &mcp)
	srv, ok := mcp.MCPServers["hmo"]
	if !ok || len(mcp.MCPServers) != 1 {
		t.Fatalf(".mcp.json: servers %v, want hmo only", mcp.MCPServers)
	}
	checkCommand(t, ".mcp.json", append([]string{srv.Command}, srv.Args...))
	if srv.Args[0] != "mcp" {
		t.Errorf(".mcp.json runs %v, want hmo mcp", srv.Args)
	}

	type handler struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	}
	var hooks struct {
		Description string `json:"description"`
		Hooks       map[string][]struct {
			Matcher string    `json:"matcher"`
			Hooks   []handler `json:"hooks"`
		} `json:"hooks"`
	}
	readJSON(t, "hooks/hooks.json", &hooks)
	for _, ev := range hook.Events {
		groups := hooks.Hooks[ev]
		if len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Errorf("hooks.json: %s has %d groups, want one with one handler", ev, len(groups))
			continue
		}
		h := groups[0].Hooks[0]
		argv := strings.Fields(h.Command)
		checkCommand(t, "hooks.json "+ev, argv)
		if h.Type != "command" || argv[len(argv)-1] != ev || h.Timeout <= 0 || h.Timeout > 30 {
			t.Errorf("hooks.json %s: %+v, want a command for that event with a timeout of at most 30 s", ev, h)
		}
	}
	if len(hooks.Hooks) != len(hook.Events) {
		t.Errorf("hooks.json configures %d events, want %d", len(hooks.Hooks), len(hook.Events))
	}
}
