#!/usr/bin/env bash
# Builds Tandem's decode module (wasm/dist/tandem-decode.mjs + .wasm) from pinned sources.
# Cached by a hash of every input: a second run copies the cached output and says so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/toolchain.sh"
start=$(date +%s)

# Everything that decides ffmpeg's libraries, and then everything that decides the module.
FFMPEG_CONFIG=(
  --target-os=none --arch=x86_32 --enable-cross-compile --disable-asm --disable-x86asm --disable-inline-asm
  --cc=emcc --cxx=em++ --ar=emar --ranlib=emranlib --nm=emnm --pkg-config=false
  --disable-everything --disable-programs --disable-doc --disable-debug --disable-network --disable-autodetect
  --disable-avdevice --disable-avfilter --disable-postproc --enable-swscale --enable-swresample
  --enable-pthreads --enable-zlib
  --enable-decoder=mjpeg,png,webp,bmp,gif,h264,vp8,vp9,mp3,mp3float,aac,pcm_s16le,pcm_s24le,pcm_f32le,pcm_u8,flac,opus,vorbis
  --enable-demuxer=mov,matroska,mp3,aac,wav,flac,ogg
  --enable-parser=h264,vp8,vp9,mjpeg,aac,mpegaudio,flac,opus,vorbis
  --enable-bsf=h264_mp4toannexb,vp9_superframe_split
)
CFLAGS_COMMON="-O3 -msimd128 -pthread"
MODULE_FLAGS=(
  -O3 -msimd128 -pthread
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createTandemDecode -sENVIRONMENT=web,worker,node
  -sPTHREAD_POOL_SIZE=Module.tandemThreads -sPTHREAD_POOL_SIZE_STRICT=0 -sDEFAULT_PTHREAD_STACK_SIZE=1MB
  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=64MB -sMAXIMUM_MEMORY=2GB -sSTACK_SIZE=1MB
  -sEXPORTED_FUNCTIONS=_malloc,_free,_td_job_words,_td_job_size,_td_pool_start,_td_pool_stop,_td_pool_alive,_td_submit,_td_decode_now -sEXPORTED_RUNTIME_METHODS=wasmMemory,HEAPU8
  -sEXIT_RUNTIME=0 -sINCOMING_MODULE_JS_API=tandemThreads,print,printErr,locateFile
)

ffmpeg_key=$(printf '%s\n' "$FFMPEG_VERSION" "$FFMPEG_SHA256" "$ZLIB_SHA256" "$EMSCRIPTEN_VERSION" "$CFLAGS_COMMON" "${FFMPEG_CONFIG[@]}" | sha256sum | cut -c1-16)
module_key=$( { printf '%s\n' "$ffmpeg_key" "${MODULE_FLAGS[@]}"; cat "$here/build.sh" "$here/toolchain.sh" "$here"/src/*; } | sha256sum | cut -c1-16)
out="$here/dist"
cached="$TANDEM_CACHE/wasm/$module_key"

if [ -f "$out/.build-key" ] && [ "$(cat "$out/.build-key")" = "$module_key" ]; then
  wlog "module up to date (key $module_key): skipped build"; exit 0
fi
if [ -f "$cached/tandem-decode.wasm" ]; then
  mkdir -p "$out"; cp -f "$cached"/* "$out/"; echo "$module_key" > "$out/.build-key"
  wlog "module restored from cache $cached: skipped build"; exit 0
fi

ensure_trixie_root
ensure_sources
build_root="$TRIXIE_ROOT/build"          # seen as /build inside the chroot
mkdir -p "$build_root"
if [ -n "$TRIXIE_ROOT" ]; then
  in_chroot() { with_chroot_mounts chroot "$TRIXIE_ROOT" /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin /bin/bash -ec "$1"; }
else
  in_chroot() { /bin/bash -ec "$1"; }
fi

prefix="/build/ffmpeg-$ffmpeg_key/prefix"
if [ -f "$TRIXIE_ROOT$prefix/.done" ]; then
  wlog "ffmpeg $FFMPEG_VERSION libraries present (key $ffmpeg_key): skipped"
else
  t0=$(date +%s)
  wlog "unpacking ffmpeg and zlib sources"
  work="$build_root/ffmpeg-$ffmpeg_key"; rm -rf "$build_root"/ffmpeg-*; mkdir -p "$work"
  tar -xf "$TANDEM_CACHE/sources/$FFMPEG_ORIG" -C "$work"; mv "$work"/ffmpeg-* "$work/ffmpeg"
  tar -xf "$TANDEM_CACHE/sources/$ZLIB_ORIG" -C "$work"; mv "$work"/zlib-* "$work/zlib"
  wlog "building zlib with emcc"
  in_chroot "cd /build/ffmpeg-$ffmpeg_key/zlib && CFLAGS='$CFLAGS_COMMON' emconfigure ./configure --static --prefix=$prefix >/dev/null && emmake make -j$(nproc) install >/dev/null 2>&1"
  wlog "configuring ffmpeg (about 90 s)"
  in_chroot "cd /build/ffmpeg-$ffmpeg_key/ffmpeg && ./configure --prefix=$prefix --extra-cflags='$CFLAGS_COMMON -I$prefix/include' --extra-ldflags='-pthread -L$prefix/lib' ${FFMPEG_CONFIG[*]} > configure.out 2>&1 || { tail -30 configure.out ffbuild/config.log; exit 1; }"
  wlog "building ffmpeg (about 60 s on 2 cores)"
  in_chroot "cd /build/ffmpeg-$ffmpeg_key/ffmpeg && make -j$(nproc) >make.out 2>&1 || { tail -40 make.out; exit 1; }; make install >/dev/null && touch $prefix/.done"
  wlog "ffmpeg built in $(( $(date +%s) - t0 )) s"
fi

wlog "linking the decode module"
mkdir -p "$build_root/module" && rm -rf "$build_root/module"/* && cp "$here"/src/*.c "$here"/src/*.h "$here"/src/post.js "$build_root/module/"
in_chroot "cd /build/module && emcc ${MODULE_FLAGS[*]} -I$prefix/include *.c -L$prefix/lib -lavformat -lavcodec -lswscale -lswresample -lavutil -lz --post-js post.js -o tandem-decode.mjs"
mkdir -p "$cached" "$out"
cp "$build_root/module/tandem-decode.mjs" "$build_root/module/tandem-decode.wasm" "$here/src/tandem-decode.d.mts" "$cached/"
cp -f "$cached"/* "$out/"; echo "$module_key" > "$out/.build-key"
wlog "built in $(( $(date +%s) - start )) s: $(du -b "$out/tandem-decode.wasm" | cut -f1) bytes wasm, $(du -b "$out/tandem-decode.mjs" | cut -f1) bytes js (key $module_key)"
