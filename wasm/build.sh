#!/usr/bin/env bash
# Builds Tandem's decode modules from pinned sources: wasm/dist/tandem-decode.{mjs,wasm} (pthreads)
# and wasm/dist/tandem-decode-st.{mjs,wasm} (single-threaded, for pages without SharedArrayBuffer).
# Cached by a hash of every input: a second run copies the cached output and says so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/toolchain.sh"
start=$(date +%s)

# Everything that decides ffmpeg's libraries, and then everything that decides the modules.
# Two variants: "mt" (pthreads sharing one memory; needs cross-origin isolation in browsers) and
# "st" (single-threaded, for the fallback pool of one instance per worker). wasm-ld refuses to
# mix objects built with and without atomics, so each variant has its own ffmpeg libraries.
FFMPEG_CONFIG=(
  --target-os=none --arch=x86_32 --enable-cross-compile --disable-asm --disable-x86asm --disable-inline-asm
  --cc=emcc --cxx=em++ --ar=emar --ranlib=emranlib --nm=emnm
  --disable-everything --disable-programs --disable-doc --disable-debug --disable-network --disable-autodetect
  --disable-avdevice --disable-avfilter --disable-postproc --enable-swscale --enable-swresample
)
source "$here/ffmpeg-components.sh"   # FFMPEG_CONFIG_TAIL: the decoders, demuxers and parsers, shared with wasm/fuzz
declare -A CFLAGS_OF=([mt]="-O3 -msimd128 -pthread" [st]="-O3 -msimd128")
declare -A THREADS_CONFIG=([mt]="--enable-pthreads" [st]="--disable-pthreads")
declare -A OUTPUT_OF=([mt]=tandem-decode [st]=tandem-decode-st)
MODULE_COMMON=(
  -O3 -msimd128 -sMODULARIZE=1 -sEXPORT_ES6=1 -sENVIRONMENT=web,worker,node
  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=64MB -sMAXIMUM_MEMORY=2GB -sSTACK_SIZE=1MB -sEXIT_RUNTIME=0
  -sEXPORTED_RUNTIME_METHODS=wasmMemory,HEAPU8
)
declare -A MODULE_FLAGS_OF=(
  [mt]="-pthread -sEXPORT_NAME=createTandemDecode -sPTHREAD_POOL_SIZE=Module.tandemThreads -sPTHREAD_POOL_SIZE_STRICT=0 -sDEFAULT_PTHREAD_STACK_SIZE=1MB -sEXPORTED_FUNCTIONS=_malloc,_free,_td_heap_in_use,_td_job_words,_td_job_size,_td_simd_check,_td_pool_start,_td_pool_stop,_td_pool_alive,_td_pool_alive_address,_td_submit,_td_decode_now -sINCOMING_MODULE_JS_API=tandemThreads,print,printErr,locateFile --post-js post.js"
  [st]="-sEXPORT_NAME=createTandemDecodeSingle -sEXPORTED_FUNCTIONS=_malloc,_free,_td_heap_in_use,_td_job_words,_td_job_size,_td_simd_check,_td_decode_now -sINCOMING_MODULE_JS_API=print,printErr,locateFile"
)

