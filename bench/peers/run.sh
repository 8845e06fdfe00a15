#!/usr/bin/env bash
# make bench-peers: install the Node peers (package.json + lock, with node
# >= 24 from npm when the machine's is older; cached), then run the
# harness. Without npm the Go engines still run and the Node ones are
# skipped loudly.
#
#   PEERS_N       records (default 100000)
#   PEERS_ROUNDS  interleaved query rounds (default 2)
#   PEERS_DIR     work directory, kept (default .cache/peers)
#   PEERS_IMPORT  records imported through the hmo CLI (default PEERS_N; 0 skips)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${HMO_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hmo/npm}
export HMO_PEERS_N=${PEERS_N:-100000} HMO_PEERS_ROUNDS=${PEERS_ROUNDS:-2}
export HMO_PEERS_IMPORT=${PEERS_IMPORT:-$HMO_PEERS_N}
export HMO_PEERS_DIR=${PEERS_DIR:-$root/.cache/peers}
mkdir -p "$HMO_PEERS_DIR"

if out=$(bash "$root/scripts/npm-tool.sh" sqlite-vec 0.1.9 24); then
	node=$(sed -n 1p <<<"$out")
	prefix=$cache/hmo-peers-$(sha256sum "$here/package-lock.json" | cut -c1-12)
	if [[ ! -f $prefix/.installed ]]; then
		echo "bench-peers: installing bench/peers/package-lock.json into $prefix (once; cached)" >&2
		rm -rf "$prefix" && mkdir -p "$prefix"
		cp "$here/package.json" "$here/package-lock.json" "$prefix/"
		npm_cli=$(dirname "$(readlink -f "$(command -v npm)")")/npm-cli.js
		if (cd "$prefix" && PATH=$(dirname "$node"):$PATH "$node" "$npm_cli" install --no-audit --no-fund --loglevel=error >&2); then
			touch "$prefix/.installed"
		fi
	fi
	if [[ -f $prefix/.installed ]]; then
		export HMO_PEERS_NODE=$node HMO_PEERS_NODE_MODULES=$prefix
	else
		echo "bench-peers: SKIPPED LOUDLY: npm ci of bench/peers failed: LanceDB and SQLite are NOT measured" >&2
	fi
else
	echo "bench-peers: SKIPPED LOUDLY: no node >= 24 from npm: LanceDB and SQLite are NOT measured" >&2
fi

cd "$root"
make -s build
CGO_ENABLED=0 go test -count=1 -timeout 3h -run '^TestPeers$' -v ./bench/peers/ 2>&1 | tee "$HMO_PEERS_DIR/run.log"
if [[ -f $HMO_PEERS_DIR/peers-plot.json ]]; then
	go run ./tools/plot <"$HMO_PEERS_DIR/peers-plot.json" >"$HMO_PEERS_DIR/peers.svg"
	echo "bench-peers: table $HMO_PEERS_DIR/peers.md, results $HMO_PEERS_DIR/peers.json, chart $HMO_PEERS_DIR/peers.svg"
fi
