#!/usr/bin/env bash
# Compiles src/ to dist/ (JS + .d.ts) and copies the WGSL sources the modules load at run time.
# The plain JavaScript modules (workers, import-url.js) get their .d.ts from tsc (allowJs: from
# their JSDoc); tsc's own rewrite of each .js is then replaced by the file as it is in src/.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf dist
npx tsc -p tsconfig.build.json
(cd src && find . \( -name '*.wgsl' -o -name '*.js' \) -exec cp --parents {} ../dist/ \;)
bash scripts/source-key.sh > dist/.build-key
