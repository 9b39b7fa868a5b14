#!/usr/bin/env bash
# The GPU test machine's check, in one command (../shared/GPU.md). Build the bundle here first
# (`bash scripts/bundle.sh`: dist/tessera with libtessera_cuda.so and tessera_cuda_tests); the bundle is
# over the device tool's 64 MiB, so pack it with the conformance suite and carry dist/pack:
#   mkdir -p dist/pack && tar czf dist/pack/tessera.tgz -C dist tessera &&
#     cp ../shared/conformance/onnx-node-tests.tgz dist/pack/
# then there, after `mkdir -p dist && tar xzf dist/pack/tessera.tgz -C dist`:
#   bash scripts/gpu-check.sh OUT_DIR [stage...]
# Stages (all by default, in this order; each fits the device tool's 10-minute calls):
#   unit       the CUDA backend's tests against the CPU's reference kernels (tessera_cuda_tests)
#   memcheck   the same under compute-sanitizer memcheck (no error allowed)
#   samples    the bundled sample models run and profiled with --backend cuda (and auto)
#   conformance the ONNX node conformance suite with --backend cuda: pass rate and how many cases ran
#              every node on the GPU (the suite's archive carried in dist/pack/onnx-node-tests.tgz)
#   models     the real models of tests/models exported there by PyTorch (TorchScript and dynamo
#              exporters), run with --backend cuda: --precision fp32 within 1e-4 of PyTorch, and the
#              default float16 within cosine 0.999 and 5e-2 (tests/models/check_models.py says why)
#   bench      Tessera against PyTorch eager and torch.compile (bench/gpu_inference.py); MODELS and
#              BATCHES choose the cells (each model takes a few minutes: split across calls)
#   profile    `tessera profile --backend cuda` of the benchmark models (MODELS, BATCHES as for bench):
#              per-layer device times and the time by operator (bench/gpu_profile.py) in profile_*.json/.md
#   cpu        the CPU engine against ONNX Runtime (bench/gpu_machine_cpu.sh): the CPU figures hold
#   accuracy   the elementwise accuracy sweep with the CUDA kernels' rows (tessera_accuracy): the table in
#              OUT_DIR/accuracy.md (docs/accuracy.md's form); fails when a row misses its bound
# Each stage writes OUT_DIR/<stage>.log; the script's exit status is the number of failed stages.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu-check.sh OUT_DIR [stage...]}
shift
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(unit memcheck samples cpu)
dist=$PWD/dist/tessera
bin=$dist/bin
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
failed=0
run_stage() {
  local name=$1
  shift
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "stage $name: exit $rc ($((SECONDS - t0)) s)"
  tail -n 25 "$out/$name.log"
  [ $rc -eq 0 ] || failed=$((failed + 1))
}
samples() {
  # The samples are made by the build; the bundle carries them in share/tessera/samples.
  for m in "$dist"/share/tessera/samples/*.onnx; do
    for backend in cuda auto; do
      "$bin/tessera" run "$m" --backend "$backend" -n 20 --no-progress || return 1
    done
    "$bin/tessera" profile "$m" --backend cuda -n 20 --no-progress --top 12 \
      --report "$out/profile_$(basename "$m" .onnx)_cuda.json" || return 1
    "$bin/tessera" run "$m" --backend cuda --device-io -n 20 --no-progress || return 1
  done
  sticky_error
}
# A sticky device error (an illegal address, injected before the node attn_probs with
# TESSERA_CUDA_FAULT_NODE: src/backends/cuda/fault_injection.h) ends the run with a clear error, never a
# hang or a crash; with CUDA_LAUNCH_BLOCKING=1 the message names the node.
sticky_error() {
  local m=$dist/share/tessera/samples/transformer_block.onnx text rc
  for blocking in 0 1; do
    text=$(CUDA_LAUNCH_BLOCKING=$blocking TESSERA_CUDA_FAULT_NODE=attn_probs timeout 120 \
      "$bin/tessera" run "$m" --backend cuda -n 3 --no-progress 2>&1)
    rc=$?
    echo "sticky error, CUDA_LAUNCH_BLOCKING=$blocking: exit $rc: $text" | tail -n 3
    if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [ $rc -ge 128 ]; then echo "FAIL: no clean error (exit $rc)"; return 1; fi
    echo "$text" | grep -qi "illegal" || { echo "FAIL: the message does not say what failed"; return 1; }
    if [ $blocking -eq 1 ]; then echo "$text" | grep -q "attn_probs" || { echo "FAIL: the node is not named"; return 1; }; fi
  done
}
conformance() {
  local dir=/tmp/tessera-conformance
  rm -rf "$dir" && mkdir -p "$dir" && tar xzf dist/pack/onnx-node-tests.tgz -C "$dir" || return 1
  "$bin/tessera_conformance_run" --dir "$dir/node" --backend cuda --jobs "$(nproc)" \
    --lists tests/conformance --list-failures "$out/conformance_failures.txt"
}
models() {
  local bad=0 work=/tmp/tessera-models
  for exporter in torchscript dynamo; do
    python3 tests/models/check_models.py --tessera "$bin/tessera" --work "$work-$exporter" --exporter "$exporter" \
      --backend cuda --precision fp32 --max-rel-error 1e-4 || bad=1
    python3 tests/models/check_models.py --tessera "$bin/tessera" --work "$work-$exporter" --exporter "$exporter" \
      --backend cuda --precision fp16 --max-rel-error 5e-2 --min-cosine 0.999 || bad=1
  done
  return $bad
}
bench() {
  python3 bench/gpu_inference.py --tessera "$bin/tessera" --models "${MODELS:-resnet50,mobilenet_v2,vit_b_16,bert_base,gpt2}" \
    --batches "${BATCHES:-1,32}" --markdown "$out/bench.md" --json "$out/bench.json"
}
profile() {
  python3 bench/gpu_profile.py --tessera "$bin/tessera" --models "${MODELS:-resnet50,mobilenet_v2,vit_b_16,bert_base,gpt2}" \
    --batches "${BATCHES:-1,32}" --out "$out"
}
accuracy() {
  "$bin/tessera_accuracy" --check --per-binade 64 --table "$out/accuracy.md"
}
for stage in "${stages[@]}"; do
  case $stage in
    unit) run_stage unit "$bin/tessera_cuda_tests" ;;
    # API errors are not reported: the out-of-memory test fails an allocation on purpose.
    memcheck) run_stage memcheck compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
      "$bin/tessera_cuda_tests" ;;
    samples) run_stage samples samples ;;
    conformance) run_stage conformance conformance ;;
    models) run_stage models models ;;
    bench) run_stage bench bench ;;
    profile) run_stage profile profile ;;
    accuracy) run_stage accuracy accuracy ;;
    cpu) run_stage cpu env OUT="$out" SKIP_MODELS="${SKIP_MODELS:-0}" ROUNDS="${ROUNDS:-3}" ITERATIONS="${ITERATIONS:-30}" \
      bash bench/gpu_machine_cpu.sh ;;
    *) echo "unknown stage '$stage'"; failed=$((failed + 1)) ;;
  esac
done
exit $failed
