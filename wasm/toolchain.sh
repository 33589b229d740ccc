#!/usr/bin/env bash
# The pinned toolchain and sources for Tandem's wasm decode module, made on demand and cached.
#   - emscripten 3.1.69 from Debian trixie, in a minimal trixie root made with debootstrap
#   - ffmpeg and zlib from Debian bookworm source packages, pinned by version and SHA-256
#   - libjpeg-turbo (for its TurboJPEG library) from Debian's source package, pinned the same way;
#     built with CMake, which ensure_chroot_cmake installs into the trixie root when missing, and
#     with its Arm Neon intrinsics compiled to wasm SIMD through SIMDe's headers (libsimde-dev),
#     which ensure_chroot_simde installs the same way
# Sourced by wasm/build.sh; every step prints what it does and skips what is already there.
# Off Debian, run the same build inside a `debian:trixie` container (docker run -v "$PWD":/src -w /src
# debian:trixie) after `apt-get install emscripten dpkg-dev cmake libsimde-dev meson ninja-build pkgconf` there, with TANDEM_NATIVE_EMSCRIPTEN=1:
# emcc then runs directly, with no chroot.

TANDEM_CACHE=${TANDEM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem}
if [ "${TANDEM_NATIVE_EMSCRIPTEN:-0}" = 1 ]; then
  TRIXIE_ROOT=""
else
  TRIXIE_ROOT=${TANDEM_TRIXIE_ROOT:-$TANDEM_CACHE/trixie-root}
  case "$TRIXIE_ROOT" in /|"") echo "[wasm] refusing trixie root '$TRIXIE_ROOT'; use TANDEM_NATIVE_EMSCRIPTEN=1" >&2; exit 1;; esac
fi
EMSCRIPTEN_VERSION=3.1.69
FFMPEG_VERSION=7:5.1.9-0+deb12u1
FFMPEG_ORIG=ffmpeg_5.1.9.orig.tar.xz
FFMPEG_SHA256=d9b593bb2ba93d4b50f74177e0cdcd41747e708596367deed0c30348a71dd176
ZLIB_VERSION=1:1.2.13.dfsg-1
ZLIB_ORIG=zlib_1.2.13.dfsg.orig.tar.bz2
ZLIB_SHA256=71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1
LIBJPEG_TURBO_VERSION=1:2.1.5-2
LIBJPEG_TURBO_ORIG=libjpeg-turbo_2.1.5.orig.tar.gz
LIBJPEG_TURBO_SHA256=254f3642b04e309fee775123133c6464181addc150499561020312ec61c1bf7c
# dav1d (AV1), built with meson; Debian's security patches (debian/patches, in series order) are
# applied to the upstream tarball.
DAV1D_VERSION=1.0.0-2+deb12u1
DAV1D_ORIG=dav1d_1.0.0.orig.tar.xz
DAV1D_SHA256=51737db7e4897e599684f873a4725176dd3c779e639411d7c4fce134bb5ebb82
DAV1D_DEBIAN=dav1d_1.0.0-2+deb12u1.debian.tar.xz
DAV1D_DEBIAN_SHA256=ae53e2bda2a18275cc66570194fced9b9681df2b3b8e041586a26a59d69a727e

wlog() { printf '[wasm] %s\n' "$*"; }

