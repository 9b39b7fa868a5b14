#!/usr/bin/env bash
# Where Tessera loses to ONNX Runtime, layer by layer, on the GPU test machine's CPU (after
# scripts/bundle.sh made dist/tessera and it was carried along). For each model: the CPU's topology,
# `tessera profile` and ORT's per-node times (bench/peers/ort_layers.py) at THREADS threads, the same
# profile with OpenMP threads bound to cores, and oneDNN's own per-primitive log (implementation and
# time of each convolution). Files go to $OUT.
#   THREADS=16 bash bench/layer_probe.sh [MODELS...]
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/dist/tessera/bin/tessera
out=${OUT:-/tmp/tessera-out}
work=/tmp/tessera-bench
threads=${THREADS:-$(nproc)}
models=${*:-resnet50 mobilenet_v2}
mkdir -p "$out"
lscpu >"$out/lscpu.txt"
python3 tests/models/export_models.py "$work" --models "$(echo "$models" | tr ' ' ,)" >/dev/null 2>&1
for m in $models; do
  dir=$work/$m
  args=("$dir/model.onnx" --input-dir "$dir/test_data_set_0" --threads "$threads" -n 30 --warmup 10
    --no-progress --top "${TOP:-25}")
  {
    echo "== tessera profile, $threads threads"
    "$bin" profile "${args[@]}"
    echo "== tessera profile, OMP_PROC_BIND=close OMP_PLACES=cores"
    OMP_PROC_BIND=close OMP_PLACES=cores "$bin" profile "${args[@]}" | tail -n 4
    echo "== onnxruntime"
    python3 bench/peers/ort_layers.py --model-dir "$dir" --threads "$threads" --iterations 30 --warmup 10 --top "${TOP:-25}"
  } >"$out/layers_$m.txt" 2>&1
  # oneDNN's log: the last run's lines only (creation lines and warm-up runs dropped).
  ONEDNN_VERBOSE=1 "$bin" run "$dir/model.onnx" --input-dir "$dir/test_data_set_0" --threads "$threads" \
    -n 3 --warmup 2 --no-progress 2>&1 | grep '^onednn_verbose,exec' >"$out/dnnl_$m.log"
done
