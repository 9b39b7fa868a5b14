#!/usr/bin/env bash
# Model-core benchmarks, side by side with their peers, printing ratios:
#  1. loading a 1 GiB single-file model: Tessera vs reading the file vs Python's onnx.load
#  2. checking a 50,000-node transformer-like graph (goal: under 200 ms)
#  3. one studio edit of that graph answered with its diagnostics (goal: well under 100 ms)
# Usage: bash bench/model_core.sh [RUNS]   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
bin=build/bench/model_core_bench
work=${TMPDIR:-/tmp}/tessera-bench
mkdir -p "$work"
model=$work/large_1gib.onnx
[ -f "$model" ] || "$bin" make-large "$model" 1024
size=$(stat -c %s "$model")
echo "model: $model ($((size / 1048576)) MiB), runs: $runs, machine: $(nproc) cores, $(date -u +%F)"

med() { awk '/median/ {print $3}'; }
t_read=$("$bin" read "$model" "$runs" | med)
t_load=$("$bin" load "$model" "$runs" | med)
t_touch=$("$bin" load-touch "$model" "$runs" | med)
t_py=$(/usr/bin/python3 - "$model" "$runs" <<'PY'
import sys, time, onnx
path, runs = sys.argv[1], int(sys.argv[2])
onnx.load(path)
ts = []
for _ in range(runs):
    t = time.perf_counter(); onnx.load(path); ts.append(time.perf_counter() - t)
ts.sort(); print(ts[len(ts) // 2])
PY
)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a / b}'; }
printf "%-36s %10s %14s\n" "load 1 GiB model (warm page cache)" "median s" "time / tessera"
printf "%-36s %10.4f %14s\n" "tessera load + touch every weight" "$t_touch" "1.00x"
printf "%-36s %10.4f %14s\n" "tessera load (weights mapped)" "$t_load" "$(ratio "$t_load" "$t_touch")"
printf "%-36s %10.4f %14s\n" "read the file into memory" "$t_read" "$(ratio "$t_read" "$t_touch")"
printf "%-36s %10.4f %14s\n" "python onnx.load (onnx 1.12)" "$t_py" "$(ratio "$t_py" "$t_touch")"

out=$("$bin" check 1316 "$runs")
nodes=$(echo "$out" | awk '/nodes/ {print $2}')
t_check=$(echo "$out" | med)
printf "%-36s %10.4f   (%s nodes, goal < 0.200 s)\n" "check transformer graph" "$t_check" "$nodes"
# 3. one studio edit (a rename) answered with its diagnostics, incremental (goal: well under 100 ms)
t_edit=$("$bin" studio-edit 1316 "$runs" | med)
printf "%-36s %10.4f   (same graph, goal < 0.100 s)\n" "studio edit with diagnostics" "$t_edit"
