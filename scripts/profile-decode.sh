#!/usr/bin/env bash
# Where a JPEG's decode time goes, per part (docs/bench/decode-profile.md): links the pthreads module
# once more with --profiling-funcs (names kept; the same sources and flags as wasm/build.sh),
# builds the library around it in a temporary clone, decodes a corpus on one pool thread under
# `node --cpu-prof` and sums the pool thread's samples per part.
#   bash scripts/profile-decode.sh CORPUS_DIR [images 600] [passes 3] [cover|rrc]
# PROFILE_WASM_DIR=DIR reuses a module linked that way before (TANDEM_WASM_DEV_OUT=DIR).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:?corpus folder}; images=${2:-600}; passes=${3:-3}; transform=${4:-cover}
work=$(mktemp -d /tmp/tandem-profile.XXXXXX)
if [ -n "${PROFILE_WASM_DIR:-}" ]; then
  echo "[profile] using the module linked with --profiling-funcs in $PROFILE_WASM_DIR"
  mkdir -p "$work/wasm" && cp "$PROFILE_WASM_DIR"/tandem-decode.mjs "$PROFILE_WASM_DIR"/tandem-decode.wasm "$work/wasm/"
else
  echo "[profile] linking the module with --profiling-funcs into $work/wasm"
  TANDEM_WASM_DEV_OUT="$work/wasm" TANDEM_WASM_DEV_FLAGS=--profiling-funcs bash "$repo/wasm/build.sh" >"$work/build.log" 2>&1 \
    || { tail -20 "$work/build.log"; exit 1; }
fi
echo "[profile] building the library around it in $work/clone"
git clone -q "$repo" "$work/clone"
ln -s "$repo/node_modules" "$work/clone/node_modules"
mkdir -p "$work/clone/wasm/dist"
cp "$repo"/wasm/dist/* "$work/clone/wasm/dist/"
cp "$work"/wasm/tandem-decode.mjs "$work"/wasm/tandem-decode.wasm "$work/clone/wasm/dist/"
(cd "$work/clone" && bash scripts/build.sh)  # tsc plus the .js and .wgsl files src/ holds
echo "[profile] $images images x $passes passes ($transform), one pool thread, under node --cpu-prof"
node --cpu-prof --cpu-prof-dir="$work/prof" "$repo/scripts/profile-decode-run.mjs" "$work/clone/dist" "$corpus" "$images" "$passes" "$transform"
node "$repo/scripts/profile-summary.mjs" "$work/prof"
echo "[profile] profiles kept in $work/prof"
