#!/usr/bin/env bash
# Installs what Tessera needs to build and test on Debian 12, from Debian's own packages.
# Run as root (or with sudo). Packages already installed are left alone, so a second run is quick.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  chromium                            # the studio's browser tests and benchmark (Playwright drives it)
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
# Node.js and npm build the studio's web app; installed from Debian only where the machine has none.
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: every Debian package is installed"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The studio web app's npm packages (the network step; the build itself runs offline), exactly as
# web/package-lock.json pins them; skipped when node_modules was installed from this very lock file.
web="$(cd "$(dirname "$0")/../web" && pwd)"
lock_sum=$(sha256sum "$web/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$web/node_modules/.tessera-lock.sha256" 2>/dev/null)" != "$lock_sum" ]; then
  echo "install-deps: npm ci in web/"
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$lock_sum" >"$web/node_modules/.tessera-lock.sha256"
fi
