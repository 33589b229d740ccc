#!/usr/bin/env bash
# ffprobe's view of the video fixtures' packets, for the demux tests (test/shared/demux-scenarios.ts):
# <video>.packets.json beside each video in test/fixtures/generated/, with every packet's pts, dts,
# duration (in the stream's time base), size, flags and CRC-32, and the stream's start and time
# base. Run by scripts/make-fixtures.sh; skips sidecars already there.
set -euo pipefail
cd "$(dirname "$0")/.."
out=test/fixtures/generated
for name in testsrc.h264.mp4 testsrc.vp9.webm testsrc.h264.mkv long.h264.mp4 long.vp9.webm; do
  [ -s "$out/$name" ] || continue
  [ -s "$out/$name.packets.json" ] && continue
  ffprobe -v error -select_streams v:0 -show_data_hash CRC32 -show_packets \
    -show_entries packet=pts,dts,duration,flags,size,data_hash:stream=start_pts,time_base,has_b_frames,extradata_hash \
    -of json "$out/$name" > "$out/$name.packets.json.tmp"
  mv "$out/$name.packets.json.tmp" "$out/$name.packets.json"
  echo "[fixtures] made $out/$name.packets.json (ffprobe reference)"
done
