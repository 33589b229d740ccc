#!/usr/bin/env bash
# Runs every test tier and says which ran: typecheck, lint (Biome), unit (Node), node-gpu (dawn on
# lavapipe), browser (headless Chromium with WebGPU, cross-origin isolated), consumer (the npm
# tarball installed into throwaway Node, Deno, Vite, webpack, notebook and plain-page projects),
# deno, fuzz (native libFuzzer with ASan/UBSan over the C job API, TSan over the pool queue), e2e (Playwright drives the demo
# page served by Vite on 127.0.0.1; screenshots stay in test-results/), bench (every benchmark,
# bench/*.ts, in its seconds-long smoke mode with every peer: scripts/bench-smoke.sh). A tier that
# cannot start counts as failed; none is skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
out=test-results; rm -rf "$out"; mkdir -p "$out"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}; chmod 700 "$XDG_RUNTIME_DIR"
summary=(); total_pass=0; total_fail=0; failed_tiers=()
# The run's own clock, below CI's 90 minutes: a tier not started by the deadline is reported "not
# run: deadline" and fails the run, and the summary is printed even when CI ends the run (SIGTERM).
deadline=${TANDEM_TEST_DEADLINE_SECONDS:-4800}


# Wall-clock limits per tier, in seconds (about 2x the slowest run seen on a 2-core machine): a
# deadlock fails its tier with status 124 instead of holding CI until its own limit. e2e's is what
# its own tests may take, not its usual minute: 5 tests x vitest's testTimeout of 600 s + the two
# hooks' 120 s + 300 s to start (vite.config.ts), so a slow test fails by its own timeout, with a
# report that names it, and the tier's limit only catches a hang outside any test.
limit() {
  case $1 in
    unit) echo 900 ;; node-gpu) echo 1200 ;; browser) echo 1500 ;; consumer) echo 1200 ;;
    deno) echo 1500 ;; fuzz) echo 900 ;; e2e) echo 3540 ;; bench) echo 420 ;; *) echo 600 ;;
  esac
}

# `timeout` ends a tier past its limit with 124 (SIGTERM sufficed) or 137 (SIGKILL, 30 s later); the
# tier's started time tells that apart from a runner that itself exits so (137: killed for memory).
started=0
start() { started=$SECONDS; }

