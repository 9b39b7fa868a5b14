#!/usr/bin/env bash
# Tessera's main job on the bundled sample models: build, then show, type-check, run and profile them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
for m in build/samples/denoiser.onnx build/samples/transformer_block.onnx; do
  echo
  ./build/src/tessera info "$m"
  ./build/src/tessera check "$m"
  echo
  ./build/src/tessera run "$m" --iterations 10 --output-dir "build/samples/$(basename "$m" .onnx).out"
  echo
  ./build/src/tessera profile "$m" --iterations 10 --top 10 --report "build/samples/$(basename "$m" .onnx).profile.json"
  # And on the GPU, where there is one (nvidia-smi lists it): float16 by default, per-layer device times.
  if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU; then
    echo
    ./build/src/tessera run "$m" --backend cuda --iterations 10
    echo
    ./build/src/tessera profile "$m" --backend cuda --iterations 10 --top 10 \
      --report "build/samples/$(basename "$m" .onnx).cuda.profile.json"
  fi
done
# The studio on the denoiser, only when someone is at a terminal: scripted runs and CI do not block.
if [ -t 0 ]; then
  echo
  echo "Starting the studio on build/samples/denoiser.onnx (Ctrl+C stops it)"
  ./build/src/tessera studio build/samples/denoiser.onnx || true
fi
