#!/usr/bin/env bash
# Text loading and the tiny GPT on a machine with a real GPU and many cores, in Deno: what the
# project's 2-core machines with software GPUs cannot show. Writes into OUT:
#   machine.txt      CPU, cores, load, GPU (nvidia-smi where there is one), Deno's adapter
#   gpt-b8.*         tandem train --generated 4000: 300 steps of 8 rows of 64 (the docs' job)
#   gpt-b64.*        the same model at 64 rows a step: is the text loader the bottleneck?
#   bench-text.md    bench/text.ts with --workers W (Node is left out where there is none)
#   vit.md           bench/vit.ts: the ViT kernels and training throughput
#
#   bash bench/real-gpu.sh OUT [W]       (DENO names the deno binary; default `npx deno`;
#                                         TANDEM_PYTHON the Python that has torch; PARTS a
#                                         subset of: gpt-b8 gpt-b64 bench-text vit)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bash bench/real-gpu.sh OUT [workers]}
workers=${2:-8}
deno=${DENO:-npx deno}
mkdir -p "$out"
log() { echo "[real-gpu] $*" >&2; }

{
  echo "date: $(date -u +%FT%TZ)"
  echo "load at start: $(uptime)"
  echo "cores: $(nproc)"
  grep -m1 'model name' /proc/cpuinfo
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "deno: $($deno --version | head -1)"
  $deno eval 'const a = await navigator.gpu?.requestAdapter(); console.log("adapter:", a ? JSON.stringify({ vendor: a.info.vendor, architecture: a.info.architecture, description: a.info.description }) : "none")'
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt" >&2

parts=" ${PARTS:-gpt-b8 gpt-b64 bench-text vit} "
run() { # name seconds command...
  local name=$1 limit=$2 start=$SECONDS
  shift 2
  [[ $parts == *" $name "* ]] || return 0
  log "$name: $*"
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  log "$name: exit $rc after $((SECONDS - start)) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
  tail -n 4 "$out/$name.log" >&2
}

run gpt-b8 100 $deno run -A src/cli/main.ts train --generated 4000 --steps 300 --batch 8 --progress lines --report "$out/gpt-b8.json"
run gpt-b64 100 $deno run -A src/cli/main.ts train --generated 20000 --steps 300 --batch 64 --progress lines --report "$out/gpt-b64.json"
run bench-text 240 $deno run -A bench/text.ts --reps 3 --no-node --workers "$workers" --out "$out/bench-text.md"
run vit 90 $deno run -A bench/vit.ts --reps 3 --out "$out/vit.md"
echo "load at end: $(uptime)" >>"$out/machine.txt"
