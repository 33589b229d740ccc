#!/usr/bin/env bash
# Makes the compressed audio and video fixtures of the media tests with Debian's ffmpeg CLI, and
# image fixtures in formats our own encoders do not write with Debian's PIL, into
# test/fixtures/generated/ (git-ignored). Skips files already there while the key below holds;
# says what it made.
set -euo pipefail
cd "$(dirname "$0")/.."
out=test/fixtures/generated
mkdir -p "$out"
command -v ffmpeg >/dev/null || { echo "[fixtures] ffmpeg missing: run scripts/apt-setup.sh" >&2; exit 1; }
# The fixtures are keyed by what makes them: this script, the generators it runs and ffmpeg's
# version. A changed generator remakes them all (about a minute), never leaves old files behind.
key=$( { cat "$0" scripts/make-*.py; ffmpeg -version | head -1; } | sha256sum | cut -c1-16)
if [ "$(cat "$out/.key" 2>/dev/null)" != "$key" ]; then
  [ -z "$(ls -A "$out")" ] || echo "[fixtures] generators changed (key $key): remaking $out"
  find "$out" -mindepth 1 -delete
fi
make() { # name, ffmpeg arguments...
  local name=$1; shift
  [ -s "$out/$name" ] && return 0
  ffmpeg -nostdin -hide_banner -loglevel error -y "$@" "$out/$name.tmp.${name##*.}" && mv "$out/$name.tmp.${name##*.}" "$out/$name"
  echo "[fixtures] made $out/$name"
}
# Audio: a 440 Hz sine at 0.5 amplitude (the source is 1/8, hence volume=4), 2 s, 44.1 kHz stereo (both channels equal).
sine=(-f lavfi -i "sine=frequency=440:sample_rate=44100:duration=2" -af "volume=4,pan=stereo|c0=c0|c1=c0")
make sine440.mp3 "${sine[@]}" -c:a libmp3lame -b:a 128k
make sine440.m4a "${sine[@]}" -c:a aac -b:a 128k
make sine440.flac "${sine[@]}" -c:a flac
make sine440.opus.ogg "${sine[@]}" -c:a libopus -b:a 96k
# Video: testsrc2 (moving pattern) 160x120 at 10 fps for 2 s (20 frames), keyframe every 5 frames.
make testsrc.h264.mp4 -f lavfi -i testsrc2=size=160x120:rate=10 -t 2 -c:v libx264 -pix_fmt yuv420p -g 5 -bf 0
make testsrc.vp9.webm -f lavfi -i testsrc2=size=160x120:rate=10 -t 2 -c:v libvpx-vp9 -pix_fmt yuv420p -g 5 -b:v 200k
make testsrc.h264.mkv -f lavfi -i testsrc2=size=160x120:rate=10 -t 2 -c:v libx264 -pix_fmt yuv420p -g 5
# Solid colours, one second each: red, green, blue (exact colour checks by time).
make rgb.h264.mp4 -f lavfi -i "color=c=red:size=64x48:rate=10:duration=1" -f lavfi -i "color=c=lime:size=64x48:rate=10:duration=1" \
  -f lavfi -i "color=c=blue:size=64x48:rate=10:duration=1" -filter_complex "[0][1][2]concat=n=3:v=1:a=0" -c:v libx264 -pix_fmt yuv420p -g 10 -crf 10
make rgb.vp9.webm -f lavfi -i "color=c=red:size=64x48:rate=10:duration=1" -f lavfi -i "color=c=lime:size=64x48:rate=10:duration=1" \
  -f lavfi -i "color=c=blue:size=64x48:rate=10:duration=1" -filter_complex "[0][1][2]concat=n=3:v=1:a=0" -c:v libvpx-vp9 -pix_fmt yuv420p -g 10 -crf 10 -b:v 0
