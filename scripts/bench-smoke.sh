#!/usr/bin/env bash
# The `bench` tier of npm test (scripts/test.sh), which also runs alone: every benchmark, bench/*.ts,
# once in its smoke mode (`--smoke`, bench/shared/args.ts: tiny generated inputs, 1 repetition,
# every peer it compares with, the report under test-results/bench-smoke/ instead of docs/), so
# none can rot unseen. One test per benchmark: it passes when it exits 0 within its limit, printed
# its result line ("[bench:smoke] NAME ok: …") and wrote nothing into docs/. A benchmark that does
# not parse its options with bench/shared/args.ts has no smoke mode and fails without running.
# The peers' prerequisites (Python 3 with torch, torchvision and PIL, tjbench, gcc with the libav
# and turbojpeg headers, Chromium) come from scripts/setup.sh; a missing one fails its benchmark
# and its log says which.
#   bash scripts/bench-smoke.sh [bench/NAME.ts ...]     (default: bench/*.ts)
# Output per benchmark: "[bench-smoke] PASS bench/NAME.ts (S s)" or "[bench-smoke] FAIL bench/NAME.ts: why";
# scripts/tier-count.mjs checks those lines against bench/*.ts. Logs: test-results/bench-smoke/NAME.log.
set -uo pipefail
cd "$(dirname "$0")/.."
out=test-results/bench-smoke
mkdir -p "$out"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}; chmod 700 "$XDG_RUNTIME_DIR"
deno=node_modules/.bin/deno # the binary `npx deno` runs, without npx's start-up per benchmark
[ -x "$deno" ] || { echo "[bench-smoke] $deno not found: run bash scripts/setup.sh"; exit 1; }
per_bench=${TANDEM_BENCH_SMOKE_SECONDS:-120} # one benchmark's wall-clock limit (the slowest takes ~30 s)

if [ $# -gt 0 ]; then benches=("$@"); else benches=(bench/*.ts); fi
stamp=$(mktemp); trap 'rm -f "$stamp"' EXIT
t00=$(date +%s.%N)
pass=0; fail=0
for b in "${benches[@]}"; do
  name=$(basename "$b" .ts); log=$out/$name.log
  if ! grep -q "benchArgs(" "$b"; then
    echo "[bench-smoke] FAIL $b: no smoke mode (its options are not parsed by benchArgs of bench/shared/args.ts)"
    fail=$((fail + 1)); continue
  fi
  echo "[bench-smoke] $b --smoke"
  touch "$stamp"
  t0=$(date +%s.%N)
  timeout --kill-after=10 "$per_bench" "$deno" run -A "$b" --smoke >"$log" 2>&1; rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  wrote=$(find docs -newer "$stamp" -type f | xargs echo)
  why=''
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then why="over its limit of $per_bench s"
  elif [ "$rc" != 0 ]; then why="exit status $rc"
  elif ! grep -q "^\[bench:smoke\] $name ok: " "$log"; then why="exit status 0 but no result line ([bench:smoke] $name ok: …)"
  elif [ -n "$wrote" ]; then why="wrote into docs/: $wrote"
  fi
  if [ -z "$why" ]; then
    echo "[bench-smoke] PASS $b ($secs s): $(grep "^\[bench:smoke\] $name ok: " "$log" | tail -n 1 | cut -d' ' -f4-)"
    pass=$((pass + 1))
  else
    echo "[bench-smoke] FAIL $b ($secs s): $why; the end of $log:"
    tail -n 15 "$log" | sed 's/\x1b\[[0-9;]*m//g; s/^/    /'
    fail=$((fail + 1))
  fi
done
total=$(awk -v a="$t00" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
echo "[bench-smoke] $pass passed, $fail failed of ${#benches[@]} benchmarks in $total s"
[ "$fail" = 0 ]
