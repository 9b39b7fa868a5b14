#!/usr/bin/env python3
"""Tessera's CUDA engine side by side with PyTorch eager and torch.compile, in one run (GPU test machine).

Usage: gpu_inference.py --tessera BIN [--models resnet50,mobilenet_v2,vit_b_16,bert_base,gpt2]
                        [--batches 1,32] [--modes eager,default,reduce-overhead] [--iterations 50]
                        [--warmup 10] [--work DIR] [--markdown OUT.md] [--json OUT.json]

For each model and batch size it
  1. builds the model with tests/models/export_models.py (random weights, fixed seeds), exports it to
     ONNX with PyTorch's dynamo exporter (float32, static shapes) and keeps PyTorch's float32 outputs;
  2. times PyTorch in float16 on the GPU: eager, torch.compile() and torch.compile(mode="reduce-overhead"),
     each the median of ITERATIONS runs timed with CUDA events after WARMUP runs;
  3. times `tessera run MODEL --backend cuda --device-io` (its default precision: float16 with float32
     accumulation; the median of its timed runs with the inputs already in GPU memory and the outputs
     left there, as PyTorch's timing has them), and again without --device-io (the host-to-device copy
     of the inputs and the copy of the outputs back included: the "with copies" column), and compares its
     outputs with PyTorch's float32 ones (cosine similarity and max|diff|/max|ref| per output);
  4. counts the model's FLOPs (torch.utils.flop_counter) and reports achieved TFLOP/s beside the
     measured peak of a large float16 matrix product.
Prints one table: ms per engine, the ratio reduce-overhead / Tessera (above 1: Tessera is faster), the
share of nodes on the GPU, and the accuracy columns; --markdown writes it for docs/.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "models"))
import export_models as em  # noqa: E402

DEFAULT_MODELS = ["resnet50", "mobilenet_v2", "vit_b_16", "bert_base", "gpt2"]


def log(msg):
    print(msg, flush=True)


def time_cuda(fn, iterations, warmup):
    """Median milliseconds of fn() over `iterations` runs, each timed with CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def peak_fp16_tflops():
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    ms = time_cuda(lambda: a @ b, 10, 3)
    return 2 * n ** 3 / ms / 1e9


def count_flops(model, inputs):
    """The FLOPs of one run. Under no_grad an eval-mode nn.MultiheadAttention (ViT) takes PyTorch's fused
    fast path, aten::_native_multi_head_attention, which the flop counter does not count: ViT-B/16 then
    counts 22.5 GFLOP an image instead of 35.2 (its Q/K/V and output projections and attention left out).
    With grad enabled the same module runs the plain ops, which are counted (as the exporter does)."""
    from torch.utils.flop_counter import FlopCounterMode
    uses_mha = any(isinstance(m, torch.nn.MultiheadAttention) for m in model.modules())
    with (torch.enable_grad() if uses_mha else torch.no_grad()), FlopCounterMode(display=False) as fc:
        model(*inputs)
    return fc.get_total_flops()


def time_torch(name, batch, modes, iterations, warmup):
    """PyTorch float16 on the GPU: {mode: ms}, and the FLOPs of one run."""
    model = em.build_model(name).half().cuda().eval()
    inputs = tuple(x.cuda() if not x.is_floating_point() else x.half().cuda() for x in em.make_inputs(name, batch))
    flops = count_flops(model, inputs)
    out = {}
    for mode in modes:
        torch._dynamo.reset()
        if mode == "eager":
            fn = model
        elif mode == "default":
            fn = torch.compile(model)
        else:
            fn = torch.compile(model, mode=mode)
        t0 = time.perf_counter()
        with torch.no_grad():
            out[mode] = time_cuda(lambda: fn(*inputs), iterations, warmup)
        log(f"  torch {mode}: {out[mode]:.3f} ms (with compile and warm-up {time.perf_counter() - t0:.0f} s)")
    del model
    torch.cuda.empty_cache()
    return out, flops


def accuracy(out_dir, data_dir):
    """Per output: (cosine similarity, max|got - want| / max|want|) against PyTorch's float32."""
    result = []
    k = 0
    while os.path.exists(os.path.join(data_dir, f"output_{k}.npy")):
        want = np.load(os.path.join(data_dir, f"output_{k}.npy")).astype(np.float64).ravel()
        got_path = os.path.join(out_dir, f"output_{k}.npy")
        if not os.path.exists(got_path):
            return None
        got = np.load(got_path).astype(np.float64).ravel()
        if got.shape != want.shape:
            return None
        cos = float(got @ want / max(np.linalg.norm(got) * np.linalg.norm(want), 1e-300))
        rel = float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30))
        result.append((cos, rel))
        k += 1
    return result