# One solid colour at an odd width (63x48; VP9 allows it, H.264's 4:2:0 does not), 4:2:0 and 4:2:2,
# lossless: every pixel of every decode, at its own size or resized, is that one colour (the last
# column, which swscale's table converter leaves unwritten, included).
make odd.vp9.webm -f lavfi -i "color=c=0x3366cc:size=64x48:rate=10:duration=1" -vf "scale=63:48,format=yuv420p" -c:v libvpx-vp9 -lossless 1 -g 10
make odd422.vp9.webm -f lavfi -i "color=c=0x3366cc:size=64x48:rate=10:duration=1" -vf "scale=63:48,format=yuv422p" -c:v libvpx-vp9 -lossless 1 -g 10
# References decoded by Debian's ffmpeg CLI, for the media decodes to be compared with: every frame
# of the H.264 and VP9 clips as RGB at their own size, and the compressed sines as interleaved f32
# stereo at their own rate (no resampling or mixing on either side).
ref() { # name, input, output arguments...
  local name=$1 input=$2; shift 2
  [ -s "$out/$name" ] && return 0
  ffmpeg -nostdin -hide_banner -loglevel error -y -i "$out/$input" "$@" "$out/$name.tmp" && mv "$out/$name.tmp" "$out/$name"
  echo "[fixtures] made $out/$name (ffmpeg CLI reference)"
}
ref testsrc.h264.mp4.rgb testsrc.h264.mp4 -f rawvideo -pix_fmt rgb24
ref testsrc.vp9.webm.rgb testsrc.vp9.webm -f rawvideo -pix_fmt rgb24
ref sine440.mp3.f32 sine440.mp3 -f f32le -c:a pcm_f32le
ref sine440.flac.f32 sine440.flac -f f32le -c:a pcm_f32le
ref sine440.m4a.f32 sine440.m4a -f f32le -c:a pcm_f32le
# testsrc2 converted to YUV with the BT.709 matrix (limited range) and tagged so: decoders must
# read the tags (an untagged BT.601 decode is off by about 6 levels), with the CLI's reference.
make testsrc.bt709.h264.mp4 -f lavfi -i testsrc2=size=160x120:rate=10 -t 2 -vf "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p" \
  -c:v libx264 -pix_fmt yuv420p -colorspace bt709 -color_primaries bt709 -color_trc bt709 -color_range tv -g 5 -bf 0
ref testsrc.bt709.h264.mp4.rgb testsrc.bt709.h264.mp4 -f rawvideo -pix_fmt rgb24
# HEVC (x265 with its B-frames, a keyframe every 5 frames) in MP4, with the CLI's reference and
# ffprobe's frame times (sorted, a JSON array) for the decoders to be held to.
make testsrc.hevc.mp4 -f lavfi -i testsrc2=size=160x120:rate=10 -t 2 -c:v libx265 -pix_fmt yuv420p \
  -x265-params log-level=error:keyint=5:min-keyint=5
ref testsrc.hevc.mp4.rgb testsrc.hevc.mp4 -f rawvideo -pix_fmt rgb24
probe_pts() { # name: ffprobe's pts of every frame of $out/name, sorted, into name.pts.json
  [ -s "$out/$1.pts.json" ] && return 0
  ffprobe -v error -select_streams v -show_entries frame=pts_time -of json "$out/$1" |
    /usr/bin/python3 -c 'import json, sys; print(json.dumps(sorted(float(f["pts_time"]) for f in json.load(sys.stdin)["frames"])))' \
      > "$out/$1.pts.json.tmp" && mv "$out/$1.pts.json.tmp" "$out/$1.pts.json"
  echo "[fixtures] made $out/$1.pts.json (ffprobe's frame times)"
}
probe_pts testsrc.hevc.mp4
# AV1 (libaom, a keyframe every 5 frames) in MP4 and in WebM, with the CLI's references and ffprobe's times.
for container in mp4 webm; do
  make testsrc.av1.$container -f lavfi -i testsrc2=size=160x120:rate=10 -t 2 -c:v libaom-av1 -cpu-used 8 -pix_fmt yuv420p \
    -g 5 -b:v 200k
  ref testsrc.av1.$container.rgb testsrc.av1.$container -f rawvideo -pix_fmt rgb24
  probe_pts testsrc.av1.$container