ensure_trixie_root() {
  if [ -z "$TRIXIE_ROOT" ]; then
    command -v emcc >/dev/null || { wlog "TANDEM_NATIVE_EMSCRIPTEN=1 but emcc is not on PATH"; return 1; }
    wlog "using this system's emscripten: $(emcc --version | head -1)"
    return
  fi
  if [ -x "$TRIXIE_ROOT/usr/bin/emcc" ] && [ -f "$TRIXIE_ROOT/.tandem-ready" ]; then
    wlog "emscripten toolchain present: $TRIXIE_ROOT ($(cat "$TRIXIE_ROOT/.tandem-ready"))"
    return
  fi
  command -v debootstrap >/dev/null || { wlog "debootstrap missing: run scripts/apt-setup.sh"; return 1; }
  if [ ! -x "$TRIXIE_ROOT/usr/bin/apt-get" ]; then
    wlog "debootstrap --variant=minbase trixie -> $TRIXIE_ROOT (about 30 s)"
    rm -rf "$TRIXIE_ROOT"; mkdir -p "$(dirname "$TRIXIE_ROOT")"
    # The Debian archive this machine's apt uses (a local mirror or proxy is honoured).
    local archive; archive=$(bash "$(dirname "${BASH_SOURCE[0]}")/../scripts/apt-mirror.sh" bookworm) || { wlog "no Debian archive in this machine's apt sources"; return 1; }
    debootstrap --variant=minbase trixie "$TRIXIE_ROOT" "$archive" >"$TANDEM_CACHE/debootstrap.log" 2>&1 \
      || { tail -20 "$TANDEM_CACHE/debootstrap.log"; return 1; }
  fi
  wlog "apt-get install emscripten inside the trixie root (about 40 s, ~400 MB)"
  with_chroot_mounts chroot "$TRIXIE_ROOT" /bin/sh -c \
    'export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq --no-install-recommends emscripten make pkgconf >/dev/null' 
  local v; v=$(chroot "$TRIXIE_ROOT" dpkg-query -W -f='${Version}' emscripten)
  case "$v" in "$EMSCRIPTEN_VERSION"*) ;; *) wlog "expected emscripten $EMSCRIPTEN_VERSION, trixie gave $v"; return 1;; esac
  echo "emscripten $v" > "$TRIXIE_ROOT/.tandem-ready"
  wlog "emscripten $v ready"
}

# One Debian package in the trixie root, checked by a file it installs (not the .tandem-ready
# stamp, so roots made before the package was needed get it too). With TANDEM_NATIVE_EMSCRIPTEN=1
# the file must already be on this system.
ensure_chroot_package() { # package file why
  local package=$1 file=$2 why=$3
  if [ -z "$TRIXIE_ROOT" ]; then
    [ -e "$file" ] || { wlog "TANDEM_NATIVE_EMSCRIPTEN=1 but $file is missing (apt-get install $package)"; return 1; }
    wlog "using this system's $package ($file)"
    return
  fi
  if [ -e "$TRIXIE_ROOT$file" ]; then
    wlog "$package present in the trixie root ($(chroot "$TRIXIE_ROOT" dpkg-query -W -f='${Version}' "$package" 2>/dev/null || echo '?')): skipped"
    return
  fi
  wlog "apt-get install $package inside the trixie root ($why)"
  with_chroot_mounts chroot "$TRIXIE_ROOT" /bin/sh -c \
    "export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq --no-install-recommends $package >/dev/null"
  [ -e "$TRIXIE_ROOT$file" ] || { wlog "$package install in the trixie root failed"; return 1; }
  wlog "$package $(chroot "$TRIXIE_ROOT" dpkg-query -W -f='${Version}' "$package") installed in the trixie root"
}

# CMake builds libjpeg-turbo.
ensure_chroot_cmake() { ensure_chroot_package cmake /usr/bin/cmake "builds libjpeg-turbo"; }
# Meson and Ninja build dav1d.
ensure_chroot_meson() {
  ensure_chroot_package meson /usr/bin/meson "builds dav1d"
  ensure_chroot_package ninja-build /usr/bin/ninja "builds dav1d"
}

# Unpacks dav1d's sources into DIR/dav1d with Debian's patches applied.
unpack_dav1d() { # dir
  local dir=$1 p
  tar -xf "$TANDEM_CACHE/sources/$DAV1D_ORIG" -C "$dir" && mv "$dir"/dav1d-* "$dir/dav1d"
  tar -xf "$TANDEM_CACHE/sources/$DAV1D_DEBIAN" -C "$dir/dav1d"
  while read -r p; do
    case "$p" in ''|'#'*) continue;; esac
    wlog "applying Debian's dav1d patch $p"
    patch -d "$dir/dav1d" -p1 --quiet --forward < "$dir/dav1d/debian/patches/$p" || { wlog "Debian's $p does not apply"; return 1; }
  done < "$dir/dav1d/debian/patches/series"
}

