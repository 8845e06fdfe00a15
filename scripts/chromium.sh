#!/usr/bin/env bash
# Make sure Debian's Chromium is installed for the memory browser's
# headless-browser test (ui/browser_test.go), and print its path.
#
#   HMO_CHROMIUM  use this browser instead
#
# Exit status 3 means Chromium cannot be installed on this machine (no apt,
# not root and no sudo, or the install failed); the test then skips LOUDLY.
set -euo pipefail

log() { echo "chromium: $*" >&2; }

if [[ -n "${HMO_CHROMIUM:-}" ]]; then
	echo "$HMO_CHROMIUM"
	exit 0
fi
for name in chromium chromium-browser google-chrome; do
	if p=$(command -v "$name"); then
		echo "$p"
		exit 0
	fi
done
if ! command -v apt-get >/dev/null; then
	log "no Chromium and no apt-get to install it"
	exit 3
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then
	if ! sudo -n true 2>/dev/null; then
		log "no Chromium, and installing it needs root (run: sudo apt-get install -y chromium)"
		exit 3
	fi
	sudo="sudo -n"
fi
log "installing Debian's chromium (apt-get update, then apt-get install -y chromium)"
if ! { $sudo apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium >&2; }; then
	log "cannot install chromium"
	exit 3
fi
command -v chromium
