#!/usr/bin/env bash
# Builds with clang, AddressSanitizer and UBSan into build-asan/, runs the tests that feed Tessera
# malformed input (and the whole conformance suite through every reference and oneDNN kernel), then
# runs the load+check fuzzer (FUZZ_RUNS inputs, or FUZZ_SECONDS) seeded with the
# conformance models. Any sanitizer report or fuzzer crash fails the script.
# In CI the fuzz step is deterministic (fixed seed, fixed number of inputs, fresh corpus) so that a
# green run stays green; FUZZ_SECONDS switches to a timed run for longer explorations.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TESSERA_JOBS:-$(nproc)}
# ccache: paths relative to the checkout, so a fresh clone (as CI makes) reuses earlier compiles.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
runs=${FUZZ_RUNS:-20000}
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_FUZZ=ON \
  -DTESSERA_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j "$jobs" --target tessera_malformed_tests tessera_conformance_tests \
  tessera_conformance_run fuzz_load_check
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -L malformed)

corpus=build-asan/fuzz-corpus
mkdir -p "$corpus"
archive=${TESSERA_CONFORMANCE_ARCHIVE:-../shared/conformance/onnx-node-tests.tgz}
if [ -z "$(ls -A "$corpus")" ] && [ -f "$archive" ]; then
  seeds=$(mktemp -d)
  tar xzf "$archive" -C "$seeds"
  i=0
  for f in "$seeds"/node/*/model.onnx; do cp "$f" "$corpus/seed_$i.onnx"; i=$((i + 1)); done
  rm -rf "$seeds"
fi
if [ -n "${FUZZ_SECONDS:-}" ]; then
  limit=(-max_total_time="$FUZZ_SECONDS")
else
  limit=(-runs="$runs" -seed=1)
fi
echo "fuzzing load+check: ${limit[*]}"
set -o pipefail
./build-asan/tests/fuzz_load_check "${limit[@]}" -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 \
  "$corpus" 2>&1 | tail -n 15
