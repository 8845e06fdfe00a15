#!/usr/bin/env bash
# Load the plugin into the real OpenClaw (the openclaw npm package, on the
# node it needs) beside its bundled memory-core, the way the README installs
# it, and check with OpenClaw's own listings that no tool name is registered
# twice and that hmo-memory owns the memory slot. Run by make test-openclaw.
#
#   OPENCLAW_VERSION  the openclaw package version (default 2026.9.6)
#
# Exit status 3: openclaw cannot be installed here (the caller skips loudly).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
version=${OPENCLAW_VERSION:-2026.9.6}

out=$("$root/scripts/npm-tool.sh" openclaw "$version" 24.16.0) || exit $?
node=$(sed -n 1p <<<"$out")
prefix=$(sed -n 2p <<<"$out")
oc() { "$node" "$prefix/node_modules/openclaw/openclaw.mjs" "$@" </dev/null; }
fail() {
	echo "openclaw-e2e: FAIL: $*" >&2
	exit 1
}

(cd "$here" && npm run --silent build)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hmo=$tmp/hmo-bin # built before HOME moves, so Go's caches are the usual ones
(cd "$root" && CGO_ENABLED=0 go build -o "$hmo" ./cmd/hmo) || fail "cannot build hmo"
export OPENCLAW_STATE_DIR=$tmp/state OPENCLAW_CONFIG_PATH=$tmp/state/openclaw.json HOME=$tmp/home
mkdir -p "$HOME"
echo "openclaw-e2e: $(oc --version) on node $("$node" --version)"

# The README's install line, and why it needs both flags.
oc plugins install -l "$here" >"$tmp/plain.log" 2>&1 && fail "installed a local path without --force"
grep -q -- "--force" "$tmp/plain.log" || fail "no hint at --force: $(cat "$tmp/plain.log")"
oc plugins install -l "$here" --force >"$tmp/force.log" 2>&1 && fail "installed without --accept-capabilities"
grep -q -- "--accept-capabilities" "$tmp/force.log" || fail "no hint at --accept-capabilities: $(cat "$tmp/force.log")"
oc plugins install -l "$here" --force --accept-capabilities >"$tmp/install.log" 2>&1 || fail "install: $(cat "$tmp/install.log")"
oc config set plugins.entries.hmo-memory.hooks.allowPromptInjection true >/dev/null
oc config set plugins.entries.hmo-memory.hooks.allowConversationAccess true >/dev/null

# Default OpenClaw: memory-core stays loaded beside hmo as the dreaming sidecar.
oc plugins inspect --all --runtime --json >"$tmp/inspect.json" 2>"$tmp/inspect.err" || fail "inspect: $(cat "$tmp/inspect.err")"
oc status --json >"$tmp/status.json" 2>/dev/null || fail "status --json failed"
oc plugins doctor --json >"$tmp/doctor.json" 2>/dev/null || true
"$node" "$here/e2e/check.mjs" beside "$here/openclaw.plugin.json" "$tmp/inspect.json" "$tmp/status.json" "$tmp/doctor.json"

# The gateway itself, against a real hmo serve: the plugin loads with its
# memory capability, and its service ingests the workspace's MEMORY.md and
# daily notes, then follows an edit.
store=$tmp/store
ws=$OPENCLAW_STATE_DIR/workspace
mkdir -p "$ws/memory"
printf -- '- Ana drinks green tea.\n' >"$ws/MEMORY.md"
printf -- '# Monday\n\n- Ana moved to Porto.\n' >"$ws/memory/2026-03-02.md"
oc config set plugins.entries.hmo-memory.config.hmoDir "$store" >/dev/null
oc config set plugins.entries.hmo-memory.config.autoStart false >/dev/null
"$hmo" init --dir "$store" >/dev/null
pids=()
stop() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
}
trap 'stop; rm -rf "$tmp"' EXIT
"$hmo" serve --dir "$store" >"$tmp/serve.log" 2>&1 &
pids+=($!)
port=$("$node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
"$node" "$prefix/node_modules/openclaw/openclaw.mjs" gateway run --allow-unconfigured --bind loopback --port "$port" --token "e2e-$RANDOM$RANDOM" >"$tmp/gateway.log" 2>&1 </dev/null &
pids+=($!)
"$node" "$here/e2e/memories.mjs" "$store" 120 "Ana drinks green tea." "Ana moved to Porto." || fail "the gateway did not ingest the memory files: $(tail -20 "$tmp/gateway.log")"
printf -- "- Ana drinks green tea.\n- Ana's cat is called Miso.\n" >"$ws/MEMORY.md"
"$node" "$here/e2e/memories.mjs" "$store" 30 "Ana drinks green tea." "Ana moved to Porto." "Ana's cat is called Miso." || fail "an edit of MEMORY.md was not followed: $(tail -20 "$tmp/gateway.log")"
stop
grep -q "ready" "$tmp/gateway.log" || fail "the gateway never got ready: $(tail -20 "$tmp/gateway.log")"
if grep -iE "conflict|hmo-memory.*(error|fail)" "$tmp/gateway.log"; then fail "the gateway log has the lines above"; fi
echo "openclaw-e2e: gateway: $(grep -c 'hmo-memory: .*added' "$tmp/gateway.log") file syncs logged, memories in hmo as expected"

# With dreaming off (read from the slot owner's config), memory-core is
# not loaded at all and plugins doctor passes.
oc config set plugins.entries.hmo-memory.config.dreaming.enabled false >/dev/null
oc plugins inspect --all --runtime --json >"$tmp/inspect2.json" 2>/dev/null || fail "inspect failed"
oc plugins doctor >"$tmp/doctor2.log" 2>&1 || fail "plugins doctor exited $? with dreaming off: $(cat "$tmp/doctor2.log")"
"$node" "$here/e2e/check.mjs" alone "$here/openclaw.plugin.json" "$tmp/inspect2.json"
echo "openclaw-e2e: plugins doctor: $(tr '\n' ' ' <"$tmp/doctor2.log")"
echo "openclaw-e2e: PASS (openclaw $version)"
