#!/usr/bin/env bash
# What bench/loader.ts needs beyond scripts/setup.sh: Debian's PyTorch, torchvision, PIL and
# libjpeg-turbo's tjbench (the peers it is compared with), gcc and the libav/turbojpeg headers
# (the native decode reference), and the real photographs the benchmark corpus is cut from:
# Debian bookworm's mate-backgrounds 1.26.0-1 (16 JPEG nature photographs, 1920×1080 to
# 5640×3172), fetched with `apt-get download`, checked against a pinned SHA-256 and unpacked
# with `dpkg -x` under the cache directory (never into the repository).
# Idempotent: prints each step and skips what is already present.
set -euo pipefail
log() { printf '[setup:bench] %s\n' "$*"; }
fail() { printf '[setup:bench] error: %s\n' "$*" >&2; exit 1; }

PACKAGES=(python3-torch python3-torchvision libjpeg-turbo-progs python3-pil gcc libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libturbojpeg0-dev libjpeg62-turbo-dev)
PHOTOS_PKG=mate-backgrounds
PHOTOS_VERSION=1.26.0-1
PHOTOS_DEB=${PHOTOS_PKG}_${PHOTOS_VERSION}_all.deb
PHOTOS_SHA256=7bf4c2209f34b4f61ba6d24c8b58c28b361e82e4b943aae6d42c030169af9e04

cache=${TANDEM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem}
sources=$cache/sources
photos=$cache/photo-sources/$PHOTOS_PKG

# 1. Debian packages
installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed'; }
command -v dpkg-query >/dev/null || fail "dpkg-query not found: this script expects Debian 12 (bookworm)"
missing=()
for p in "${PACKAGES[@]}"; do
  if installed "$p"; then
    log "present: $p $(dpkg-query -W -f='${Version}' "$p")"
  else
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || fail "missing packages (${missing[*]}); run this script as root, or: apt-get install --no-install-recommends ${missing[*]}"
  log "installing: ${missing[*]}"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
    log "apt-get update"
    apt-get update -qq || fail "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
      fail "apt-get install failed for: ${missing[*]}"
  fi
  for p in "${missing[@]}"; do installed "$p" || fail "$p is still not installed after apt-get install"; done
  log "installed: ${missing[*]}"
fi

# 2. The photographs' .deb, pinned by SHA-256
sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$PHOTOS_SHA256" ]; }
mkdir -p "$sources"
deb=$sources/$PHOTOS_DEB
if sha_ok "$deb"; then
  log "present: $deb (sha256 ok)"
else
  [ -f "$deb" ] && { log "removing $deb: wrong sha256"; rm -f "$deb"; }
  log "apt-get download $PHOTOS_PKG=$PHOTOS_VERSION into $sources"
  tmp=$(mktemp -d "$sources/.download.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  if ! (cd "$tmp" && apt-get download -qq "$PHOTOS_PKG=$PHOTOS_VERSION" >/dev/null 2>"$tmp/.err"); then
    cat "$tmp/.err" >&2 || true
    fail "apt-get download $PHOTOS_PKG=$PHOTOS_VERSION failed (is bookworm's main component in the apt sources? try apt-get update), or put $PHOTOS_DEB into $sources by hand"
  fi
  [ -f "$tmp/$PHOTOS_DEB" ] || fail "apt-get download did not produce $PHOTOS_DEB (found: $(ls "$tmp" | tr '\n' ' '))"
  sha_ok "$tmp/$PHOTOS_DEB" || fail "$PHOTOS_DEB: sha256 $(sha256sum "$tmp/$PHOTOS_DEB" | cut -d' ' -f1) is not the pinned $PHOTOS_SHA256"
  mv "$tmp/$PHOTOS_DEB" "$deb"
  rm -rf "$tmp"
  trap - EXIT
  log "downloaded $deb (sha256 ok)"
fi

# 3. Unpacked photographs
marker=$photos/.complete
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$PHOTOS_SHA256" ]; then
  log "present: $photos ($(find "$photos" -name '*.jpg' | wc -l) JPEGs)"
else
  log "dpkg -x $PHOTOS_DEB -> $photos"
  rm -rf "$photos" "$photos.partial"
  mkdir -p "$photos.partial"
  dpkg -x "$deb" "$photos.partial" || fail "dpkg -x $deb failed"
  count=$(find "$photos.partial" -name '*.jpg' | wc -l)
  [ "$count" -gt 0 ] || fail "$PHOTOS_DEB holds no *.jpg"
  echo "$PHOTOS_SHA256" > "$photos.partial/.complete"
  mv "$photos.partial" "$photos"
  log "unpacked $count JPEGs into $photos"
fi
log "ready"
