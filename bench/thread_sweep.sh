#!/usr/bin/env bash
# How Tessera and ONNX Runtime scale with threads on the GPU test machine's CPU: median latency of
# each model at 1, 2, 4, 8 and 16 threads, Tessera also with OMP_WAIT_POLICY=active (OpenMP threads
# spin between kernels instead of sleeping, as ONNX Runtime's pool does by default). Run after
# bench/gpu_machine_cpu.sh exported the models into /tmp/tessera-bench.
#   bash bench/thread_sweep.sh [MODELS...]   -> markdown table on stdout
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/dist/tessera/bin/tessera
work=/tmp/tessera-bench
models=${*:-mobilenet_v2 resnet50 bert_base}
median() {  # tessera run's JSON -> median ms
  python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["latency_ms"]["median"])' 2>/dev/null || echo "-"
}
echo "| model | threads | Tessera ms | Tessera, OMP_WAIT_POLICY=active ms | ONNX Runtime ms |"
echo "| --- | ---: | ---: | ---: | ---: |"
for m in $models; do
  dir=$work/$m
  for t in 1 2 4 8 16; do
    args=("$dir/model.onnx" --input-dir "$dir/test_data_set_0" --threads "$t" -n 30 --warmup 10 --json --no-progress)
    tes=$("$bin" run "${args[@]}" | median)
    act=$(OMP_WAIT_POLICY=active "$bin" run "${args[@]}" | median)
    ort=$(python3 bench/peers/run_peers.py --model-dir "$dir" --threads "$t" --iterations 30 --warmup 10 \
      --peers onnxruntime --json /tmp/ort_${m}_${t}.json >/dev/null 2>&1 &&
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.2f" % r["peers"]["onnxruntime"]["median_ms"])' \
        "/tmp/ort_${m}_${t}.json" 2>/dev/null || echo "-")
    echo "| $m | $t | $tes | $act | $ort |"
  done
done