# SIMDe's headers: emscripten's compat arm_neon.h is SIMDe's top-level header and includes
# "neon/*.h", which Debian ships only in libsimde-dev. With it, libjpeg-turbo's Arm NEON
# intrinsics compile to wasm SIMD.
SIMDE_HEADER=/usr/include/simde/arm/neon.h
ensure_chroot_simde() { ensure_chroot_package libsimde-dev "$SIMDE_HEADER" "libjpeg-turbo's NEON code as wasm SIMD"; }

# Runs "$@" with /proc mounted in the trixie root; unmounts on every exit path.
with_chroot_mounts() {
  local mounted=0 rc=0
  if [ -z "$TRIXIE_ROOT" ]; then "$@"; return; fi
  if ! mountpoint -q "$TRIXIE_ROOT/proc"; then mount -t proc proc "$TRIXIE_ROOT/proc"; mounted=1; fi
  cp -f /etc/resolv.conf "$TRIXIE_ROOT/etc/resolv.conf" 2>/dev/null || true
  "$@" || rc=$?
  if [ "$mounted" = 1 ]; then umount "$TRIXIE_ROOT/proc" || umount -l "$TRIXIE_ROOT/proc"; fi
  return $rc
}

check_sha256() { # file expected
  local got; got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$2" ] || { wlog "SHA-256 mismatch for $1: got $got, pinned $2"; return 1; }
}

# Downloads the pinned Debian source packages into $TANDEM_CACHE/sources and checks them.
ensure_sources() {
  local dir="$TANDEM_CACHE/sources"; mkdir -p "$dir"
  if [ -f "$dir/$FFMPEG_ORIG" ] && [ -f "$dir/$ZLIB_ORIG" ] && [ -f "$dir/$LIBJPEG_TURBO_ORIG" ] && [ -f "$dir/$DAV1D_ORIG" ] && [ -f "$dir/$DAV1D_DEBIAN" ]; then
    wlog "sources present: $FFMPEG_ORIG, $ZLIB_ORIG, $LIBJPEG_TURBO_ORIG, $DAV1D_ORIG"
  else
    command -v dpkg-source >/dev/null || { wlog "dpkg-dev missing: run scripts/apt-setup.sh"; return 1; }
    local want=()
    [ -f "$dir/$FFMPEG_ORIG" ] || want+=("ffmpeg=$FFMPEG_VERSION")
    [ -f "$dir/$ZLIB_ORIG" ] || want+=("zlib=$ZLIB_VERSION")
    [ -f "$dir/$LIBJPEG_TURBO_ORIG" ] || want+=("libjpeg-turbo=$LIBJPEG_TURBO_VERSION")
    [ -f "$dir/$DAV1D_ORIG" ] && [ -f "$dir/$DAV1D_DEBIAN" ] || want+=("dav1d=$DAV1D_VERSION")
    wlog "apt-get source --download-only ${want[*]}"
    (cd "$dir" && apt-get source -qq --download-only "${want[@]}" >/dev/null)
  fi
  check_sha256 "$dir/$FFMPEG_ORIG" "$FFMPEG_SHA256"
  check_sha256 "$dir/$ZLIB_ORIG" "$ZLIB_SHA256"
  check_sha256 "$dir/$LIBJPEG_TURBO_ORIG" "$LIBJPEG_TURBO_SHA256"
  check_sha256 "$dir/$DAV1D_ORIG" "$DAV1D_SHA256"
  check_sha256 "$dir/$DAV1D_DEBIAN" "$DAV1D_DEBIAN_SHA256"
  wlog "sources verified by SHA-256"
}
