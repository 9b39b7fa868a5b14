#!/usr/bin/env python3
"""Tessera's fp16 conversion and sanitize side by side with onnxruntime's float16 converter and
onnxscript's optimizer, on the GPU test machine (onnx 1.23, onnxruntime 1.30, PyTorch 2.11; see
docs/transforms.md). Counts nodes and Casts, times each tool, and measures the output error against
the float32 model with onnxruntime's CPU execution provider on seeded random inputs.

  python3 bench/transforms_peers.py --tessera dist/tessera/bin/tessera --work /tmp/peers \
      [--model FILE.onnx]... [--torchvision resnet50,mobilenet_v2] [--bert]
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort


def count(model, op=None):
    n = 0
    def walk(g):
        nonlocal n
        for node in g.node:
            if op is None or node.op_type == op:
                n += 1
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sub in a.graphs:
                    walk(sub)
    walk(model.graph)
    for f in model.functions:
        for node in f.node:
            if op is None or node.op_type == op:
                n += 1
    return n


def feeds_for(path, seed=0):
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    feeds = {}
    types = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(float16)": np.float16,
             "tensor(int32)": np.int32, "tensor(bool)": np.bool_}
    for i in s.get_inputs():
        shape = [d if isinstance(d, int) and d > 0 else (1 if "batch" in str(d).lower() or d is None else 8)
                 for d in i.shape]
        t = types.get(i.type, np.float32)
        if t in (np.int64, np.int32):
            feeds[i.name] = rng.integers(0, 100, size=shape).astype(t)
        elif t == np.bool_:
            feeds[i.name] = np.ones(shape, dtype=bool)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(t)
    return feeds


def run(path, feeds):
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return [np.asarray(o, dtype=np.float64) for o in s.run(None, feeds)]


def errors(ref, got):
    worst_abs, worst_rel = 0.0, 0.0
    for a, b in zip(ref, got):
        d = np.abs(a - b)
        worst_abs = max(worst_abs, float(np.nanmax(d)) if d.size else 0.0)
        worst_rel = max(worst_rel, float(np.nanmax(d / (np.abs(a) + 1e-3))) if d.size else 0.0)
    return worst_abs, worst_rel


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def tessera(binary, *args):
    t = time.perf_counter()
    r = subprocess.run([binary, *args], capture_output=True, text=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip() or r.stdout.strip())
    return dt


def compare(name, path, binary, work, rows):
    base = onnx.load(path)
    feeds = feeds_for(path)
    ref = run(path, feeds)
    row = {"model": name, "nodes": count(base)}
    # fp16: onnxruntime's converter vs tessera, both keeping float32 inputs and outputs.
    try:
        from onnxruntime.transformers.float16 import convert_float_to_float16
        m16, t_ort = timed(lambda: convert_float_to_float16(onnx.load(path), keep_io_types=True))
        p = os.path.join(work, name + ".ort16.onnx")
        onnx.save(m16, p)
        row["ort_fp16"] = (count(m16), count(m16, "Cast"), t_ort, *errors(ref, run(p, feeds)))
    except Exception as e:  # noqa: BLE001 - reported in the table
        row["ort_fp16"] = str(e).splitlines()[0][:60]
    try:
        p = os.path.join(work, name + ".tessera16.onnx")
        t_t = tessera(binary, "convert", "fp16", path, "-o", p, "--keep-io-types")
        m = onnx.load(p)
        onnx.checker.check_model(m, full_check=True)
        row["tessera_fp16"] = (count(m), count(m, "Cast"), t_t, *errors(ref, run(p, feeds)))
    except Exception as e:  # noqa: BLE001
        row["tessera_fp16"] = str(e).splitlines()[0][:60]
    # sanitize: onnxscript's optimizer vs tessera.
    try:
        import onnxscript.optimizer
        opt, t_o = timed(lambda: onnxscript.optimizer.optimize(onnx.load(path)))
        p = os.path.join(work, name + ".onnxscript.onnx")
        onnx.save(opt, p)
        row["onnxscript"] = (count(opt), t_o, errors(ref, run(p, feeds))[0])
    except Exception as e:  # noqa: BLE001
        row["onnxscript"] = str(e).splitlines()[0][:60]
    try:
        p = os.path.join(work, name + ".sanitized.onnx")
        t_s = tessera(binary, "sanitize", path, "-o", p)
        m = onnx.load(p)
        onnx.checker.check_model(m, full_check=True)
        row["tessera_sanitize"] = (count(m), t_s, errors(ref, run(p, feeds))[0])
    except Exception as e:  # noqa: BLE001
        row["tessera_sanitize"] = str(e).splitlines()[0][:60]
    rows.append(row)
    print(row, flush=True)


def fmt16(v):
    if isinstance(v, str):
        return f"failed: {v}"
    nodes, casts, t, ea, er = v
    return f"{nodes} nodes, {casts} Casts, {t:.2f} s, max abs err {ea:.2e}"


def fmtsan(v):
    if isinstance(v, str):
        return f"failed: {v}"
    nodes, t, ea = v
    return f"{nodes} nodes, {t:.2f} s, max abs diff {ea:.1e}"


def export_torchvision(name, work):
    import torch
    import torchvision
    model = getattr(torchvision.models, name)(weights=None).eval()
    p = os.path.join(work, name + ".onnx")
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), p, opset_version=17, dynamo=False,
                      input_names=["input"], output_names=["output"])
    return p


def export_bert(work):
    import torch
    from transformers import BertConfig, BertModel
    model = BertModel(BertConfig()).eval()  # BERT-base sizes, random weights
    ids = torch.randint(0, 1000, (1, 128))
    p = os.path.join(work, "bert_base.onnx")
    torch.onnx.export(model, (ids,), p, opset_version=17, dynamo=False, input_names=["input_ids"],
                      output_names=["last_hidden_state", "pooler_output"])
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--torchvision", default="")
    ap.add_argument("--bert", action="store_true")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    models = [(os.path.splitext(os.path.basename(m))[0], m) for m in a.model]
    for n in filter(None, a.torchvision.split(",")):
        try:
            models.append((n, export_torchvision(n, a.work)))
        except Exception as e:  # noqa: BLE001
            print(f"export {n} failed: {e}", file=sys.stderr)
    if a.bert:
        try:
            models.append(("bert_base", export_bert(a.work)))
        except Exception as e:  # noqa: BLE001
            print(f"export bert failed: {e}", file=sys.stderr)
    rows = []
    for name, path in models:
        compare(name, path, a.tessera, a.work, rows)
    lines = [f"onnx {onnx.__version__}, onnxruntime {ort.__version__}",
             "",
             "| model | nodes | ORT float16 converter | tessera convert fp16 | onnxscript optimizer | tessera sanitize |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['nodes']} | {fmt16(r['ort_fp16'])} | {fmt16(r['tessera_fp16'])} | "
                     f"{fmtsan(r['onnxscript'])} | {fmtsan(r['tessera_sanitize'])} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
