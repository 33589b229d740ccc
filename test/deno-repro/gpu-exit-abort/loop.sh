#!/usr/bin/env bash
# Runs the standalone repro N times (default 200) under `deno test`, with Deno's WebGPU left as it
# is, and again limited to Vulkan; prints how many runs aborted each way. Deno from PATH, or $DENO.
# Expect about 1 abort in 30 runs on a busy 2-core machine with Mesa's lavapipe (see README.md).
set -u
cd "$(dirname "$0")"
deno=${DENO:-$(command -v deno || echo ../../../node_modules/.bin/deno)}
n=${1:-200}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}; chmod 700 "$XDG_RUNTIME_DIR"
for backend in default vulkan; do
  aborted=0
  for i in $(seq 1 "$n"); do
    if [ "$backend" = vulkan ]; then env DENO_WEBGPU_BACKEND=vulkan "$deno" test -A repro.test.js >/tmp/gpu-exit-abort.log 2>&1
    else env -u DENO_WEBGPU_BACKEND "$deno" test -A repro.test.js >/tmp/gpu-exit-abort.log 2>&1; fi
    rc=$?
    if [ $rc != 0 ]; then aborted=$((aborted + 1)); echo "run $i ($backend): exit $rc: $(tail -n 1 /tmp/gpu-exit-abort.log)"; fi
  done
  echo "$backend: $aborted of $n runs aborted"
done