def run_tessera(binary, model_dir, iterations, warmup, precision, device_io=True):
    out_dir = os.path.join(model_dir, f"tessera_{precision or 'default'}{'_dio' if device_io else ''}")
    cmd = [binary, "run", os.path.join(model_dir, "model.onnx"), "--backend", "cuda", "--input-dir",
           os.path.join(model_dir, "test_data_set_0"), "-n", str(iterations), "--warmup", str(warmup),
           "--json", "--no-progress", "-o", out_dir]
    if precision:
        cmd += ["--precision", precision]
    if device_io:
        cmd += ["--device-io"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[-1500:]}
    j = json.loads(p.stdout)
    backends = j.get("backends", [])
    total = sum(b["nodes"] for b in backends) or 1
    gpu = sum(b["nodes"] for b in backends if b["backend"] != "cpu")
    return {"ms": j["latency_ms"]["median"], "gpu_share": gpu / total, "precision": j.get("precision"),
            "replays": j.get("device_graph_replays", 0),
            "replay_note": j.get("device_graph_note", ""),
            "accuracy": accuracy(out_dir, os.path.join(model_dir, "test_data_set_0"))}


def export(name, batch, work):
    d = os.path.join(work, f"b{batch}")
    if not os.path.exists(os.path.join(d, name, "export.json")):
        t0 = time.perf_counter()
        em.export_one(name, d, batch, 18, exporter="dynamo")
        log(f"  exported {name} batch {batch} in {time.perf_counter() - t0:.0f} s")
    return os.path.join(d, name)


def fmt_acc(acc):
    if not acc:
        return "-"
    return f"cos {min(c for c, _ in acc):.5f}, rel {max(r for _, r in acc):.1e}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--modes", default="eager,default,reduce-overhead")
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--work", default="/tmp/tessera-gpu-bench")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    ap.add_argument("--fp32-check", action="store_true", help="also run Tessera with --precision fp32")
    args = ap.parse_args()
    modes = args.modes.split(",")
    torch.backends.cuda.matmul.allow_tf32 = False
    gpu = torch.cuda.get_device_name()
    peak = peak_fp16_tflops()
    log(f"{gpu}, torch {torch.__version__}, measured float16 matrix-product peak {peak:.0f} TFLOP/s")
    rows = []
    for name in args.models.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            log(f"{name} batch {batch}")
            model_dir = export(name, batch, args.work)
            torch_ms, flops = time_torch(name, batch, modes, args.iterations, args.warmup)
            t = run_tessera(args.tessera, model_dir, args.iterations, args.warmup, None)
            row = {"model": name, "batch": batch, "torch_ms": torch_ms, "gflop": flops / 1e9, "tessera": t,
                   "tessera_copies": run_tessera(args.tessera, model_dir, args.iterations, args.warmup, None, False)}
            if args.fp32_check:
                row["tessera_fp32"] = run_tessera(args.tessera, model_dir, 5, 2, "fp32")
            log(f"  tessera: {json.dumps(t)[:600]}")
            rows.append(row)
    lines = [f"GPU: {gpu}; torch {torch.__version__}; float16 peak measured {peak:.0f} TFLOP/s; "
             f"{time.strftime('%Y-%m-%d')}", "",
             "| model | batch | " + " | ".join(f"torch {m} ms" for m in modes) +
             " | Tessera ms | reduce-overhead / Tessera | Tessera TFLOP/s | nodes on GPU | Tessera fp16 vs torch fp32 "
             "| Tessera ms with copies |",
             "| --- | --- | " + " | ".join("---" for _ in modes) + " | --- | --- | --- | --- | --- | --- |"]
    ratios = []
    for r in rows:
        t = r["tessera"]
        ms = t.get("ms")
        ro = r["torch_ms"].get("reduce-overhead")
        ratio = ro / ms if ms and ro else None
        if ratio:
            ratios.append(ratio)
        tflops = r["gflop"] / ms if ms else None
        copies = r.get("tessera_copies", {}).get("ms")
        with_copies = f" {copies:.3f} |" if copies else " - |"
        lines.append(f"| {r['model']} | {r['batch']} | " +
                     " | ".join(f"{r['torch_ms'][m]:.3f}" for m in modes) +
                     (f" | {ms:.3f} | {ratio:.2f} | {tflops:.1f} | {100 * t['gpu_share']:.0f}%{'' if t.get('replays') else ' (no graph replay)'} | {fmt_acc(t['accuracy'])} |"
                      if ms else f" | error | - | - | - | {t.get('error', '')[:120]} |") + with_copies)
    notes = [f"- {r['model']} batch {r['batch']}: not replayed as a CUDA graph: {r['tessera']['replay_note']}"
             for r in rows if r["tessera"].get("ms") and r["tessera"].get("replay_note")]
    if notes:
        lines += [""] + notes
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        lines += ["", f"geometric mean of reduce-overhead / Tessera over {len(ratios)} cells: {geo:.2f}"]
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": gpu, "peak_tflops": peak, "rows": rows}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
