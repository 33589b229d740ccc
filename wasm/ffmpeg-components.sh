# The parts of ffmpeg Tandem uses, for the wasm modules (wasm/build.sh) and the native fuzz build
# (wasm/fuzz/build.sh), which must decode with the same components.
FFMPEG_CONFIG_TAIL=(
  --enable-zlib --enable-libdav1d
  --enable-decoder=mjpeg,png,webp,bmp,gif,h264,hevc,vp8,vp9,libdav1d,mp3,mp3float,aac,pcm_s16le,pcm_s24le,pcm_f32le,pcm_u8,flac,opus,vorbis
  --enable-demuxer=mov,matroska,mp3,aac,wav,flac,ogg
  --enable-parser=h264,hevc,vp8,vp9,av1,mjpeg,aac,mpegaudio,flac,opus,vorbis
  --enable-bsf=h264_mp4toannexb,vp9_superframe_split
)

# Tandem's patches to ffmpeg (wasm/ffmpeg/), applied to the unpacked sources of both builds; their
# text is part of both cache keys.
FFMPEG_PATCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/ffmpeg"
FFMPEG_PATCHES=(metadata-bounds.patch container-table-bounds.patch decoder-bounds.patch size-refused-hook.patch)
ffmpeg_patches_text() { local p; for p in "${FFMPEG_PATCHES[@]}"; do cat "$FFMPEG_PATCH_DIR/$p"; done; }
apply_ffmpeg_patches() { # unpacked ffmpeg tree; prints each patch to stderr
  command -v patch >/dev/null || { echo "patch missing (apt-get install patch)" >&2; return 1; }
  local p; for p in "${FFMPEG_PATCHES[@]}"; do
    echo "applying wasm/ffmpeg/$p" >&2
    patch -d "$1" -p1 --quiet --forward < "$FFMPEG_PATCH_DIR/$p" || { echo "wasm/ffmpeg/$p does not apply" >&2; return 1; }
  done
}

# dav1d, ffmpeg's AV1 decoder (libdav1d), for both builds: C only (its assembly is x86 and Arm, and
# the fuzz build runs the C the module runs), 8-bit. Each build adds its own build type and flags.
DAV1D_OPTIONS=(--default-library=static -Denable_asm=false -Denable_tools=false -Denable_examples=false
  -Denable_tests=false -Denable_docs=false -Dbitdepths=8 -Dlogging=false)
