#!/usr/bin/env python3
"""Tessera's fp16 conversion and sanitize side by side with the peers that are installed.

  python3 bench/transforms_peers.py --tessera dist/tessera/bin/tessera --out DIR
          [--models-dir DIR2] [--models a,b] [--bert-base] [--model FILE.onnx]... [--large-mib 1024]

For each model: node and Cast counts, time, and the output error against the float32 model of
  - fp16 (float32 inputs and outputs kept): `tessera convert fp16 --keep-io-types` against
    onnxconverter-common's float16 converter, or where that is missing its copy in onnxruntime
    (onnxruntime.transformers.float16), with keep_io_types=True;
  - sanitize: `tessera sanitize` against onnxsim (simplify) and onnxscript's optimizer, each where
    installed.
Outputs run through onnxruntime's CPU provider when it is installed (an engine neither converter
wrote), else through `tessera run`; the error is max |got - want| / max |want| per output, the worst
output's (the error against the output's scale; "rel err" in the table). Every model written is also
checked with onnx.checker (full_check).

Models: the real models of tests/models (export_models.py exports them into DIR/models with random
weights and their own inputs, or --models-dir names a folder already in that layout), any --model
file (random inputs), and a synthetic model of --large-mib MiB (256 MatMul weights) for the time of
converting a large model end to end (the issue's goal: 1 GiB under 2 s). The table goes to stdout and
to DIR/transforms_peers.md; the converted models stay in DIR for inspection.
"""
import argparse
import importlib
import json
import os
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_MODELS = "resnet50,mobilenet_v2,efficientnet_b0,vit_b_16,bert_encoder"


def optional(module):
    try:
        return importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a peer that is not installed is a column marked so
        return None


ort = optional("onnxruntime")


def count(model, op=None):
    n = 0

    def walk(nodes):
        nonlocal n
        for node in nodes:
            if op is None or node.op_type == op:
                n += 1
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g.node)
                for sub in a.graphs:
                    walk(sub.node)

    walk(model.graph.node)
    for f in model.functions:
        walk(f.node)
    return n


NP_TYPES = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.FLOAT16: np.float16,
            onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32, onnx.TensorProto.BOOL: np.bool_}


