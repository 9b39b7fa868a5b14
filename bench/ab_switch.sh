#!/usr/bin/env bash
# A/B of one of Tessera's kernel switches (an environment variable taking on/off, e.g. TESSERA_OWN_CONV,
# TESSERA_OWN_DIRECT, TESSERA_OWN_GEMM) on the GPU test machine's CPU, after scripts/bundle.sh made
# dist/tessera and it was carried along. The VM's speed drifts by 10-30% from minute to minute, so the
# two settings take turns, ROUNDS times, and each round gives one ratio on/off; the median of those is
# what to read. Two threads run pinned to CPUs 0-1, like bench/gpu_machine_cpu.sh. Output: a table per
# model and thread count, also written to $OUT/ab_<switch>.md.
#   SWITCH=TESSERA_OWN_DIRECT THREADS="16 2" ROUNDS=5 bash bench/ab_switch.sh resnet50 mobilenet_v2
# Elsewhere (the build machine): BIN=build/src/tessera MODELS=/tmp/tx-models (exported before, each
# model in MODELS/NAME/model.onnx with test_data_set_0) and ARGS for `tessera run`, e.g.
#   BIN=build/src/tessera MODELS=/tmp/tx-models ARGS="--layout nchw" SWITCH=TESSERA_FINITE_SUMS \
#     THREADS=2 ROUNDS=5 bash bench/ab_switch.sh resnet50
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${BIN:-dist/tessera/bin/tessera}")
out=${OUT:-/tmp/tessera-out}
work=${MODELS:-/tmp/tessera-bench}
switch=${SWITCH:?SWITCH=<environment variable> is required}
models=${*:-resnet50}
read -r -a extra <<<"${ARGS:-}"
mkdir -p "$out"
[ -n "${MODELS:-}" ] ||
  python3 tests/models/export_models.py "$work" --models "$(echo "$models" | tr ' ' ,)" >/dev/null 2>&1
median_ms() {  # threads, model, setting
  local pin=()
  [ "$1" -le 2 ] && pin=(taskset -c 0,1)
  env "$switch=$3" "${pin[@]}" "$bin" run "$work/$2/model.onnx" --input-dir "$work/$2/test_data_set_0" \
    --threads "$1" -n "${ITERATIONS:-30}" --warmup 10 --no-progress --json "${extra[@]}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["latency_ms"]["median"])'
}
{
  echo "| model | threads | $switch=on ms | $switch=off ms | on/off (median of rounds) | range |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  for m in $models; do
    for t in ${THREADS:-16 2}; do
      ons=() offs=()
      for _ in $(seq "${ROUNDS:-5}"); do
        ons+=("$(median_ms "$t" "$m" on)")
        offs+=("$(median_ms "$t" "$m" off)")
      done
      python3 - "$m" "$t" "${ons[*]}" "${offs[*]}" <<'EOF'
import statistics, sys
m, t, on, off = sys.argv[1], sys.argv[2], [float(v) for v in sys.argv[3].split()], [float(v) for v in sys.argv[4].split()]
r = [a / b for a, b in zip(on, off)]
print(f"| {m} | {t} | {statistics.median(on):.2f} | {statistics.median(off):.2f} | **{statistics.median(r):.2f}** | {min(r):.2f}-{max(r):.2f} |")
EOF
    done
  done
} | tee "$out/ab_$switch.md"
