#!/usr/bin/env python3
"""ONNX Runtime's per-layer times on a model, to set beside `tessera profile` on the same model.

Usage: ort_layers.py --model-dir DIR [--threads N] [--iterations 20] [--warmup 5] [--top 25]

DIR as for run_peers.py (model.onnx, test_data_set_0/input_<k>.npy). ONNX Runtime runs with the same
options as run_peers.py plus its profiler; each node's kernel time is the median over the timed runs.
Prints the sum per operator type and the costliest nodes with their output shapes, so a Tessera layer
can be matched with ORT's by shape (ORT renames the nodes it fuses or moves to NCHWc).
"""
import argparse
import collections
import json
import os
import statistics
import sys

import numpy as np


def load_inputs(model_dir):
    data, out, k = os.path.join(model_dir, "test_data_set_0"), [], 0
    while os.path.exists(os.path.join(data, f"input_{k}.npy")):
        out.append(np.load(os.path.join(data, f"input_{k}.npy")))
        k += 1
    if not out:
        raise SystemExit(f"ort_layers: no test_data_set_0/input_0.npy in {model_dir}")
    return out


def node_times(trace, runs):
    """{node name: (op type, output shapes, [µs per run])} from the kernel events of the last `runs` runs."""
    per_node = collections.OrderedDict()
    for ev in trace:
        if ev.get("cat") != "Node" or not ev.get("name", "").endswith("_kernel_time"):
            continue
        name = ev["name"][: -len("_kernel_time")]
        args = ev.get("args", {})
        shapes = [list(d.values())[0] for d in args.get("output_type_shape", []) if d]
        entry = per_node.setdefault(name, (args.get("op_name", "?"), shapes, []))
        entry[2].append(ev["dur"])
    return {n: (op, shp, ts[-runs:]) for n, (op, shp, ts) in per_node.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_profiling = True
    so.profile_file_prefix = "/tmp/ort_layers"
    sess = ort.InferenceSession(os.path.join(args.model_dir, "model.onnx"), so,
                                providers=["CPUExecutionProvider"])
    feeds = dict(zip([i.name for i in sess.get_inputs()], load_inputs(args.model_dir)))
    for _ in range(args.warmup + args.iterations):
        sess.run(None, feeds)
    path = sess.end_profiling()
    with open(path) as f:
        trace = json.load(f)
    os.remove(path)

    nodes = node_times(trace, args.iterations)
    med = {n: statistics.median(ts) for n, (_, _, ts) in nodes.items() if ts}
    total = sum(med.values())
    by_op = collections.Counter()
    for n, us in med.items():
        by_op[nodes[n][0]] += us
    print(f"ONNX Runtime {ort.__version__}, {args.threads} thread(s): {len(med)} nodes, sum of medians "
          f"{total / 1e3:.3f} ms")
    print(f"{'op':<28} {'ms':>8} {'%':>6}")
    for op, us in by_op.most_common():
        print(f"{op:<28} {us / 1e3:>8.3f} {100 * us / total:>6.1f}")
    print(f"\n{'#':>3} {'node':<40} {'op':<20} {'ms':>8}  output")
    ranked = sorted(med.items(), key=lambda kv: -kv[1])[: args.top]
    order = {n: i for i, n in enumerate(nodes)}
    for n, us in ranked:
        op, shapes, _ = nodes[n]
        print(f"{order[n]:>3} {n[:40]:<40} {op[:20]:<20} {us / 1e3:>8.3f}  {shapes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
