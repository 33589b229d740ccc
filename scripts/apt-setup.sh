#!/usr/bin/env bash
# System packages Tandem's tests and wasm build need, from Debian's archive only.
# Idempotent: prints each step and skips what is already present.
set -euo pipefail
log() { printf '[setup:apt] %s\n' "$*"; }

need_update=0
sources=/etc/apt/sources.list.d/tandem.sources
if [ ! -f "$sources" ]; then
  # The archive this machine already uses (a local mirror or proxy is honoured), never a fixed host.
  archive=$(bash "$(dirname "$0")/apt-mirror.sh" bookworm) || { log "cannot find bookworm in this machine's apt sources"; exit 1; }
  security=$(bash "$(dirname "$0")/apt-mirror.sh" bookworm --security 2>/dev/null || true)
  log "adding bookworm-backports (Mesa 25 lavapipe for dawn) and deb-src (ffmpeg/zlib/libjpeg-turbo sources) from $archive to $sources"
  {
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n' "$archive"
    printf 'Types: deb-src\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$archive"
    if [ -n "$security" ]; then
      printf '\nTypes: deb-src\nURIs: %s\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$security"
    fi
  } > "$sources"
  need_update=1
else
  log "apt sources already present: $sources"
fi

# Another apt-get (unattended upgrades, a provisioning script) may hold the lock on a fresh machine:
# wait for it, saying so, for at most ten minutes, instead of failing at once.
apt_locked() {
  local tries=0 err
  while :; do
    if err=$("$@" 2>&1 >/dev/null); then return 0; fi
    if ! grep -q 'Could not get lock\|Unable to acquire the dpkg frontend lock\|Unable to lock' <<<"$err" || [ $tries -ge 60 ]; then
      printf '%s\n' "$err" >&2; return 1
    fi
    tries=$((tries + 1))
    log "another apt/dpkg process holds the lock; waiting 10 s ($tries of 60): $(grep -m1 -i 'lock' <<<"$err")"
    sleep 10
  done
}

installed() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null | grep -q '^install ok installed'; }
mesa_ok() {
  local v; v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  [[ "$v" == 25.* ]]
}

missing=()
# jupyter-nbconvert and python3-nbclient: the consumer tier runs the example notebook in a real Jupyter.
# clang-format-14: the lint tier checks the C's format; clang-14, libFuzzer, cmake and make: the fuzz tier (wasm/fuzz).
# python3-torch: the reference logits of timm-layout ViT weights (scripts/make-timm-reference.py);
# python3-torchvision: the RandomResizedCrop references (scripts/make-crop-reference.py).
# The bench tier (scripts/bench-smoke.sh) runs every benchmark with its peers: python3-torch,
# python3-torchvision and python3-pil (PyTorch's DataLoader, PIL), libjpeg-turbo-progs (tjbench), gcc
# and the libav and libjpeg-turbo headers (the native decode column). scripts/setup-bench.sh adds the
# photographs the full benchmark's corpus is cut from.
for p in chromium debootstrap xz-utils dpkg-dev fonts-dejavu-core ffmpeg python3-pil python3-torch python3-torchvision jupyter-nbconvert python3-nbclient \
  clang-format-14 clang-14 libfuzzer-14-dev libclang-rt-14-dev cmake make \
  libjpeg-turbo-progs gcc libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libturbojpeg0-dev libjpeg62-turbo-dev; do
  installed "$p" || missing+=("$p")
done
mesa_ok || missing+=("mesa-vulkan-drivers/bookworm-backports")

if [ ${#missing[@]} -eq 0 ]; then
  log "all system packages present (chromium, debootstrap, jupyter-nbconvert, the benchmarks' peers, mesa-vulkan-drivers $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers))"
  exit 0
fi
if [ "$need_update" = 1 ] || ! compgen -G "/var/lib/apt/lists/*_dists_bookworm-backports_InRelease" >/dev/null; then
  log "apt-get update"
  apt_locked apt-get update -qq
fi
log "installing: ${missing[*]}"
apt_locked env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
log "mesa-vulkan-drivers $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers), chromium $(dpkg-query -W -f='${Version}' chromium)"
