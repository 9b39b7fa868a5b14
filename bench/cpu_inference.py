#!/usr/bin/env python3
"""Tessera's CPU engine side by side with ONNX Runtime (CPU) and PyTorch (CPU), in one run.

Usage: cpu_inference.py --tessera BIN [--models resnet50,bert_base,mobilenet_v2] [--threads N]
                        [--iterations 50] [--warmup 10] [--rounds 3] [--work DIR] [--markdown OUT.md]

Exports each model with tests/models/export_models.py (random weights, fixed seeds; skipped when
already exported in DIR), then times, on the same inputs and thread count:
  tessera      `tessera run MODEL --input-dir test_data_set_0 --threads N --json -o OUT`
  onnxruntime  bench/peers/run_peers.py (ORT_ENABLE_ALL, intra-op threads N)
  pytorch      bench/peers/run_peers.py (torch.set_num_threads(N), inference mode)
and checks Tessera's outputs against PyTorch's (max relative error). The engines take turns, ROUNDS
times per model: on a shared virtual machine a slow minute then hits every engine about equally, and a
ratio is taken within each round (Tessera's median over the peer's, measured a few seconds apart).
Prints one table with the median over rounds of each engine's median latency and of the per-round
ratios Tessera/ORT (with their range) and Tessera/PyTorch; below 1.0, Tessera is faster.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench", "peers"))
import run_peers  # noqa: E402


def export(models, work):
    script = os.path.join(REPO, "tests", "models", "export_models.py")
    subprocess.run([sys.executable, script, work, "--models", ",".join(models)], check=True)


def max_rel_error(out_dir, data_dir):
    worst = 0.0
    k = 0
    while os.path.exists(os.path.join(data_dir, f"output_{k}.npy")):
        want = np.load(os.path.join(data_dir, f"output_{k}.npy")).astype(np.float64)
        got = np.load(os.path.join(out_dir, f"output_{k}.npy")).astype(np.float64)
        if got.shape != want.shape:
            return float("inf")
        # max|got - want| / max|want|, as tests/models/check_models.py measures it
        worst = max(worst, float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30)))
        k += 1
    return worst


def run_tessera(binary, model_dir, args):
    out_dir = os.path.join(model_dir, "tessera_out")
    cmd = [binary, "run", os.path.join(model_dir, "model.onnx"), "--input-dir",
           os.path.join(model_dir, "test_data_set_0"), "--threads", str(args.threads), "-n", str(args.iterations),
           "--warmup", str(args.warmup), "--json", "--no-progress", "-o", out_dir]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"status": "error", "error": (p.stderr or p.stdout).strip()[-2000:]}
    j = json.loads(p.stdout)
    return {"status": "ok", "median_ms": j["latency_ms"]["median"], "mean_ms": j["latency_ms"]["mean"],
            "min_ms": j["latency_ms"]["min"], "peak_bytes": j["memory"]["peak_bytes"],
            "lower_bound_bytes": j["memory"]["planner_lower_bound_bytes"],
            "max_rel_error": max_rel_error(out_dir, os.path.join(model_dir, "test_data_set_0"))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--models", default="resnet50,bert_base,mobilenet_v2")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3, help="turns each engine takes per model")
    ap.add_argument("--work", default="/tmp/tessera-models")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    models = [m for m in args.models.split(",") if m]
    export(models, args.work)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    rows = []
    for m in models:
        d = os.path.join(args.work, m)
        rounds = []
        for r in range(args.rounds):
            print(f"cpu_inference: {m}: round {r + 1}/{args.rounds}: tessera ...", file=sys.stderr, flush=True)
            t = run_tessera(args.tessera, d, args)
            peers_json = os.path.join(d, "peers.json")
            run_peers.main(["--model-dir", d, "--threads", str(args.threads), "--iterations",
                            str(args.iterations), "--warmup", str(args.warmup), "--json", peers_json])
            with open(peers_json) as f:
                rounds.append((t, json.load(f)["peers"]))
        rows.append((m, rounds))

    def ms(r):
        return r["median_ms"] if r.get("status") == "ok" else None

    def over_rounds(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    def ratios(rounds, peer):
        out = []
        for t, peers in rounds:
            a, b = ms(t), ms(peers.get(peer, {}))
            if a is not None and b:
                out.append(a / b)
        return out

    lines = [f"CPU inference, batch 1, {args.threads} threads, median of {args.iterations} runs after "
             f"{args.warmup} warm-up; {platform.node()}, {os.cpu_count()} CPUs, "
             f"{time.strftime('%Y-%m-%d', time.gmtime())}", "",
             "| model | Tessera ms | ONNX Runtime ms | PyTorch ms | Tessera/ORT | Tessera/ORT range | Tessera/PyTorch | max rel err | peak / lower bound |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    lines[0] += f", {args.rounds} rounds (engines taking turns; medians over rounds)"
    for m, rounds in rows:
        tm = over_rounds([ms(t) for t, _ in rounds])
        om = over_rounds([ms(p.get("onnxruntime", {})) for _, p in rounds])
        pm = over_rounds([ms(p.get("pytorch", {})) for _, p in rounds])
        ort_r, pt_r = ratios(rounds, "onnxruntime"), ratios(rounds, "pytorch")
        t = next((t for t, _ in rounds if t.get("status") == "ok"), rounds[0][0])
        f = lambda v: f"{v:.2f}" if v is not None else "-"  # noqa: E731
        ratio = lambda rs: f"{statistics.median(rs):.2f}" if rs else "-"  # noqa: E731
        spread = f"{min(ort_r):.2f}-{max(ort_r):.2f}" if ort_r else "-"
        err = f"{t['max_rel_error']:.1e}" if t.get("status") == "ok" else t.get("error", "error")[:80]
        mem = (f"{t['peak_bytes'] / t['lower_bound_bytes']:.2f}" if t.get("status") == "ok" and t["lower_bound_bytes"]
               else "-")
        lines.append(f"| {m} | {f(tm)} | {f(om)} | {f(pm)} | {ratio(ort_r)} | {spread} | {ratio(pt_r)} | {err} | {mem} |")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
