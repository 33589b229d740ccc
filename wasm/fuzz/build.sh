#!/usr/bin/env bash
# Builds the native libFuzzer targets of Tandem's C job API (wasm/fuzz/fuzz_job.c over wasm/src):
# fuzz-image, fuzz-video, fuzz-audio, fuzz-stream, fuzz-demux and fuzz-pool, into $TANDEM_CACHE/fuzz/<key>/bin, with Debian bookworm's
# clang 14. ffmpeg, zlib, libjpeg-turbo and dav1d come from the same pinned sources as the wasm modules,
# with the same ffmpeg components and, as in wasm, no assembly or SIMD, so the fuzzers run the C
# paths the browser runs. Sanitizers:
#   - Tandem's C (wasm/src, the harness): AddressSanitizer + UndefinedBehaviorSanitizer (any UB
#     report is a crash);
#   - ffmpeg and libjpeg-turbo: AddressSanitizer only (their own UB findings belong upstream, where
#     OSS-Fuzz runs them; a memory error is a crash here whoever makes it).
# Idempotent: prints each step and skips what is built. Prints the bin folder on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../toolchain.sh"
source "$here/../ffmpeg-components.sh"
flog() { printf '[fuzz] %s\n' "$*" >&2; }

CLANG_PACKAGES=(clang-14 libfuzzer-14-dev libclang-rt-14-dev meson ninja-build pkg-config)
missing=()
for p in "${CLANG_PACKAGES[@]}"; do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  flog "installing ${missing[*]} (Debian bookworm) for the native fuzz targets"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
else
  flog "clang 14, libFuzzer, the sanitizer runtimes and meson present"
fi
CC=clang-14
# The libraries get edge coverage only. Comparison tracing (-fsanitize=fuzzer-no-link's trace-cmp)
# in ffmpeg's decoders took 43% of a fuzz-video run's time under perf; without it the video and
# stream targets run about twice as many inputs a second. Tandem's own C keeps full tracing.
LIB_SAN="-fsanitize=address -fsanitize-coverage=inline-8bit-counters,pc-table -fno-omit-frame-pointer -g -O1"
TANDEM_SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
FFMPEG_NATIVE=(
  --cc=$CC --disable-asm --disable-x86asm --disable-inline-asm --enable-pthreads
  --disable-everything --disable-programs --disable-doc --disable-network --disable-autodetect --disable-stripping
  --disable-avdevice --disable-avfilter --disable-postproc --enable-swscale --enable-swresample
)

# The wasm build's patches to libjpeg-turbo's C (not neon-wasm.patch, which is about building its
# SIMD for wasm): the fuzzed decoder runs the same entropy decoder and scale choices as the module.
TURBOJPEG_C_PATCHES=(jdhuff-bitbuf64.patch chroma-scale.patch jdhuff-fused.patch)
turbojpeg_c_patches_text() { for p in "${TURBOJPEG_C_PATCHES[@]}"; do cat "$here/../turbojpeg/$p"; done; }

ensure_sources >&2
libs_key=$(printf '%s\n' "$FFMPEG_SHA256" "$ZLIB_SHA256" "$LIBJPEG_TURBO_SHA256" "$DAV1D_SHA256" "$DAV1D_DEBIAN_SHA256" "${DAV1D_OPTIONS[@]}" "$($CC --version | head -1)" "$LIB_SAN" \
  "${FFMPEG_NATIVE[@]}" "${FFMPEG_CONFIG_TAIL[@]}" "$(ffmpeg_patches_text)" "$(turbojpeg_c_patches_text)" | sha256sum | cut -c1-16)
root="$TANDEM_CACHE/fuzz/libs-$libs_key"
prefix="$root/prefix"
if [ -f "$prefix/.done" ]; then
  flog "sanitizer builds of ffmpeg, zlib and libjpeg-turbo present (key $libs_key): skipped"