done
# Images: progressive and CMYK JPEG, lossy/lossless/alpha WebP, animated GIF, with references.
/usr/bin/python3 -c 'import PIL' 2>/dev/null || { echo "[fixtures] python3-pil missing: run scripts/apt-setup.sh" >&2; exit 1; }
/usr/bin/python3 scripts/make-image-fixtures.py "$out"
# timm-layout ViT weights with PyTorch's logits for them (the weight-loading tests); 5 s.
if [ ! -s "$out/timm-vit-tiny.logits.f64" ]; then
  /usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "[fixtures] python3-torch missing: run scripts/apt-setup.sh" >&2; exit 1; }
  /usr/bin/python3 scripts/make-timm-reference.py "$out" && echo "[fixtures] made $out/timm-vit-tiny.* (PyTorch reference)"
fi
# torchvision's RandomResizedCrop: its draws' statistics, and resized crops of photo-landscape.jpg.
if [ ! -s "$out/photo-landscape.jpg.rrc.json" ] || [ ! -s "$out/crop-stats.torchvision.json" ]; then
  /usr/bin/python3 -c 'import torchvision' 2>/dev/null || { echo "[fixtures] python3-torchvision missing: run scripts/apt-setup.sh" >&2; exit 1; }
  /usr/bin/python3 scripts/make-crop-reference.py "$out"
fi
# Long videos for streamed decoding: 60 s of testsrc2 at 10 fps, keyframe every 5 s; the MP4 keeps
# its index (moov) at the end, so streaming must seek there first.
make long.h264.mp4 -f lavfi -i testsrc2=size=320x240:rate=10 -t 60 -c:v libx264 -pix_fmt yuv420p -g 50 -bf 0 -crf 28
make long.vp9.webm -f lavfi -i testsrc2=size=320x240:rate=10 -t 60 -c:v libvpx-vp9 -pix_fmt yuv420p -g 50 -b:v 150k -deadline realtime -cpu-used 8
# ffprobe's packets of the videos, for the demux tests.
bash scripts/make-demux-reference.sh
# Moving-shapes videos (src/synthetic/moving.ts; the class is the direction of motion): 96 for
# training and a held-out 48 of another seed, H.264 64x64, 16 frames at 8 fps, as <class>/<index>.mp4.
# Keyed by their own generators too (the key above reads only this script and the .py ones).
vkey=$(cat scripts/make-video-dataset.ts src/synthetic/moving.ts src/synthetic/shapes.ts src/random/index.ts | sha256sum | cut -c1-16)
if [ "$(cat "$out/moving-shapes/.key" 2>/dev/null)" != "$vkey" ]; then rm -rf "$out/moving-shapes" "$out/moving-shapes-test"; fi
npx deno run -A scripts/make-video-dataset.ts "$out/moving-shapes" --count 96 --seed 1 --codec h264 --fps 8
npx deno run -A scripts/make-video-dataset.ts "$out/moving-shapes-test" --count 48 --seed 2 --codec h264 --fps 8
echo "$vkey" > "$out/moving-shapes/.key"
# A variable-frame-rate H.264 MP4: 40 frames whose gaps alternate 20/60 ms, then 20 frames 100 ms
# apart (pts 0 ... 3.5 s, ms timescale), and ffprobe's pts of every frame, sorted, as a JSON array.
make vfr.h264.mp4 -f lavfi -i testsrc2=size=160x120:rate=50 -frames:v 60 \
  -vf "setpts='if(lt(N,40),floor(N/2)*0.08+mod(N,2)*0.02,1.6+(N-40)*0.1)/TB'" -fps_mode passthrough \
  -c:v libx264 -pix_fmt yuv420p -g 10 -bf 0 -video_track_timescale 1000
probe_pts vfr.h264.mp4
echo "$key" > "$out/.key"
