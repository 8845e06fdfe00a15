#!/usr/bin/env bash
# Install an npm package (a real client such as openclaw or
# @anthropic-ai/claude-code) into a cache for the integration tests, with a
# node new enough for it, and print two lines: the node binary and the
# package's install prefix. Only the npm registry is used: a node older than
# the package needs comes from npm's node-<os>-<arch> package. Cached: a
# second run installs nothing.
#
#   scripts/npm-tool.sh PACKAGE VERSION MIN_NODE_VERSION
#   HMO_NPM_CACHE  where installs go (default ${XDG_CACHE_HOME:-$HOME/.cache}/hmo/npm)
#   NODE_VERSION   the node fetched when the machine's is too old (default 24.21.0)
#
# Exit status 3 means the package cannot be installed on this machine; the
# caller skips its test loudly in that case.
set -euo pipefail

pkg=$1 version=$2 min_node=$3
cache=${HMO_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hmo/npm}
node_version=${NODE_VERSION:-24.21.0}
log() { echo "npm-tool: $*" >&2; }
cant() {
	log "$*"
	exit 3
}

command -v npm >/dev/null || cant "no npm on PATH"
npm_cli=$(dirname "$(readlink -f "$(command -v npm)")")/npm-cli.js
[[ -f $npm_cli ]] || cant "cannot find npm-cli.js beside $(command -v npm)"

# version_ge A B: A >= B for dotted versions.
version_ge() { [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1) == "$2" ]]; }

node=$(command -v node || true)
if [[ -z $node ]] || ! version_ge "$("$node" -p process.versions.node)" "$min_node"; then
	case "$(uname -s)-$(uname -m)" in
	Linux-x86_64) plat=linux-x64 ;;
	Linux-aarch64) plat=linux-arm64 ;;
	Darwin-arm64) plat=darwin-arm64 ;;
	Darwin-x86_64) plat=darwin-x64 ;;
	*) cant "no node $min_node package for $(uname -s)-$(uname -m)" ;;
	esac
	dir=$cache/node-$node_version
	node=$dir/node_modules/node-$plat/bin/node
	if [[ ! -x $node ]]; then
		log "installing node $node_version (node-$plat from npm) into $dir"
		mkdir -p "$dir"
		npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error "node-$plat@$node_version" >&2 ||
			cant "cannot install node-$plat@$node_version from npm"
	fi
	version_ge "$("$node" -p process.versions.node)" "$min_node" || cant "node $node_version is older than $min_node"
fi

prefix=$cache/${pkg//\//+}-$version
if [[ ! -f $prefix/.installed ]]; then
	log "installing $pkg@$version into $prefix (once; cached)"
	rm -rf "$prefix"
	mkdir -p "$prefix"
	PATH=$(dirname "$node"):$PATH "$node" "$npm_cli" install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$pkg@$version" >&2 ||
		cant "cannot install $pkg@$version from npm"
	touch "$prefix/.installed"
fi
echo "$node"
echo "$prefix"
