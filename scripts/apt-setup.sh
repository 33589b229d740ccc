#!/usr/bin/env bash
# System packages Tandem's tests and wasm build need, from Debian's archive only.
# Idempotent: prints each step and skips what is already present.
set -euo pipefail
log() { printf '[setup:apt] %s\n' "$*"; }

need_update=0
sources=/etc/apt/sources.list.d/tandem.sources
if [ ! -f "$sources" ]; then
  log "adding bookworm-backports (Mesa 25 lavapipe for dawn) and deb-src (ffmpeg/zlib sources) to $sources"
  cat > "$sources" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  need_update=1
else
  log "apt sources already present: $sources"
fi

installed() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null | grep -q '^install ok installed'; }
mesa_ok() {
  local v; v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  [[ "$v" == 25.* ]]
}

missing=()
for p in chromium debootstrap xz-utils dpkg-dev fonts-dejavu-core ffmpeg python3-pil; do installed "$p" || missing+=("$p"); done
mesa_ok || missing+=("mesa-vulkan-drivers/bookworm-backports")

if [ ${#missing[@]} -eq 0 ]; then
  log "all system packages present (chromium, debootstrap, mesa-vulkan-drivers $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers))"
  exit 0
fi
if [ "$need_update" = 1 ] || [ ! -f /var/lib/apt/lists/deb.debian.org_debian_dists_bookworm-backports_InRelease ]; then
  log "apt-get update"
  apt-get update -qq
fi
log "installing: ${missing[*]}"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
log "mesa-vulkan-drivers $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers), chromium $(dpkg-query -W -f='${Version}' chromium)"
