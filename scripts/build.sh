#!/usr/bin/env bash
# Configures and builds Tessera (Release) into build/, with the sample models in build/samples/.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TESSERA_JOBS:-$(nproc)}
# ccache: paths relative to the checkout, so a fresh clone (as CI makes) reuses earlier compiles.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$jobs"
