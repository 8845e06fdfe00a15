#!/usr/bin/env bash
# Validate this Claude Code plugin and its marketplace with Claude Code's own
# validator, strictly (warnings fail): claude plugin validate --strict, from
# the @anthropic-ai/claude-code npm package. Run by make test-claude-plugin.
#
#   CLAUDE_CODE_VERSION  the package version (default 2.1.330)
#
# Exit status 3: the package cannot be installed here (the caller skips loudly).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
version=${CLAUDE_CODE_VERSION:-2.1.330}
out=$("$root/scripts/npm-tool.sh" @anthropic-ai/claude-code "$version" 22.0.0) || exit $?
node=$(sed -n 1p <<<"$out")
prefix=$(sed -n 2p <<<"$out")
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
claude() { HOME=$home PATH=$(dirname "$node"):$PATH "$prefix/node_modules/.bin/claude" "$@" </dev/null; }
echo "claude-plugin: $(claude --version)"
for target in "$here" "$here/.claude-plugin/plugin.json"; do
	if ! claude plugin validate --strict "$target" >"$home/out" 2>&1; then
		cat "$home/out" >&2
		echo "claude-plugin: FAIL: claude plugin validate --strict ${target#"$root"/}" >&2
		exit 1
	fi
	echo "claude-plugin: claude plugin validate --strict ${target#"$root"/}: $(grep -E '✔|Validation' "$home/out" | tail -1 || true)"
done
echo "claude-plugin: PASS"
