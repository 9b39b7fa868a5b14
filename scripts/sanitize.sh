#!/usr/bin/env bash
# Builds with clang, AddressSanitizer and UBSan into build-asan/, runs the tests that feed Tessera
# malformed input (and the whole conformance suite through every reference and oneDNN kernel), then
# runs the load+check fuzzer (FUZZ_RUNS inputs, or FUZZ_SECONDS) and the load+run fuzzer
# (FUZZ_RUN_RUNS inputs, or FUZZ_SECONDS), both seeded with the conformance models. Any sanitizer
# report or fuzzer crash fails the script.
# In CI the fuzz step is deterministic (fixed seed, fixed number of inputs, fresh corpus) so that a
# green run stays green; FUZZ_SECONDS switches to a timed run for longer explorations.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TESSERA_JOBS:-$(nproc)}
# ccache: paths relative to the checkout, so a fresh clone (as CI makes) reuses earlier compiles.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
runs=${FUZZ_RUNS:-20000}
run_runs=${FUZZ_RUN_RUNS:-6000}
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_FUZZ=ON \
  -DTESSERA_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j "$jobs" --target tessera_malformed_tests tessera_conformance_tests \
  tessera_conformance_run fuzz_load_check fuzz_load_run tessera_malformed_run_tests
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -L malformed)

archive=${TESSERA_CONFORMANCE_ARCHIVE:-../shared/conformance/onnx-node-tests.tgz}
# Each fuzzer keeps a corpus of its own (what is new coverage for one is not for the other).
seed_corpus() {
  mkdir -p "$1"
  if [ -z "$(ls -A "$1")" ] && [ -f "$archive" ]; then
    local seeds i=0
    seeds=$(mktemp -d)
    tar xzf "$archive" -C "$seeds"
    for f in "$seeds"/node/*/model.onnx; do cp "$f" "$1/seed_$i.onnx"; i=$((i + 1)); done
    rm -rf "$seeds"
  fi
}
corpus=build-asan/fuzz-corpus
run_corpus=build-asan/fuzz-corpus-run
seed_corpus "$corpus"
seed_corpus "$run_corpus"
if [ -n "${FUZZ_SECONDS:-}" ]; then
  limit=(-max_total_time="$FUZZ_SECONDS")
  run_limit=(-max_total_time="$FUZZ_SECONDS")
else
  limit=(-runs="$runs" -seed=1)
  # The 1,884 seeds count as runs too: the rest are mutations.
  run_limit=(-runs="$run_runs" -seed=1)
fi
echo "fuzzing load+check: ${limit[*]}"
set -o pipefail
mkdir -p build-asan/fuzz-artifacts  # crashes and slow inputs land here, not in the checkout
./build-asan/tests/fuzz_load_check "${limit[@]}" -artifact_prefix=build-asan/fuzz-artifacts/ -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 \
  "$corpus" 2>&1 | tail -n 15
# Load + session + one run. The fuzzer limits each tensor to 256 MiB, well under the RSS limit, so a
# shape the runtime fails to refuse is an out-of-memory finding; -max_len keeps inputs near the seeds'.
echo "fuzzing load+run: ${run_limit[*]}"
./build-asan/tests/fuzz_load_run "${run_limit[@]}" -artifact_prefix=build-asan/fuzz-artifacts/ -rss_limit_mb=2048 -timeout=30 -max_len=8192 \
  -print_final_stats=1 "$run_corpus" 2>&1 | tail -n 15
