#!/usr/bin/env python3
"""Times Tessera's peers on a model made by tests/models/export_models.py, on the same inputs.

Usage: run_peers.py --model-dir DIR [--threads N] [--iterations 50] [--warmup 10] [--json OUT.json]
                    [--peers onnxruntime,pytorch]

DIR is OUT_DIR/<name> of export_models.py: model.onnx, test_data_set_0/input_<k>.npy, output_<k>.npy.
  onnxruntime: DIR/model.onnx on the CPU execution provider, intra_op_num_threads=N,
               inter_op_num_threads=1, sequential execution, graph optimisation ORT_ENABLE_ALL.
  pytorch:     the same model rebuilt from export_models.build_model() (same seed, so the same
               weights as exported), torch.set_num_threads(N), under torch.inference_mode().
Each peer's outputs are compared with output_<k>.npy before timing. A peer that is not installed
is reported as "not installed"; one that fails, as "error". Latency: wall time of one call, in ms.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "models"))

PEERS = ["onnxruntime", "pytorch"]
RTOL, ATOL = 1e-3, 1e-4   # outputs against output_<k>.npy: different kernels, same float32 math


def load_test_data(model_dir):
    data = os.path.join(model_dir, "test_data_set_0")

    def series(prefix):
        out, k = [], 0
        while os.path.exists(os.path.join(data, f"{prefix}_{k}.npy")):
            out.append(np.load(os.path.join(data, f"{prefix}_{k}.npy")))
            k += 1
        return out
    inputs, outputs = series("input"), series("output")
    if not inputs or not outputs:
        raise SystemExit(f"run_peers: no test_data_set_0/input_0.npy or output_0.npy in {model_dir}")
    return inputs, outputs


def compare(got, expected):
    """Largest absolute difference per output, and whether all are within RTOL/ATOL."""
    if len(got) != len(expected):
        return {"ok": False, "why": f"{len(got)} outputs, expected {len(expected)}"}
    diffs, ok = [], True
    for g, e in zip(got, expected):
        g = np.asarray(g, dtype=np.float32)
        if g.shape != e.shape:
            return {"ok": False, "why": f"output shape {list(g.shape)}, expected {list(e.shape)}"}
        diffs.append(float(np.max(np.abs(g - e))) if e.size else 0.0)
        ok = ok and bool(np.allclose(g, e, rtol=RTOL, atol=ATOL))
    return {"ok": ok, "max_abs_diff": diffs}


def time_calls(fn, iterations, warmup):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(iterations):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return {"median_ms": statistics.median(ts), "mean_ms": statistics.fmean(ts), "min_ms": min(ts),
            "max_ms": max(ts), "stdev_ms": statistics.stdev(ts) if len(ts) > 1 else 0.0}


def run_onnxruntime(model_dir, inputs, expected, args):
    try:
        import onnxruntime as ort
    except ImportError:
        return {"status": "not installed"}
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    t = time.perf_counter()
    sess = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), so, providers=["CPUExecutionProvider"])
    t_load = time.perf_counter() - t
    names = [i.name for i in sess.get_inputs()]
    if len(names) != len(inputs):
        return {"status": "error", "version": ort.__version__,
                "error": f"model has {len(names)} inputs, test data {len(inputs)}"}
    feeds = dict(zip(names, inputs))
    check = compare(sess.run(None, feeds), expected)
    res = {"status": "ok", "version": ort.__version__, "providers": sess.get_providers(),
           "session_s": round(t_load, 3), "outputs_match": check}
    res.update(time_calls(lambda: sess.run(None, feeds), args.iterations, args.warmup))
    return res


def run_pytorch(model_dir, inputs, expected, args, name):
    try:
        import torch
        import export_models
    except ImportError as e:
        return {"status": "not installed", "why": str(e)}
    if name not in export_models.ALL_MODELS:
        return {"status": "error", "version": torch.__version__,
                "error": f"'{name}' is not a model export_models.py knows"}
    torch.set_num_threads(args.threads)
    model = export_models.build_model(name)
    tensors = tuple(torch.from_numpy(x) for x in inputs)
    check = compare(export_models.run_model(model, tensors), expected)
    res = {"status": "ok", "version": torch.__version__, "outputs_match": check}
    if not check["ok"]:   # e.g. another torch version initialises differently: still time it, but say so
        print(f"run_peers: warning: pytorch outputs differ from the exported ones: {check}", file=sys.stderr)

    def call():
        with torch.inference_mode():
            model(*tensors)
    res.update(time_calls(call, args.iterations, args.warmup))
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--model-dir", required=True, metavar="DIR")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--json", metavar="OUT.json", help="also write the results here")
    ap.add_argument("--peers", default=",".join(PEERS), help="comma-separated (default: %(default)s)")
    args = ap.parse_args(argv)
    if args.threads < 1 or args.iterations < 1 or args.warmup < 0:
        ap.error("--threads and --iterations must be at least 1, --warmup at least 0")
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    bad = [p for p in peers if p not in PEERS]
    if bad:
        ap.error(f"unknown peer(s): {', '.join(bad)} (known: {', '.join(PEERS)})")

    model_dir = os.path.abspath(args.model_dir)
    meta = {}
    if os.path.exists(os.path.join(model_dir, "export.json")):
        with open(os.path.join(model_dir, "export.json")) as f:
            meta = json.load(f)
    name = meta.get("model", os.path.basename(model_dir.rstrip("/")))
    inputs, expected = load_test_data(model_dir)

    report = {
        "model": name, "model_dir": model_dir, "threads": args.threads,
        "iterations": args.iterations, "warmup": args.warmup,
        "input_shapes": [list(x.shape) for x in inputs],
        "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                    "python": platform.python_version()},
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "peers": {},
    }
    for peer in peers:
        print(f"run_peers: {name}: {peer} ...", file=sys.stderr, flush=True)
        try:
            if peer == "onnxruntime":
                res = run_onnxruntime(model_dir, inputs, expected, args)
            else:
                res = run_pytorch(model_dir, inputs, expected, args, name)
        except Exception as e:  # a failing peer does not stop the others
            res = {"status": "error", "error": f"{type(e).__name__}: {e}"}
        report["peers"][peer] = res

    print(f"{name}, {args.threads} thread(s), {args.iterations} iterations after {args.warmup} warm-up, "
          f"inputs {report['input_shapes']}")
    print(f"{'peer':<12} {'version':<14} {'median ms':>10} {'mean ms':>10} {'min ms':>10}  outputs")
    for peer, r in report["peers"].items():
        if r["status"] != "ok":
            print(f"{peer:<12} {r.get('version', '-'):<14} {r['status']}"
                  + (f": {r['error']}" if "error" in r else ""))
            continue
        m = r["outputs_match"]
        match = ("match" if m["ok"] else "DIFFER") + (
            f" (max |diff| {max(m['max_abs_diff']):.2g})" if "max_abs_diff" in m else f" ({m['why']})")
        print(f"{peer:<12} {r['version']:<14} {r['median_ms']:>10.2f} {r['mean_ms']:>10.2f} {r['min_ms']:>10.2f}  {match}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    return 0 if all(r["status"] in ("ok", "not installed") for r in report["peers"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