# libjpeg-turbo: only the static TurboJPEG library (libturbojpeg.a, which also holds the libjpeg API)
# and its headers, per variant with the same CFLAGS as ffmpeg, in its own prefix keyed by its inputs.
# Its Arm Neon intrinsics (simd/arm/*-neon.c) are compiled to wasm SIMD through SIMDe's arm_neon.h
# (emscripten's compat header; the rest of SIMDe comes from libsimde-dev, see ensure_chroot_simde).
# The patches in wasm/turbojpeg/ (applied to the unpacked sources, never to the tarball):
#   neon-wasm.patch: -DWASM_NEON=1 forces CPU_TYPE arm64 (the emscripten toolchain says x86), takes
#     the aarch64 dispatcher (wasm32 has BITS 32, which would pick aarch32) and leaves out
#     jchuff-neon.c (Huffman encoding, inline Arm asm; decoding does not use it).
#   jdhuff-bitbuf64.patch: the 64-bit Huffman bit buffer x32 uses (wasm32's size_t is 32 bits).
#   chroma-scale.patch: at 3/8, 5/8, 6/8 and 7/8 scale, 4:2:0 chroma is decoded at the luma scale and
#     upsampled (SIMD fancy upsampling) instead of through a doubled scalar IDCT (10x10 at 5/8):
#     about 8% faster per thread on the photo corpus, and closer to torchvision's full decode.
#   jdhuff-fused.patch: sequential Huffman decoding looks up a code and its magnitude bits together
#     (one 10-bit table giving the run, the sign-extended coefficient and the bits to drop, and the
#     end of block), falling back to the two-step decode for anything longer; same coefficients.
#   jidctint-wasm.c, jdcolor-wasm.c (added, not patches): the accurate integer IDCT and YCbCr->RGB
#     written in wasm SIMD128, each sample as the C computes it (SIMDe's translations of the Neon
#     versions ran no faster than the scalar C); neon-wasm.patch compiles them and has the
#     dispatcher call them instead of the Neon ones.
#   jidctred-wasm.c (added): the scaled IDCTs 3x3, 5x5, 6x6 and 7x7 (jidctint.c, scalar C in
#     libjpeg-turbo everywhere) in wasm SIMD128 for the 3/8, 5/8, 6/8 and 7/8 reduced decodes,
#     each sample as the C computes it, range limit included; neon-wasm.patch compiles it and
#     makes jddctmgr.c pick them.
TURBOJPEG_CMAKE=(
  -DCMAKE_BUILD_TYPE=Release -DENABLE_SHARED=0 -DENABLE_STATIC=1 -DWITH_TURBOJPEG=1 -DWITH_JAVA=0
  -DWITH_SIMD=1 -DREQUIRE_SIMD=1 -DWASM_NEON=1 -DNEON_INTRINSICS=1 -DWITH_12BIT=0 -DWITH_FUZZ=0
)
TURBOJPEG_CFLAGS="-mfpu=neon -I/usr/include/simde/arm"   # added to the variant's CFLAGS
TURBOJPEG_PATCHES=(neon-wasm.patch jdhuff-bitbuf64.patch chroma-scale.patch jdhuff-fused.patch)
TURBOJPEG_ADDED=(jidctint-wasm.c jdcolor-wasm.c jidctred-wasm.c)   # Tandem's own SIMD128 code, copied into src/simd/wasm/
TURBOJPEG_HEADERS=(turbojpeg.h jpeglib.h jmorecfg.h jerror.h)   # plus the generated jconfig.h

# Tandem's wasm SIMD128 versions of libavcodec's hottest C (wasm/ffmpeg/*_wasm.c, copied into
# libavcodec/) and the patch that installs them from the DSP init functions, vp9-coder-local.patch
# (VP9's token decoding on a local copy of its range coder) and renorm-clz.patch (both arithmetic
# decoders' shift by clz, not a table; see wasm/ffmpeg/README.md). Wasm only: the native fuzz build
# runs ffmpeg's C, which these must equal (ff_*_wasm_check, run by test/unit/simd-check).
FFMPEG_WASM_PATCHES=(wasm-simd-hooks.patch vp9-coder-local.patch renorm-clz.patch)
FFMPEG_WASM_ADDED=(vp9mc_wasm.c vp9itxfm_wasm.c vp9lpf_wasm.c h264mc_wasm.c h264deblock_wasm.c h264idct_wasm.c renorm_check_wasm.c simd_check_wasm.h)
ffmpeg_wasm_text() { local p; for p in "${FFMPEG_WASM_PATCHES[@]}" "${FFMPEG_WASM_ADDED[@]}"; do cat "$here/ffmpeg/$p"; done; }
apply_ffmpeg_wasm_simd() { # unpacked ffmpeg tree
  local p; for p in "${FFMPEG_WASM_PATCHES[@]}"; do
    wlog "applying wasm/ffmpeg/$p"
    patch -d "$1" -p1 --quiet --forward < "$here/ffmpeg/$p" || { wlog "wasm/ffmpeg/$p does not apply"; return 1; }
  done
  for p in "${FFMPEG_WASM_ADDED[@]}"; do wlog "adding wasm/ffmpeg/$p"; cp "$here/ffmpeg/$p" "$1/libavcodec/"; done
}

