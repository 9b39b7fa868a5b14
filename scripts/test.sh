#!/usr/bin/env bash
# Every test Tessera has: unit, registry, CLI and conformance tests on a Release build, then the
# malformed-input tests under AddressSanitizer + UBSan and a short libFuzzer run (scripts/sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
(cd build && ctest --output-on-failure -j "${TESSERA_JOBS:-$(nproc)}")
bash scripts/sanitize.sh
