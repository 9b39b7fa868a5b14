#!/usr/bin/env bash
# Makes a relocatable deployment folder, dist/tessera: bin/tessera (stripped) and lib/ with the shared
# libraries it uses that a Linux machine without Debian's packages may lack (protobuf, fmt, oneDNN,
# OpenMP, libpng, libjpeg, OpenCL loader). glibc and libstdc++ are the target's own. This is how Tessera
# gets to the GPU test machine (../shared/GPU.md) and to any remote host.
#   bash scripts/bundle.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist/tessera}
log=$(mktemp)
bash scripts/build.sh >"$log" 2>&1 || { tail -n 40 "$log"; echo "bundle: the build failed (log above)" >&2; exit 1; }
rm -f "$log"
rm -rf "$out"
cmake --install build --prefix "$out" --strip >/dev/null
mkdir -p "$out/lib"
ldd "$out/bin/tessera" | awk '/=> \// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|ld-linux*|libpthread.so.*|libdl.so.*|librt.so.*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
du -sh "$out" | awk '{print "bundle: " $2 " (" $1 ")"}'
