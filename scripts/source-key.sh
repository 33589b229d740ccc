#!/usr/bin/env bash
# A hash of everything the tsc build reads, so setup can skip an up-to-date dist/.
cd "$(dirname "$0")/.." && find src tsconfig.json tsconfig.build.json package.json -type f | sort | xargs cat | sha256sum | cut -c1-16