ffmpeg_config() { echo "${FFMPEG_CONFIG[*]} ${THREADS_CONFIG[$1]} ${FFMPEG_CONFIG_TAIL[*]}"; }
# dav1d (AV1): C only (its assembly is x86 and Arm), 8-bit, a static library per variant. Its
# meson.build asks for -pthread on wasm; the st variant must not have it (wasm-ld refuses to mix
# objects with and without atomics), so the threads dependency becomes the variant's own flags.
# libavcodec's libdav1d wrapper passes the codec context's thread count (Tandem sets 1), so dav1d
# starts no thread of its own in either variant.
DAV1D_MESON=(--buildtype=release "${DAV1D_OPTIONS[@]}")
dav1d_key() { printf '%s\n' "$DAV1D_SHA256" "$DAV1D_DEBIAN_SHA256" "$EMSCRIPTEN_VERSION" "${CFLAGS_OF[$1]}" "${DAV1D_MESON[@]}" | sha256sum | cut -c1-16; }
ffmpeg_key() { { dav1d_key "$1"; printf '%s\n' "$FFMPEG_VERSION" "$FFMPEG_SHA256" "$ZLIB_SHA256" "$EMSCRIPTEN_VERSION" "${CFLAGS_OF[$1]}" $(ffmpeg_config "$1"); ffmpeg_patches_text; ffmpeg_wasm_text; } | sha256sum | cut -c1-16; }
turbojpeg_key() { { printf '%s\n' "$LIBJPEG_TURBO_VERSION" "$LIBJPEG_TURBO_SHA256" "$EMSCRIPTEN_VERSION" "${CFLAGS_OF[$1]}" "$TURBOJPEG_CFLAGS" "${TURBOJPEG_CMAKE[@]}" "${TURBOJPEG_HEADERS[@]}" "${TURBOJPEG_PATCHES[@]}"; for p in "${TURBOJPEG_PATCHES[@]}" "${TURBOJPEG_ADDED[@]}"; do cat "$here/turbojpeg/$p"; done; } | sha256sum | cut -c1-16; }
module_key=$( { ffmpeg_key mt; ffmpeg_key st; turbojpeg_key mt; turbojpeg_key st; printf '%s\n' "${MODULE_COMMON[@]}" "${MODULE_FLAGS_OF[@]}"; cat "$here/build.sh" "$here/toolchain.sh" "$here/bundler-safe.mjs" "$here"/src/*; } | sha256sum | cut -c1-16)
out="$here/dist"
cached="$TANDEM_CACHE/wasm/$module_key"

# For development: TANDEM_WASM_DEV_OUT=DIR links only the pthreads module into DIR, uncached, with
# TANDEM_WASM_DEV_FLAGS added to the link (--profiling-funcs keeps names for a profiler).
dev_out=${TANDEM_WASM_DEV_OUT:-}
if [ -n "$dev_out" ]; then
  :
elif [ -f "$out/.build-key" ] && [ "$(cat "$out/.build-key")" = "$module_key" ]; then
  wlog "modules up to date (key $module_key): skipped build"; exit 0
fi
if [ -z "$dev_out" ] && [ -f "$cached/tandem-decode.wasm" ] && [ -f "$cached/tandem-decode-st.wasm" ]; then
  mkdir -p "$out"; cp -f "$cached"/* "$out/"; echo "$module_key" > "$out/.build-key"
  wlog "modules restored from cache $cached: skipped build"; exit 0
fi

ensure_trixie_root
ensure_chroot_cmake
ensure_chroot_simde
ensure_chroot_meson
ensure_sources
build_root="$TRIXIE_ROOT/build"          # seen as /build inside the chroot
mkdir -p "$build_root"
if [ -n "$TRIXIE_ROOT" ]; then
  in_chroot() { with_chroot_mounts chroot "$TRIXIE_ROOT" /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin /bin/bash -ec "$1"; }
else
  in_chroot() { /bin/bash -ec "$1"; }
fi

build_dav1d() { # variant -> sets $dav1d_prefix (as seen inside the chroot)
  local variant=$1 key; key=$(dav1d_key "$variant")
  dav1d_prefix="/build/dav1d-$key/prefix"
  if [ -f "$TRIXIE_ROOT$dav1d_prefix/.done" ]; then
    wlog "dav1d $DAV1D_VERSION ($variant) present (key $key): skipped"; return
  fi
  local t0; t0=$(date +%s)
  local work="$build_root/dav1d-$key"; rm -rf "$work"; mkdir -p "$work"
  wlog "unpacking dav1d sources ($variant)"
  unpack_dav1d "$work"
  sed -i "s/thread_dependency = dependency('threads')/thread_dependency = declare_dependency()/" "$work/dav1d/meson.build"
  local cflags="" f; for f in ${CFLAGS_OF[$variant]}; do cflags+="'$f', "; done
  cat > "$work/cross.txt" <<CROSS
[binaries]
c = 'emcc'
cpp = 'em++'
ar = 'emar'
strip = 'emstrip'
[host_machine]
system = 'emscripten'
cpu_family = 'wasm32'
cpu = 'wasm32'
endian = 'little'
[built-in options]
c_args = [${cflags%, }]
c_link_args = [${cflags%, }]
CROSS
  wlog "building dav1d with meson and emcc ($variant)"
  in_chroot "cd /build/dav1d-$key && meson setup obj dav1d --cross-file cross.txt --prefix=$dav1d_prefix --libdir=lib ${DAV1D_MESON[*]} > meson.out 2>&1 || { tail -30 meson.out; exit 1; }
    ninja -C obj install > ninja.out 2>&1 || { tail -40 ninja.out; exit 1; }
    touch $dav1d_prefix/.done"
  rm -rf "$work/dav1d" "$work/obj"
  wlog "dav1d ($variant) built in $(( $(date +%s) - t0 )) s"
}

build_ffmpeg() { # variant -> sets $prefix (as seen inside the chroot)
  local variant=$1 key; key=$(ffmpeg_key "$variant")
  local cflags=${CFLAGS_OF[$variant]} ldflags=""; [ "$variant" = mt ] && ldflags="-pthread"
  prefix="/build/ffmpeg-$key/prefix"
  if [ -f "$TRIXIE_ROOT$prefix/.done" ]; then
    wlog "ffmpeg $FFMPEG_VERSION libraries ($variant) present (key $key): skipped"; return
  fi
  local t0; t0=$(date +%s)
  wlog "unpacking ffmpeg and zlib sources ($variant)"
  local work="$build_root/ffmpeg-$key"; rm -rf "$work"; mkdir -p "$work"
  tar -xf "$TANDEM_CACHE/sources/$FFMPEG_ORIG" -C "$work"; mv "$work"/ffmpeg-* "$work/ffmpeg"
  apply_ffmpeg_patches "$work/ffmpeg"
  apply_ffmpeg_wasm_simd "$work/ffmpeg"
  tar -xf "$TANDEM_CACHE/sources/$ZLIB_ORIG" -C "$work"; mv "$work"/zlib-* "$work/zlib"
  wlog "building zlib with emcc ($variant)"
  in_chroot "cd /build/ffmpeg-$key/zlib && CFLAGS='$cflags' emconfigure ./configure --static --prefix=$prefix >/dev/null && emmake make -j$(nproc) install >/dev/null 2>&1"
  wlog "configuring ffmpeg ($variant, about 90 s)"
  # pkg-config finds dav1d in its prefix only (PKG_CONFIG_LIBDIR replaces the system's paths).
  in_chroot "cd /build/ffmpeg-$key/ffmpeg && PKG_CONFIG_LIBDIR=$dav1d_prefix/lib/pkgconfig ./configure --prefix=$prefix --extra-cflags='$cflags -I$prefix/include' --extra-ldflags='$ldflags -L$prefix/lib' $(ffmpeg_config "$variant") --pkg-config=pkg-config --pkg-config-flags=--static > configure.out 2>&1 || { tail -30 configure.out ffbuild/config.log; exit 1; }"
  wlog "building ffmpeg ($variant, about 4 min on 2 cores)"
  in_chroot "cd /build/ffmpeg-$key/ffmpeg && make -j$(nproc) >make.out 2>&1 || { tail -40 make.out; exit 1; }; make install >/dev/null && touch $prefix/.done"
  # The libraries are installed; the object files are 1 GB we no longer need.
  rm -rf "$work/ffmpeg" "$work/zlib"
  wlog "ffmpeg ($variant) built in $(( $(date +%s) - t0 )) s"
}

build_turbojpeg() { # variant -> sets $tjprefix (as seen inside the chroot)
  local variant=$1 key; key=$(turbojpeg_key "$variant")
  local cflags="${CFLAGS_OF[$variant]} $TURBOJPEG_CFLAGS" ldflags=""; [ "$variant" = mt ] && ldflags="-pthread"
  tjprefix="/build/turbojpeg-$key/prefix"
  if [ -f "$TRIXIE_ROOT$tjprefix/.done" ]; then
    wlog "libjpeg-turbo $LIBJPEG_TURBO_VERSION TurboJPEG library ($variant) present (key $key): skipped"; return
  fi
  local t0; t0=$(date +%s)
  wlog "unpacking libjpeg-turbo sources ($variant)"
  local work="$build_root/turbojpeg-$key"; rm -rf "$work"; mkdir -p "$work"
  tar -xzf "$TANDEM_CACHE/sources/$LIBJPEG_TURBO_ORIG" -C "$work"; mv "$work"/libjpeg-turbo-* "$work/src"
  command -v patch >/dev/null || { wlog "patch missing (apt-get install patch)"; return 1; }
  local p; for p in "${TURBOJPEG_PATCHES[@]}"; do
    wlog "applying wasm/turbojpeg/$p"
    patch -d "$work/src" -p1 --quiet --forward < "$here/turbojpeg/$p" || { wlog "patch $p does not apply"; return 1; }
  done
  mkdir -p "$work/src/simd/wasm"
  for p in "${TURBOJPEG_ADDED[@]}"; do wlog "adding wasm/turbojpeg/$p"; cp "$here/turbojpeg/$p" "$work/src/simd/wasm/"; done
  wlog "configuring libjpeg-turbo with emcmake cmake ($variant)"
  # CMAKE_C_FLAGS_RELEASE=-DNDEBUG: the variant's flags alone decide optimisation (no extra -O2/-O3).
  in_chroot "cd /build/turbojpeg-$key && emcmake cmake -S src -B obj ${TURBOJPEG_CMAKE[*]} -DCMAKE_INSTALL_PREFIX=$tjprefix -DCMAKE_C_FLAGS='$cflags' -DCMAKE_C_FLAGS_RELEASE=-DNDEBUG -DCMAKE_EXE_LINKER_FLAGS='$ldflags' > cmake.out 2>&1 || { tail -30 cmake.out; exit 1; }"
  wlog "building libjpeg-turbo's turbojpeg-static target ($variant)"
  # Only the library target: the programs and tests are not needed, and 'make install' would build them.
  in_chroot "cd /build/turbojpeg-$key && emmake make -C obj -j$(nproc) turbojpeg-static > make.out 2>&1 || { tail -40 make.out; exit 1; }
    mkdir -p $tjprefix/lib $tjprefix/include
    cp obj/libturbojpeg.a $tjprefix/lib/ && cp obj/jconfig.h $tjprefix/include/
    for h in ${TURBOJPEG_HEADERS[*]}; do cp src/\$h $tjprefix/include/; done
    touch $tjprefix/.done"
  rm -rf "$work/src" "$work/obj"
  wlog "libjpeg-turbo ($variant) built in $(( $(date +%s) - t0 )) s"
}

variants="mt st"
[ -n "$dev_out" ] && variants=mt
mkdir -p "$cached" "$out"
for variant in $variants; do
  build_dav1d "$variant"
  build_ffmpeg "$variant"
  build_turbojpeg "$variant"
  name=${OUTPUT_OF[$variant]}
  wlog "linking the decode module $name.mjs"
  mkdir -p "$build_root/module" && rm -rf "$build_root/module"/* && cp "$here"/src/*.c "$here"/src/*.h "$here"/src/post.js "$build_root/module/"
  in_chroot "cd /build/module && emcc ${MODULE_COMMON[*]} ${MODULE_FLAGS_OF[$variant]} -I$prefix/include -I$tjprefix/include *.c -L$prefix/lib -L$tjprefix/lib -L$dav1d_prefix/lib -lturbojpeg -lavformat -lavcodec -lswscale -lswresample -lavutil -ldav1d -lz ${TANDEM_WASM_DEV_FLAGS:-} -o $name.mjs"
  node "$here/bundler-safe.mjs" "$build_root/module/$name.mjs" "$name"
  if [ -n "$dev_out" ]; then
    mkdir -p "$dev_out" && cp "$build_root/module/$name.mjs" "$build_root/module/$name.wasm" "$dev_out/"
    wlog "development build of $name in $dev_out"; exit 0
  fi
  cp "$build_root/module/$name.mjs" "$build_root/module/$name.wasm" "$cached/"
done
cp "$here/src/tandem-decode.d.mts" "$here/src/tandem-decode-st.d.mts" "$cached/"
cp -f "$cached"/* "$out/"; echo "$module_key" > "$out/.build-key"
wlog "built in $(( $(date +%s) - start )) s: $(du -b "$out/tandem-decode.wasm" "$out/tandem-decode-st.wasm" | cut -f1 | paste -sd+) bytes of wasm (threads + single; key $module_key)"