record() { # tier passed failed rc
  local tier=$1 pass=$2 fail=$3 rc=$4 why=''
  if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then fail=1; fi
  if [ "$pass" = 0 ] && [ "$fail" = 0 ]; then fail=1; fi   # a tier that ran nothing has failed
  if { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && [ $((SECONDS - started)) -ge "$(limit "$tier")" ]; then
    why="  timed out after $(limit "$tier") s"
    echo "[test] tier $tier timed out after $(limit "$tier") s (status $rc): it fails, with what it reported so far"
  elif [ "$rc" = 137 ]; then
    why="  killed (status 137)"
  fi
  total_pass=$((total_pass + pass)); total_fail=$((total_fail + fail))
  summary+=("$(printf '%-10s %4d passed %4d failed %5d s%s' "$tier" "$pass" "$fail" $((SECONDS - started)) "$why")")
  [ "$fail" = 0 ] || failed_tiers+=("$tier")
}

# Whether tier $1 may start: past the deadline it is recorded as not run, and fails the run.
due() {
  if [ "$SECONDS" -lt "$deadline" ]; then return 0; fi
  echo "[test] tier $1 not run: the run's deadline ($deadline s) has passed"
  summary+=("$(printf '%-10s not run: deadline (%d s)' "$1" "$deadline")"); total_fail=$((total_fail + 1)); failed_tiers+=("$1")
  return 1
}

print_summary() {
  if [ -s "$out/failed-tests.txt" ]; then
    # Here, beside the summary, because CI shows only the end of the output.
    echo; echo "=== failed tests (test-results/failed-tests.txt; each tier's full output is above) ==="
    head -n 40 "$out/failed-tests.txt"
  fi
  echo
  echo "=== Tandem test tiers ($SECONDS s in all) ==="
  printf '%s\n' "${summary[@]}"
  echo "$total_pass passed, $total_fail failed"
}
trap 'echo "[test] terminated after $SECONDS s: the tiers so far"; print_summary; exit 143' TERM INT

echo "=== media fixtures (scripts/make-fixtures.sh) ==="
bash scripts/make-fixtures.sh || echo "media fixtures could not be made; the media tests will fail"

if due typecheck; then
echo "=== tier: typecheck (tsc --noEmit, strict) ==="; start
npx tsc -p tsconfig.json --noEmit 2>&1 | tee "$out/typecheck.log"; rc=${PIPESTATUS[0]}
[ $rc = 0 ] || grep -m 8 'error TS' "$out/typecheck.log" | sed 's/^/typecheck: /' >>"$out/failed-tests.txt"
record typecheck $([ $rc = 0 ] && echo "1 0" || echo "0 1") $rc
fi

if due lint; then
echo "=== tier: lint (Biome: lint rules and the formatter's check, biome.json; clang-format for the C, .clang-format) ==="; start
# `npm run lint`: Biome's check at error level (warnings, such as non-null assertions, are listed by
# `npx biome lint`) and clang-format's for the C. `npm run format` fixes both.
npm run --silent lint 2>&1 | tee "$out/lint.log"; rc=${PIPESTATUS[0]}
[ $rc = 0 ] || sed 's/\x1b\[[0-9;]*m//g' "$out/lint.log" | grep -v '^\s*$' | head -n 8 | sed 's/^/lint: /' >>"$out/failed-tests.txt"
record lint $([ $rc = 0 ] && echo "1 0" || echo "0 1") $rc
fi

for tier in unit node-gpu browser consumer; do
  due "$tier" || continue
  echo "=== tier: $tier ==="; start
  timeout --kill-after=30 "$(limit "$tier")" npx vitest run --project "$tier" --reporter=default --reporter=json --outputFile.json="$out/$tier.json"; rc=$?
  read -r pass fail < <(node scripts/tier-count.mjs vitest "$out/$tier.json" "test/$tier")
  record "$tier" "$pass" "$fail" "$rc"
done

if due deno; then
echo "=== tier: deno (deno test) ==="; start
# A crash fails the tier, also after every test reported ok: it is never run again to hide it.
# (The abort at exit once seen here is explained and avoided: docs/reliability.md.)
timeout --kill-after=30 "$(limit deno)" npx deno test -A --no-check test/deno/ 2>&1 | tee "$out/deno.log"; rc=${PIPESTATUS[0]}
line=$(sed 's/\x1b\[[0-9;]*m//g' "$out/deno.log" | grep -E '^(ok|FAILED) \| ' | tail -1)
if [ "$rc" != 0 ] && [[ "$line" == ok* ]]; then
  echo "[test] deno exited with status $rc after reporting all tests passed: the tier fails ($(tail -n 2 "$out/deno.log" | tr '\n' ' '))"
fi
read -r pass fail < <(node scripts/tier-count.mjs deno "$out/deno.log" test/deno)
record deno "${pass:-0}" "${fail:-0}" "$rc"
fi

if due fuzz; then
echo "=== tier: fuzz (native libFuzzer + ASan/UBSan over wasm/src and TSan over the pool queue, 30 s per target: wasm/fuzz/run.sh) ==="; start
timeout --kill-after=30 "$(limit fuzz)" bash wasm/fuzz/run.sh "${TANDEM_FUZZ_SECONDS:-30}" 2>&1 | tee "$out/fuzz.log"; rc=${PIPESTATUS[0]}
read -r pass fail < <(node scripts/tier-count.mjs fuzz "$out/fuzz.log" wasm/fuzz)
record fuzz "${pass:-0}" "${fail:-0}" "$rc"
fi

if due e2e; then
echo "=== tier: e2e (Playwright → demo page on 127.0.0.1) ==="; start
timeout --kill-after=30 "$(limit e2e)" npx vitest run --project e2e --reporter=default --reporter=json --outputFile.json="$out/e2e.json"; rc=$?
read -r pass fail < <(node scripts/tier-count.mjs vitest "$out/e2e.json" test/e2e)
record e2e "$pass" "$fail" "$rc"
fi

if due bench; then
echo "=== tier: bench (every bench/*.ts with --smoke: tiny inputs, 1 repetition, every peer, nothing written into docs/) ==="; start
# One test per benchmark, counted against the files in bench/ (a new benchmark is in at once, and
# fails without a smoke mode); each benchmark's log is test-results/bench-smoke/NAME.log.
timeout --kill-after=30 "$(limit bench)" bash scripts/bench-smoke.sh 2>&1 | tee "$out/bench.log"; rc=${PIPESTATUS[0]}
read -r pass fail < <(node scripts/tier-count.mjs bench "$out/bench.log" bench)
record bench "${pass:-0}" "${fail:-0}" "$rc"
fi

print_summary
if [ ${#failed_tiers[@]} -gt 0 ]; then echo "failed tiers: ${failed_tiers[*]}"; exit 1; fi
