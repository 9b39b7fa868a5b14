#!/usr/bin/env bash
# Run on the GPU test machine (../shared/GPU.md), from the checkout, after scripts/bundle.sh made
# dist/tessera here and it was carried along:
#   1. Tessera vs ONNX Runtime 1.30 and PyTorch on the machine's CPU cores (bench/cpu_inference.py);
#      then the same pinned to 2 cores (TWO_CORES=0 skips it);
#   2. (unless SKIP_MODELS=1) the real models exported there by PyTorch 2.11, with its TorchScript and its dynamo (opset 18)
#      exporters, run by Tessera and compared with PyTorch (tests/models/check_models.py).
# Results go to $OUT (the device tool brings that folder back).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/dist/tessera/bin/tessera
out=${OUT:-/tmp/tessera-out}
threads=${THREADS:-$(nproc)}
mkdir -p "$out"
"$bin" --version
python3 bench/cpu_inference.py --tessera "$bin" --threads "$threads" --iterations "${ITERATIONS:-50}" --rounds "${ROUNDS:-3}" \
  --warmup 10 --work /tmp/tessera-bench --markdown "$out/cpu_inference.md" >"$out/cpu_inference.log" 2>&1
echo "cpu_inference: exit $?"
cat "$out/cpu_inference.md"
# The same on two cores (every engine pinned to CPUs 0-1, two threads): the build machine's size, where
# ONNX Runtime cannot be installed.
if [ "${TWO_CORES:-1}" = 1 ]; then
  taskset -c 0,1 python3 bench/cpu_inference.py --tessera "$bin" --threads 2 --iterations "${ITERATIONS:-50}" --rounds "${ROUNDS:-3}" \
    --warmup 10 --work /tmp/tessera-bench --markdown "$out/cpu_inference_2cores.md" >"$out/cpu_inference_2cores.log" 2>&1
  echo "cpu_inference on 2 cores: exit $?"
  cat "$out/cpu_inference_2cores.md"
fi
[ "${SKIP_MODELS:-0}" = 1 ] && exporters="" || exporters="torchscript dynamo"
for exporter in $exporters; do
  python3 tests/models/check_models.py --tessera "$bin" --work "/tmp/tessera-models-$exporter" \
    --exporter "$exporter" >"$out/models_$exporter.log" 2>&1
  echo "models ($exporter exporter): exit $?"
  grep -E "^(PASS|FAIL)|models:" "$out/models_$exporter.log"
done
# Per-layer profiles of the benchmark models, for the next round of kernel work.
for m in resnet50 mobilenet_v2 bert_base; do
  "$bin" profile "/tmp/tessera-bench/$m/model.onnx" --input-dir "/tmp/tessera-bench/$m/test_data_set_0" \
    --threads "$threads" -n 20 --warmup 5 --no-progress --top 15 --report "$out/profile_$m.json" \
    >"$out/profile_$m.txt" 2>&1
  tail -n 22 "$out/profile_$m.txt"
done
