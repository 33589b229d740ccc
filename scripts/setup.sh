#!/usr/bin/env bash
# Tandem's one setup: system packages (Debian), npm packages, and the wasm decode module.
# Idempotent: each step prints what it does, or what it skipped because it is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
log() { printf '[setup] %s\n' "$*"; }

node_version=$(node -p 'process.versions.node' 2>/dev/null || echo 0)
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' 2>/dev/null; then
  log "Node.js >= 20.19 is required (found $node_version); install it first (e.g. from nodejs.org or Debian's nodejs in trixie)"
  exit 1
fi
log "node $node_version, npm $(npm --version)"

bash scripts/apt-setup.sh

want=$(cat package.json package-lock.json | sha256sum | cut -c1-16)
stamp=node_modules/.tandem-install
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  log "npm packages up to date: skipped npm ci"
else
  log "npm ci (vitest, vite, playwright-core, webgpu, deno, typescript)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi

bash wasm/build.sh
bash wasm/fuzz/build.sh >/dev/null   # the native fuzz targets the test tier runs (prints its steps on stderr)

if [ -f dist/.build-key ] && [ "$(cat dist/.build-key)" = "$(bash scripts/source-key.sh)" ]; then
  log "library build up to date: skipped tsc"
else
  log "building the library (tsc -> dist/)"
  npm run --silent build
fi
log "ready in $(( $(date +%s) - t0 )) s"
