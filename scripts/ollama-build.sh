#!/usr/bin/env bash
# Build the Ollama server from its Go module (CPU backend, cgo) for the
# integration test, and print the path of the binary. The binary is cached:
# a second run only prints the path.
#
#   OLLAMA_VERSION  module version to build (default v0.17.4, the one go.mod requires)
#   HMO_OLLAMA_BIN  use this binary instead of building one
#
# Exit status 3 means the toolchain cannot be installed on this machine; the
# caller skips the integration test loudly in that case.
set -euo pipefail

version=${OLLAMA_VERSION:-v0.17.4}
if [[ -n "${HMO_OLLAMA_BIN:-}" ]]; then
	echo "$HMO_OLLAMA_BIN"
	exit 0
fi
cache=${XDG_CACHE_HOME:-$HOME/.cache}/hmo/ollama-$version
bin=$cache/ollama
if [[ -x "$bin" ]]; then
	echo "$bin"
	exit 0
fi
mkdir -p "$cache"

log() { echo "ollama-build: $*" >&2; }

# Debian packages the vendored llama.cpp includes but Ollama's module does not ship.
need=()
[[ -f /usr/include/nlohmann/json.hpp ]] || need+=(nlohmann-json3-dev)
[[ -f /usr/include/stb/stb_image.h ]] || need+=(libstb-dev)
command -v g++ >/dev/null || need+=(g++)
if ((${#need[@]})); then
	if ! command -v apt-get >/dev/null; then
		log "missing ${need[*]} and no apt-get to install them"
		exit 3
	fi
	log "installing ${need[*]}"
	sudo=""
	[[ $(id -u) -eq 0 ]] || sudo=sudo
	if ! { $sudo apt-get install -y -q "${need[@]}" >&2 ||
		{ $sudo apt-get update -q >&2 && $sudo apt-get install -y -q "${need[@]}" >&2; }; }; then
		log "cannot install ${need[*]}"
		exit 3
	fi
fi

# miniaudio is not packaged in Debian. Ollama only reaches it to decode audio
# input for multimodal models; a stand-in that reports every decode as
# unsupported is enough for text models.
inc=$cache/include
mkdir -p "$inc/miniaudio"
cat >"$inc/miniaudio/miniaudio.h" <<'H'
/* Stand-in for miniaudio: audio decoding is unsupported in this build. */
#ifndef HMO_MINIAUDIO_STANDIN_H
#define HMO_MINIAUDIO_STANDIN_H
#include <stddef.h>
typedef int ma_result;
typedef unsigned long long ma_uint64;
typedef enum { ma_format_f32 = 5 } ma_format;
typedef struct { ma_format format; unsigned int channels; unsigned int sampleRate; } ma_decoder_config;
typedef struct { int unused; } ma_decoder;
#define MA_SUCCESS 0
#define MA_NOT_IMPLEMENTED (-29)
static inline ma_decoder_config ma_decoder_config_init(ma_format f, unsigned int c, unsigned int r) {
	ma_decoder_config cfg = {f, c, r};
	return cfg;
}
static inline ma_result ma_decoder_init_memory(const void *p, size_t n, const ma_decoder_config *c, ma_decoder *d) {
	(void)p; (void)n; (void)c; (void)d;
	return MA_NOT_IMPLEMENTED;
}
static inline ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *d, ma_uint64 *n) {
	(void)d; *n = 0;
	return MA_NOT_IMPLEMENTED;
}
static inline ma_result ma_decoder_read_pcm_frames(ma_decoder *d, void *out, ma_uint64 n, ma_uint64 *read) {
	(void)d; (void)out; (void)n; *read = 0;
	return MA_NOT_IMPLEMENTED;
}
static inline ma_result ma_decoder_uninit(ma_decoder *d) { (void)d; return MA_SUCCESS; }
#endif
H

log "building github.com/ollama/ollama@$version with cgo (several minutes on 2 cores)"
gobin=$cache/gobin
mkdir -p "$gobin"
if ! CGO_ENABLED=1 GOBIN="$gobin" GOFLAGS=-trimpath \
	CGO_CPPFLAGS="-I$inc ${CGO_CPPFLAGS:-}" \
	go install "github.com/ollama/ollama@$version" >&2; then
	log "go install github.com/ollama/ollama@$version failed"
	exit 3
fi
mv "$gobin/ollama" "$bin"
echo "$bin"