else
  t0=$(date +%s)
  rm -rf "$root"; mkdir -p "$root/work"
  tar -xf "$TANDEM_CACHE/sources/$FFMPEG_ORIG" -C "$root/work"; mv "$root/work"/ffmpeg-* "$root/work/ffmpeg"
  apply_ffmpeg_patches "$root/work/ffmpeg"
  tar -xf "$TANDEM_CACHE/sources/$ZLIB_ORIG" -C "$root/work"; mv "$root/work"/zlib-* "$root/work/zlib"
  tar -xzf "$TANDEM_CACHE/sources/$LIBJPEG_TURBO_ORIG" -C "$root/work"; mv "$root/work"/libjpeg-turbo-* "$root/work/libjpeg-turbo"
  for p in "${TURBOJPEG_C_PATCHES[@]}"; do
    flog "applying wasm/turbojpeg/$p to libjpeg-turbo"
    patch -d "$root/work/libjpeg-turbo" -p1 --quiet --forward < "$here/../turbojpeg/$p" || { flog "patch $p does not apply"; exit 1; }
  done
  flog "building zlib with $CC and ASan"
  (cd "$root/work/zlib" && CC=$CC CFLAGS="$LIB_SAN" ./configure --static --prefix="$prefix" >/dev/null && make -j"$(nproc)" install >/dev/null 2>&1)
  flog "building libjpeg-turbo's TurboJPEG library with $CC and ASan (no SIMD, as in wasm's C paths)"
  (cd "$root/work/libjpeg-turbo" && cmake -S . -B obj -DCMAKE_C_COMPILER=$CC -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=-DNDEBUG \
    -DCMAKE_C_FLAGS="$LIB_SAN" -DENABLE_SHARED=0 -DENABLE_STATIC=1 -DWITH_TURBOJPEG=1 -DWITH_SIMD=0 -DWITH_JAVA=0 >cmake.out 2>&1 &&
    make -C obj -j"$(nproc)" turbojpeg-static >make.out 2>&1) || { tail -30 "$root/work/libjpeg-turbo/"*.out; exit 1; }
  mkdir -p "$prefix/lib" "$prefix/include"
  cp "$root/work/libjpeg-turbo/obj/libturbojpeg.a" "$prefix/lib/"; cp "$root/work/libjpeg-turbo/obj/jconfig.h" "$prefix/include/"
  for h in turbojpeg.h jpeglib.h jmorecfg.h jerror.h; do cp "$root/work/libjpeg-turbo/$h" "$prefix/include/"; done
  flog "building dav1d with $CC and ASan (C only, 8-bit, as in wasm)"
  unpack_dav1d "$root/work" >&2
  # A plain build type: the sanitizer flags alone decide optimisation, as for the other libraries.
  (cd "$root/work/dav1d" && CC=$CC CFLAGS="$LIB_SAN" LDFLAGS="-fsanitize=address" meson setup obj --prefix="$prefix" --libdir=lib \
    --buildtype=plain "${DAV1D_OPTIONS[@]}" >meson.out 2>&1 && ninja -C obj install >ninja.out 2>&1) ||
    { tail -30 "$root/work/dav1d/"*.out; exit 1; }
  flog "configuring ffmpeg with $CC and ASan (about 1 min)"
  # pkg-config finds dav1d in this prefix only.
  (cd "$root/work/ffmpeg" && PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" ./configure --prefix="$prefix" --extra-cflags="$LIB_SAN -I$prefix/include" \
    --extra-ldflags="-fsanitize=address -L$prefix/lib" "${FFMPEG_NATIVE[@]}" "${FFMPEG_CONFIG_TAIL[@]}" --pkg-config=pkg-config \
    --pkg-config-flags=--static >configure.out 2>&1) ||
    { tail -30 "$root/work/ffmpeg/configure.out"; exit 1; }
  flog "building ffmpeg with $CC and ASan (about 5 min on 2 cores)"
  (cd "$root/work/ffmpeg" && make -j"$(nproc)" >make.out 2>&1 && make install >/dev/null 2>&1) || { tail -40 "$root/work/ffmpeg/make.out"; exit 1; }
  rm -rf "$root/work"
  touch "$prefix/.done"
  flog "libraries built in $(( $(date +%s) - t0 )) s"
fi

targets_key=$(cat "$here/fuzz_job.c" "$here/fuzz_pool.c" "$here/build.sh" "$here"/../src/*.c "$here"/../src/*.h | sha256sum | cut -c1-16)
bin="$root/bin-$targets_key"
if [ -x "$bin/fuzz-pool" ] && [ -x "$bin/fuzz-demux" ] && [ -x "$bin/fuzz-packets" ]; then
  flog "fuzz targets up to date (key $targets_key): skipped"
else
  mkdir -p "$bin"
  for target in image video packets audio stream demux; do
    flog "linking fuzz-$target (ASan + UBSan over wasm/src)"
    defines=(-DTD_FUZZ_${target^^})
    [ "$target" = stream ] && defines+=(-DTD_NATIVE_STREAM)
    extra=()
    [ "$target" = demux ] && extra+=("$here/../src/demux.c")
    $CC $TANDEM_SAN "${defines[@]}" -I"$prefix/include" "$here/fuzz_job.c" "$here"/../src/{image,fail,crop,jpeg,probe,resize,yuv2rgb,media,container,io,packets}.c "${extra[@]}" \
      -L"$prefix/lib" -lturbojpeg -lavformat -lavcodec -lswscale -lswresample -lavutil -ldav1d -lz -lm -lpthread -ldl -o "$bin/fuzz-$target"
  done
  # The pool's queue under ThreadSanitizer (which cannot share a binary with AddressSanitizer);
  # tandem_decode.c without coverage counters, which would race (see fuzz_pool.c).
  flog "linking fuzz-pool (TSan + UBSan over the pool's queue in tandem_decode.c)"
  $CC -c -fsanitize=thread,undefined -fno-sanitize-recover=undefined -g -O1 -DTD_NATIVE_POOL -I"$prefix/include" \
    "$here/../src/tandem_decode.c" -o "$bin/tandem_decode_pool.o"
  $CC -fsanitize=fuzzer,thread,undefined -fno-sanitize-recover=undefined -g -O1 -I"$prefix/include" "$here/fuzz_pool.c" \
    "$bin/tandem_decode_pool.o" -lpthread -o "$bin/fuzz-pool"
fi
echo "$bin"
