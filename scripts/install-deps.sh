#!/usr/bin/env bash
# Installs what Tessera needs to build and test on Debian 12, from Debian's own packages.
# Run as root (or with sudo). Packages already installed are left alone, so a second run is quick.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libprotobuf-dev protobuf-compiler   # the ONNX file format
  libfmt-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev                         # oneDNN: fast CPU kernels (Conv, MatMul...)
  libonnx-dev                         # test oracle: ONNX 1.12 operator schemas
  clang libclang-rt-14-dev            # sanitizer and libFuzzer builds
  python3 python3-onnx python3-numpy  # benchmark peers (onnx.load)
  libpng-dev libjpeg-dev              # image inputs of tessera run
  libcpp-httplib-dev                  # the studio's HTTP server (tessera studio, src/server)
  python3-torch python3-torchvision   # reference outputs of real models (tests/models)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
