#!/usr/bin/env bash
# Runs the native fuzz targets (built by wasm/fuzz/build.sh) for SECONDS each, seeded from the test
# fixtures (scripts/make-fixtures.sh) and the regression files, each file under a few requests.
# wasm/fuzz/regress/<target>/ holds every input that once failed (each runs first, before any
# mutation). A crash, a sanitizer report, a leak or an input running past 1 s fails the run; the
# input is kept under $TANDEM_CACHE/fuzz/artifacts. The corpus each target grows is kept under
# $TANDEM_CACHE/fuzz/corpus-<target>, so later runs start deeper.
#
#   bash wasm/fuzz/run.sh [SECONDS=60] [image|video|packets|audio|stream|demux|pool ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(image video packets audio stream demux pool)
TANDEM_CACHE=${TANDEM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem}
bin=$(bash "$here/build.sh" | tail -1)
fixtures="$repo/test/fixtures/generated"
[ -d "$fixtures" ] || { echo "[fuzz] no fixtures: run scripts/make-fixtures.sh first" >&2; exit 1; }
artifacts="$TANDEM_CACHE/fuzz/artifacts"
mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The first 8 bytes of an input are the request (see fuzz_job.c); each seed file goes in under
# three of them, so colour, fit, filter, crop and frame selection all start covered.
shopt -s nullglob
seed() { # target file... -- header...
  local target=$1; shift
  local files=()
  while [ "$1" != -- ]; do files+=("$1"); shift; done
  shift
  mkdir -p "$work/seed-$target"
  local file k header
  for file in "${files[@]}"; do
    k=0
    for header in "$@"; do
      { printf "$header"; cat "$file"; } > "$work/seed-$target/$k-$(basename "$file")"
      k=$((k + 1))
    done
  done
}
seed image "$fixtures"/*.{jpg,webp,gif,png} -- '\x60\x40\x01\x01\x00\x00\x00\x00' '\x20\x30\x25\x03\x7f\x00\x00\x00' '\x40\x40\x1a\x06\x00\x05\x07\x30'
seed video "$fixtures"/*.{mp4,webm,mkv} "$repo/test/fixtures/regress"/*.{webm,mkv} -- \
  '\x20\x20\x05\x01\x00\x00\x03\x00' '\x10\x18\x01\x00\x02\x00\x07\x01' '\x30\x10\x29\x02\x05\x00\x02\x02' \
  '\x18\x14\x03\x01\x01\x00\x05\x03'
# The packets target cuts the file into packets (fuzz_job.c's packets_job): byte 4 extradata, 5 the
# packet count, 6 the frames' stride, 7 the codec (h264, hevc, vp8, vp9).
seed packets "$fixtures"/*.{mp4,webm,mkv} -- '\x20\x20\x05\x01\x00\x10\x03\x00' '\x10\x18\x01\x00\x00\x08\x07\x01' \
  '\x30\x10\x29\x02\x00\x20\x02\x02' '\x18\x14\x03\x01\x41\x2f\x05\x03'
# The stream target's 4 more bytes: window size, then knobs (1 size unknown, 2 short reads, 4 fail
# at request N, 8 with a bogus length), N, salt.
seed stream "$fixtures"/*.{mp4,webm,mkv} -- '\x20\x20\x05\x01\x00\x00\x03\x00\x00\x00\x00\x00' \
  '\x10\x18\x01\x00\x02\x00\x07\x01\x03\x03\x00\x07' '\x30\x10\x29\x02\x05\x00\x02\x02\x01\x06\x04\x00'
# The demux target's 8 bytes: start and end (100 ms steps; end 0: none), bytes or index only, limits.
seed demux "$fixtures"/*.{mp4,webm,mkv} "$repo/test/fixtures/regress"/*.{webm,mkv} -- \
  '\x00\x00\x01\x00\x00\x00\x00\x00' '\x05\x0c\x01\x03\x00\x00\x00\x00' '\x0a\x00\x00\x10\x02\x00\x00\x00'
seed audio "$fixtures"/sine440.* -- '\x00\x03\x00\x10\x00\x00\x00\x00' '\x01\x04\xff\x0f\x01\x0a\x00\x00' '\x07\x07\x40\x00\x00\x00\x00\x00'
# The pool target's input is a script (fuzz_pool.c): threads, then submit / wait / stop / yield steps.
mkdir -p "$work/seed-pool"
printf '\x01\x00\x04\x08\x0c\x10\x02\x06' > "$work/seed-pool/submit-and-wait"
printf '\x03\x00\xe0\xe4\xe8\xec\x07\x00' > "$work/seed-pool/stop-while-busy"
printf '\x04\x00\x04\x08\x02\x0c\x10' > "$work/seed-pool/thread-without-state"

# One target: its report goes to $work/TARGET.out, its exit status to $work/TARGET.rc.
fuzz_one() {
  local target=$1
  local corpus="$TANDEM_CACHE/fuzz/corpus-$target"
  mkdir -p "$here/regress/$target" "$corpus"
  local log="$work/$target.log" out="$work/$target.out"
  echo "[fuzz] fuzz-$target for ${seconds} s (corpus $corpus)" >"$out"
  local max_len=1048576
  [ "$target" = pool ] && max_len=256
  set +e
  # ThreadSanitizer (pool) reports libFuzzer's own crash handler as signal-unsafe; the crash itself is reported first.
  TSAN_OPTIONS=report_signal_unsafe=0 \
  "$bin/fuzz-$target" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2560 -max_len=$max_len -print_final_stats=1 \
    -artifact_prefix="$artifacts/$target-" "$corpus" "$work/seed-$target" "$here/regress/$target" >"$log" 2>&1
  local rc=$?
  set -e
  local runs cov
  runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)
  if [ "$rc" = 0 ]; then
    echo "[fuzz] fuzz-$target: ${runs} executions, coverage ${cov} edges, no crash, leak or timeout" >>"$out"
  else
    { grep -E 'ERROR|SUMMARY|runtime error|Test unit written|timeout|leak' "$log" | head -20 || true
      tail -40 "$log"
      echo "[fuzz] fuzz-$target FAILED (exit $rc); inputs under $artifacts"; } >>"$out"
  fi
  echo "$rc" >"$work/$target.rc"
}

# As many targets at once as there are cores (TANDEM_FUZZ_JOBS): a libFuzzer run is one thread,
# but the decode and pool targets start threads of their own, so a target does fewer executions in
# its SECONDS than alone (measured on 2 cores: the same for image, 17-31% fewer for the media
# targets, 65% fewer for the pool's) while the tier takes half the time.
jobs=${TANDEM_FUZZ_JOBS:-$(nproc)}
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait || true
failed=()
for target in "${targets[@]}"; do
  cat "$work/$target.out"
  [ "$(cat "$work/$target.rc" 2>/dev/null || echo 1)" = 0 ] || failed+=("$target")
done
[ ${#failed[@]} -eq 0 ] || { echo "[fuzz] failed: ${failed[*]}"; exit 1; }