def graph_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def random_feeds(model, seed=0):
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in graph_inputs(model):
        t = i.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in t.shape.dim]
        dtype = NP_TYPES.get(t.elem_type, np.float32)
        if dtype in (np.int64, np.int32):
            feeds[i.name] = rng.integers(0, 100, size=shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[i.name] = np.ones(shape, dtype=bool)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def feeds_from_dir(model, data_dir):
    feeds = {}
    for k, i in enumerate(graph_inputs(model)):
        t = onnx.TensorProto()
        with open(os.path.join(data_dir, f"input_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        feeds[i.name] = numpy_helper.to_array(t)
    return feeds


class Runner:
    """Runs a model on feeds: onnxruntime's CPU provider when installed, else `tessera run`."""

    def __init__(self, tessera, work):
        self.tessera, self.work = tessera, work
        self.name = f"onnxruntime {ort.__version__} CPU" if ort else "tessera run (no onnxruntime here)"

    def __call__(self, path, feeds):
        if ort:
            s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            return [np.asarray(o, dtype=np.float64) for o in s.run(None, feeds)]
        data = os.path.join(self.work, "feeds")
        os.makedirs(data, exist_ok=True)
        for k, v in enumerate(feeds.values()):
            with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(v).SerializeToString())
        out = os.path.join(self.work, "outputs")
        tessera(self.tessera, "run", path, "--input-dir", data, "-n", "1", "--warmup", "0", "--no-progress",
                "--json", "-o", out)
        with open(os.path.join(out, "outputs.json")) as f:
            files = json.load(f)
        return [np.load(os.path.join(out, p)).astype(np.float64) for p in files.values()]


def rel_error(ref, got):
    worst = 0.0
    for a, b in zip(ref, got):
        if a.shape != b.shape:
            return float("inf")
        if a.size:
            worst = max(worst, float(np.abs(a - b).max() / max(float(np.abs(a).max()), 1e-30)))
    return worst


def tessera(binary, *args):
    t = time.perf_counter()
    r = subprocess.run([binary, *args], capture_output=True, text=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError((r.stderr.strip() or r.stdout.strip()).splitlines()[-1])
    return dt


def checked(path):
    onnx.checker.check_model(path, full_check=True)  # a path: also models over 2 GiB
    return onnx.load(path, load_external_data=False)


def measure(fn, path, ref, feeds, runner):
    """(nodes, Casts, seconds, relative error) of the model fn writes to path, or the error's text."""
    try:
        seconds = fn(path)
        m = checked(path)
        return (count(m), count(m, "Cast"), seconds, rel_error(ref, runner(path, feeds)))
    except Exception as e:  # noqa: BLE001 - reported in the table
        return str(e).strip().splitlines()[0][:70] if str(e).strip() else type(e).__name__


def ort_float16(src, dst):
    conv = optional("onnxconverter_common.float16") or optional("onnxruntime.transformers.float16")
    if conv is None:
        raise RuntimeError("not installed")
    t = time.perf_counter()
    m = conv.convert_float_to_float16(onnx.load(src), keep_io_types=True)
    onnx.save(m, dst)
    return time.perf_counter() - t


def onnxsim_simplify(src, dst):
    sim = optional("onnxsim")
    if sim is None:
        raise RuntimeError("not installed")
    t = time.perf_counter()
    m, ok = sim.simplify(onnx.load(src))
    if not ok:
        raise RuntimeError("onnxsim could not validate its result")
    onnx.save(m, dst)
    return time.perf_counter() - t


def onnxscript_optimize(src, dst):
    opt = optional("onnxscript.optimizer")
    if opt is None:
        raise RuntimeError("not installed")
    t = time.perf_counter()
    m = opt.optimize(onnx.load(src))
    onnx.save(m, dst)
    return time.perf_counter() - t


PEERS = {"peer16": ort_float16, "onnxsim": onnxsim_simplify, "onnxscript": onnxscript_optimize}


def in_child(tool, src, dst):
    """Runs a peer tool in a process of its own: a peer that crashes (a segfault in a native library, as
    one did on the GPU machine on 2026-11-25) costs its table cell, not the whole run."""
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", tool, src, dst], capture_output=True,
                       text=True)
    if r.returncode < 0:
        raise RuntimeError(f"crashed (signal {-r.returncode})")
    if r.returncode != 0:
        lines = (r.stderr or r.stdout).strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit {r.returncode}")
    return float(r.stdout.strip().splitlines()[-1])


def fp16_peer_name():
    if optional("onnxconverter_common.float16"):
        return "onnxconverter-common float16"
    return "onnxruntime.transformers.float16"


def compare(name, path, feeds, a, runner):
    base = onnx.load(path)
    ref = runner(path, feeds)
    out = lambda suffix: os.path.join(a.out, f"{name}.{suffix}.onnx")  # noqa: E731
    row = {"model": name, "nodes": count(base)}
    row["peer16"] = measure(lambda p: in_child("peer16", path, p), out("peer16"), ref, feeds, runner)
    row["tessera16"] = measure(lambda p: tessera(a.tessera, "convert", "fp16", path, "-o", p, "--keep-io-types"),
                               out("tessera16"), ref, feeds, runner)
    row["onnxsim"] = measure(lambda p: in_child("onnxsim", path, p), out("onnxsim"), ref, feeds, runner)
    row["onnxscript"] = measure(lambda p: in_child("onnxscript", path, p), out("onnxscript"), ref, feeds, runner)
    row["sanitize"] = measure(lambda p: tessera(a.tessera, "sanitize", path, "-o", p), out("sanitized"), ref,
                              feeds, runner)
    print(json.dumps(row), flush=True)
    return row


def make_large(path, mib):
    """A chain of MatMuls with 4 MiB float32 weights, mib MiB in all (model_core_bench make-large's shape)."""
    rng = np.random.default_rng(0)
    n = max(1, mib // 4)
    nodes, inits, prev = [], [], "x"
    for k in range(n):
        w = (rng.standard_normal((1024, 1024)) * 0.03).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{k}"))
        nodes.append(onnx.helper.make_node("MatMul", [prev, f"w{k}"], [f"h{k}"], name=f"mm{k}"))
        prev = f"h{k}"
    g = onnx.helper.make_graph(nodes, "large", [onnx.helper.make_tensor_value_info("x", 1, [1, 1024])],
                               [onnx.helper.make_tensor_value_info(prev, 1, [1, 1024])], inits)
    m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path, save_as_external_data=mib >= 1800, location="large.onnx.data")


def large_row(a):
    path = os.path.join(a.out, "large.onnx")
    if not os.path.exists(path):
        make_large(path, a.large_mib)
    row = {"model": f"large ({a.large_mib} MiB, {a.large_mib // 4} MatMul weights)"}
    for key, fn in (("peer16", lambda p: ort_float16(path, p)),
                    ("tessera16", lambda p: tessera(a.tessera, "convert", "fp16", path, "-o", p, "--keep-io-types"))):
        p = os.path.join(a.out, f"large.{key}.onnx")
        try:
            times = []
            for _ in range(3):
                if os.path.exists(p):
                    os.remove(p)
                times.append(fn(p))
            row[key] = sorted(times)[1]
        except Exception as e:  # noqa: BLE001
            row[key] = str(e).strip().splitlines()[0][:70]
    print(json.dumps(row), flush=True)
    return row


def cell16(v):
    if isinstance(v, str):
        return f"({v})"
    nodes, casts, t, err = v
    return f"{nodes} / {casts} / {t:.2f} s / {err:.1e}"


def cellsan(v):
    if isinstance(v, str):
        return f"({v})"
    nodes, _, t, err = v
    return f"{nodes} / {t:.2f} s / {err:.1e}"


def table(rows, large, runner):
    lines = [f"onnx {onnx.__version__}; outputs through {runner.name}; python {sys.version.split()[0]}", "",
             f"fp16 cells: nodes / Casts / seconds / rel err; sanitize cells: nodes / seconds / rel err "
             f"(rel err: max |got - float32| / max |float32|, worst output)", "",
             f"| model | nodes | {fp16_peer_name()} | tessera convert fp16 | onnxsim | onnxscript optimizer | "
             "tessera sanitize |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['nodes']} | {cell16(r['peer16'])} | {cell16(r['tessera16'])} | "
                     f"{cellsan(r['onnxsim'])} | {cellsan(r['onnxscript'])} | {cellsan(r['sanitize'])} |")
    if large:
        fmt = lambda v: f"{v:.2f} s" if isinstance(v, float) else f"({v})"  # noqa: E731
        lines += ["", "| fp16 end to end, median of 3 (load, convert, save) | "
                  f"{fp16_peer_name()} | tessera convert fp16 |", "| --- | --- | --- |",
                  f"| {large['model']} | {fmt(large['peer16'])} | {fmt(large['tessera16'])} |"]
    return "\n".join(lines) + "\n"


def real_models(a):
    names = [m for m in a.models.split(",") if m] + (["bert_base"] if a.bert_base else [])
    root = a.models_dir or os.path.join(a.out, "models")
    if not a.models_dir and names:
        subprocess.run([sys.executable, os.path.join(REPO, "tests", "models", "export_models.py"), root, "--models",
                        ",".join(names), "--batch", "1"], check=True)
    found = []
    for n in names:
        d = os.path.join(root, n)
        if os.path.exists(os.path.join(d, "model.onnx")):
            found.append((n, os.path.join(d, "model.onnx"), os.path.join(d, "test_data_set_0")))
        else:
            print(f"{n}: no {d}/model.onnx", file=sys.stderr)
    return found


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":  # one peer tool, in_child()
        try:
            print(PEERS[sys.argv[2]](sys.argv[3], sys.argv[4]))
        except Exception as e:  # noqa: BLE001 - the parent reports it in the table
            sys.exit(str(e).strip().splitlines()[0][:70] if str(e).strip() else type(e).__name__)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessera", required=True, help="the tessera binary")
    ap.add_argument("--out", required=True, help="folder for the models written and transforms_peers.md")
    ap.add_argument("--models-dir", default="", help="real models already exported (export_models.py layout)")
    ap.add_argument("--models", default=DEFAULT_MODELS, help="which real models ('' for none)")
    ap.add_argument("--bert-base", action="store_true", help="BERT-base too (418 MiB)")
    ap.add_argument("--model", action="append", default=[], help="another ONNX file (random inputs)")
    ap.add_argument("--large-mib", type=int, default=1024, help="size of the synthetic large model (0: none)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    runner = Runner(a.tessera, os.path.join(a.out, "run"))
    rows = []
    def write(large=None):  # after every model: a later crash keeps what was measured
        with open(os.path.join(a.out, "transforms_peers.md"), "w") as f:
            f.write(table(rows, large, runner))

    for name, path, data in real_models(a):
        rows.append(compare(name, path, feeds_from_dir(onnx.load(path, load_external_data=False), data), a,
                            runner))
        write()
    for path in a.model:
        name = os.path.splitext(os.path.basename(path))[0]
        rows.append(compare(name, path, random_feeds(onnx.load(path, load_external_data=False)), a, runner))
    large = large_row(a) if a.large_mib > 0 else None
    text = table(rows, large, runner)
    print(text)
    with open(os.path.join(a.out, "transforms_peers.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
