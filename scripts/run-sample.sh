#!/usr/bin/env bash
# Tessera's main job on the bundled sample models: build, then show and type-check them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
for m in build/samples/denoiser.onnx build/samples/transformer_block.onnx; do
  echo
  ./build/src/tessera info "$m"
  ./build/src/tessera check "$m"
done
