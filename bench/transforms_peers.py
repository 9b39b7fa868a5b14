#!/usr/bin/env python3
"""Tessera's fp16 conversion and sanitize side by side with the peers that are installed.

  python3 bench/transforms_peers.py --tessera dist/tessera/bin/tessera --out DIR
          [--models-dir DIR2] [--models a,b] [--bert-base] [--model FILE.onnx]... [--large-mib 1024]
          [--timeout SECONDS]

For each model: node and Cast counts, time, and the output error against the float32 model of
  - fp16 (float32 inputs and outputs kept): `tessera convert fp16 --keep-io-types` against
    onnxconverter-common's float16 converter, or where that is missing its copy in onnxruntime
    (onnxruntime.transformers.float16), with keep_io_types=True;
  - sanitize: `tessera sanitize` against onnxsim (simplify) and onnxscript's optimizer, each where
    installed.
Outputs run through onnxruntime's CPU provider when it is installed (an engine neither converter
wrote), else through `tessera run` and the row says "onnxruntime missing"; the error is
max |got - want| / max |want| per output, the worst output's (the error against the output's scale;
"rel err" in the table). Every model written is also checked with onnx.checker (full_check).

The parent process only orchestrates and writes the table: it never imports onnx, onnxruntime or numpy.
Every model load, check, conversion and onnxruntime session runs in a child process of its own
(`--worker`), with a time limit (--timeout), so a native crash (onnx's checker or onnxruntime segfaulted
in-process on ViT-B/16 on 2026-11-25) or a hang costs one table cell, never the run.

Models: the real models of tests/models (export_models.py exports them into DIR/models with random
weights and their own inputs, or --models-dir names a folder already in that layout; --models picks
them, one or several), any --model file (random inputs), and a synthetic model of --large-mib MiB
(256 MatMul weights) for the time of converting a large model end to end (the issue's goal: 1 GiB under
2 s). The table goes to stdout and to DIR/transforms_peers.md (rewritten after every model); the
converted models stay in DIR for inspection.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_MODELS = "resnet50,mobilenet_v2,efficientnet_b0,vit_b_16,bert_encoder"


# ---------------------------------------------------------------------------------------------------
# The parent: subprocesses only.


class ChildFailed(Exception):
    pass


def child(argv, timeout):
    """Runs argv in a process group of its own; returns its stdout. A crash, a time-out or a non-zero exit
    raises ChildFailed with a short reason (the last line the child wrote, or the signal)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the worker and anything it started (tessera run)
        p.communicate()
        raise ChildFailed(f"timed out after {timeout:g} s")
    if p.returncode < 0:
        raise ChildFailed(f"crashed ({signal.Signals(-p.returncode).name})")
    if p.returncode != 0:
        lines = (err.strip() or out.strip()).splitlines()
        raise ChildFailed(lines[-1][:90] if lines else f"exit {p.returncode}")
    return out


def worker(a, *args):
    """One --worker job in a child; its last stdout line is JSON."""
    out = child([sys.executable, os.path.abspath(__file__), "--worker", *map(str, args)], a.timeout)
    return json.loads(out.strip().splitlines()[-1])


def tessera(a, *args):
    """Seconds a tessera subcommand took (in a child with the same time limit)."""
    t = time.perf_counter()
    child([a.tessera, *args], a.timeout)
    return time.perf_counter() - t


def reason(e):
    text = str(e).strip()
    return text.splitlines()[0][:90] if text else type(e).__name__


def run_falling_back(a, path, feeds, out, ref):
    """The run worker's result, and a note when the default level crashed and ORT_ENABLE_EXTENDED ran."""
    try:
        return worker(a, "run", path, feeds, out, a.tessera, ref), None
    except ChildFailed as e:
        if not str(e).startswith("crashed"):
            raise
        return (worker(a, "run", path, feeds, out, a.tessera, ref, "extended"),
                f"onnxruntime at ORT_ENABLE_EXTENDED: ORT_ENABLE_ALL {e}")


def measure(a, write, path, feeds, ref):
    """(nodes, Casts, seconds, rel err[, note]) of the model write(path) writes, or why there is none.

    onnxruntime 1.30's CPU session segfaults at its default optimisation level (ORT_ENABLE_ALL) on Tessera's
    float16 ViT-B/16, which both onnx checkers accept and which builds and runs at every lower level
    (bench/transforms_probe.py on the GPU machine, 2026-11-25 09:55: the crash needs the second encoder
    layer's erf GELU whole; that GELU alone builds at level ALL). Where the default level crashes, the model
    is run again at ORT_ENABLE_EXTENDED and the cell says so."""
    try:
        seconds = write(path)
        info = worker(a, "inspect", path)
        result, note = run_falling_back(a, path, feeds, os.path.join(a.out, "got.npz"), ref)
        return (info["nodes"], info["casts"], seconds, result["error"]) + ((note,) if note else ())
    except Exception as e:  # noqa: BLE001 - reported in the table
        return reason(e)


def peer_in_child(a, tool, src):
    return lambda dst: worker(a, tool, src, dst)["seconds"]


def compare(a, name, path, data_dir):
    row = {"model": name}
    feeds = os.path.join(a.out, f"{name}.feeds.npz")
    ref = os.path.join(a.out, f"{name}.ref.npz")
    try:
        row["nodes"] = worker(a, "prepare", path, data_dir or "-", feeds)["nodes"]
        result, note = run_falling_back(a, path, feeds, ref, "-")
        row["engine"] = result["engine"] + (f" ({note})" if note else "")
    except Exception as e:  # noqa: BLE001 - a model that cannot even be read or run is one row saying why
        row["failed"] = reason(e)
        print(json.dumps(row), flush=True)
        return row
    out = lambda suffix: os.path.join(a.out, f"{name}.{suffix}.onnx")  # noqa: E731
    cells = (("peer16", peer_in_child(a, "peer16", path), "peer16"),
             ("tessera16", lambda p: tessera(a, "convert", "fp16", path, "-o", p, "--keep-io-types"), "tessera16"),
             ("onnxsim", peer_in_child(a, "onnxsim", path), "onnxsim"),
             ("onnxscript", peer_in_child(a, "onnxscript", path), "onnxscript"),
             ("sanitize", lambda p: tessera(a, "sanitize", path, "-o", p), "sanitized"))
    for key, write, suffix in cells:
        target = out(suffix)
        if os.path.exists(target):
            os.remove(target)  # a stale file from an earlier run must not be measured as this run's
        row[key] = measure(a, write, target, feeds, ref)
    print(json.dumps(row), flush=True)
    return row


def large_row(a):
    path = os.path.join(a.out, "large.onnx")
    row = {"model": f"large ({a.large_mib} MiB, {a.large_mib // 4} MatMul weights)"}
    try:
        if not os.path.exists(path):
            worker(a, "make_large", path, a.large_mib)
    except Exception as e:  # noqa: BLE001
        row["peer16"] = row["tessera16"] = reason(e)
        return row
    for key, fn in (("peer16", peer_in_child(a, "peer16", path)),
                    ("tessera16", lambda p: tessera(a, "convert", "fp16", path, "-o", p, "--keep-io-types"))):
        p = os.path.join(a.out, f"large.{key}.onnx")
        try:
            times = []
            for _ in range(3):
                if os.path.exists(p):
                    os.remove(p)
                times.append(fn(p))
            row[key] = sorted(times)[1]
        except Exception as e:  # noqa: BLE001
            row[key] = reason(e)
    print(json.dumps(row), flush=True)
    return row


def note_of(v):
    return f" ({v[4]})" if len(v) > 4 else ""


def cell16(v):
    if isinstance(v, str):
        return f"({v})"
    nodes, casts, t, err = v[:4]
    return f"{nodes} / {casts} / {t:.2f} s / {err:.1e}{note_of(v)}"


def cellsan(v):
    if isinstance(v, str):
        return f"({v})"
    nodes, _, t, err = v[:4]
    return f"{nodes} / {t:.2f} s / {err:.1e}{note_of(v)}"


def table(rows, large, info):
    peer = info.get("fp16_peer") or "float16 converter (onnxconverter-common / onnxruntime.transformers)"
    lines = [f"onnx {info.get('onnx', '?')}; onnxruntime {info.get('ort') or 'missing'}; "
             f"python {sys.version.split()[0]}", "",
             "fp16 cells: nodes / Casts / seconds / rel err; sanitize cells: nodes / seconds / rel err "
             "(rel err: max |got - float32| / max |float32|, worst output)", "",
             f"| model | nodes | outputs run by | {peer} | tessera convert fp16 | onnxsim | onnxscript optimizer | "
             "tessera sanitize |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "failed" in r:
            lines.append(f"| {r['model']} | ({r['failed']}) | | | | | | |")
            continue
        lines.append(f"| {r['model']} | {r['nodes']} | {r['engine']} | {cell16(r['peer16'])} | "
                     f"{cell16(r['tessera16'])} | {cellsan(r['onnxsim'])} | {cellsan(r['onnxscript'])} | "
                     f"{cellsan(r['sanitize'])} |")
    if large:
        fmt = lambda v: f"{v:.2f} s" if isinstance(v, float) else f"({v})"  # noqa: E731
        lines += ["", f"| fp16 end to end, median of 3 (load, convert, save) | {peer} | tessera convert fp16 |",
                  "| --- | --- | --- |", f"| {large['model']} | {fmt(large['peer16'])} | {fmt(large['tessera16'])} |"]
    return "\n".join(lines) + "\n"


def real_models(a):
    names = [m for m in a.models.split(",") if m]
    if a.bert_base and "bert_base" not in names:
        names.append("bert_base")
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


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessera", required=True, help="the tessera binary")
    ap.add_argument("--out", required=True, help="folder for the models written and transforms_peers.md")
    ap.add_argument("--models-dir", default="", help="real models already exported (export_models.py layout)")
    ap.add_argument("--models", default=DEFAULT_MODELS, help="which real models, comma-separated ('' for none)")
    ap.add_argument("--bert-base", action="store_true", help="BERT-base too (418 MiB)")
    ap.add_argument("--model", action="append", default=[], help="another ONNX file (random inputs)")
    ap.add_argument("--large-mib", type=int, default=1024, help="size of the synthetic large model (0: none)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds each child process may take")
    a = ap.parse_args()
    a.tessera = os.path.abspath(a.tessera)
    a.out = os.path.abspath(a.out)
    return a


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        return work(sys.argv[2], sys.argv[3:])
    a = parse_args()
    os.makedirs(a.out, exist_ok=True)
    try:
        info = worker(a, "info")
    except ChildFailed as e:  # even importing onnx failed: say so in the table, every cell will too
        info = {"onnx": f"({reason(e)})"}
    rows = []

    def write(large=None):  # after every model: a later failure keeps what was measured
        text = table(rows, large, info)
        with open(os.path.join(a.out, "transforms_peers.md"), "w") as f:
            f.write(text)
        return text

    for name, path, data in real_models(a):
        rows.append(compare(a, name, path, data))
        write()
    for path in a.model:
        rows.append(compare(a, os.path.splitext(os.path.basename(path))[0], os.path.abspath(path), ""))
        write()
    large = large_row(a) if a.large_mib > 0 else None
    print(write(large))


# ---------------------------------------------------------------------------------------------------
# The workers: each runs in a child process and may import onnx, onnxruntime and numpy.


def optional(module):
    import importlib

    try:
        return importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a peer that is not installed is a column marked so
        return None


def fp16_converter():
    return optional("onnxconverter_common.float16") or optional("onnxruntime.transformers.float16")


def count(model, op=None):
    import onnx

    n = 0

    def walk(nodes):
        nonlocal n
        for node in nodes:
            if op is None or node.op_type == op:
                n += 1
            for at in node.attribute:
                if at.type == onnx.AttributeProto.GRAPH:
                    walk(at.g.node)
                for sub in at.graphs:
                    walk(sub.node)

    walk(model.graph.node)
    for f in model.functions:
        walk(f.node)
    return n


def graph_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def random_feeds(model, seed=0):
    import numpy as np
    from onnx import TensorProto

    types = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16, TensorProto.INT64: np.int64,
             TensorProto.INT32: np.int32, TensorProto.BOOL: np.bool_}
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in graph_inputs(model):
        t = i.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in t.shape.dim]
        dtype = types.get(t.elem_type, np.float32)
        if dtype in (np.int64, np.int32):
            feeds[i.name] = rng.integers(0, 100, size=shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[i.name] = np.ones(shape, dtype=bool)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def prepare(model_path, data_dir, feeds_path):
    """The model's feeds (its test_data_set's inputs, or random ones) into feeds_path (.npz)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    model = onnx.load(model_path, load_external_data=False)
    if data_dir == "-":
        feeds = random_feeds(model)
    else:
        feeds = {}
        for k, i in enumerate(graph_inputs(model)):
            t = onnx.TensorProto()
            with open(os.path.join(data_dir, f"input_{k}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            feeds[i.name] = numpy_helper.to_array(t)
    np.savez(feeds_path, **feeds)
    return {"nodes": count(model)}


def run_model(path, feeds_path, out_path, tessera_bin, ref_path, level="all"):
    """Runs path on the feeds (onnxruntime's CPU provider, else `tessera run`), saves the outputs to out_path
    and, where ref_path is given, the relative error against it."""
    import numpy as np
    from onnx import numpy_helper

    feeds = dict(np.load(feeds_path))
    ort = optional("onnxruntime")
    if ort:
        engine = f"onnxruntime {ort.__version__} CPU"
        so = ort.SessionOptions()
        so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED if level == "extended"
                                       else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        got = [np.asarray(o, dtype=np.float64) for o in s.run(None, feeds)]
    else:
        engine = "tessera run (onnxruntime missing)"
        work = os.path.splitext(out_path)[0] + ".run"
        data = os.path.join(work, "feeds")
        os.makedirs(data, exist_ok=True)
        for k, v in enumerate(feeds.values()):
            with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(v).SerializeToString())
        outputs = os.path.join(work, "outputs")
        r = subprocess.run([tessera_bin, "run", path, "--input-dir", data, "-n", "1", "--warmup", "0",
                            "--no-progress", "--json", "-o", outputs], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("tessera run: " + ((r.stderr.strip() or r.stdout.strip()).splitlines() or ["?"])[-1])
        with open(os.path.join(outputs, "outputs.json")) as f:
            files = json.load(f)
        got = [np.load(os.path.join(outputs, p)).astype(np.float64) for p in files.values()]
    np.savez(out_path, *got)
    result = {"engine": engine}
    if ref_path != "-":
        ref = np.load(ref_path)
        result["error"] = rel_error([ref[f"arr_{k}"] for k in range(len(ref.files))], got)
    return result


def rel_error(ref, got):
    import numpy as np

    if len(ref) != len(got):
        return float("inf")
    worst = 0.0
    for a, b in zip(ref, got):
        if a.shape != b.shape:
            return float("inf")
        if a.size:
            worst = max(worst, float(np.abs(a - b).max() / max(float(np.abs(a).max()), 1e-30)))
    return worst


def inspect(path):
    import onnx

    onnx.checker.check_model(path, full_check=True)  # a path: also models over 2 GiB
    m = onnx.load(path, load_external_data=False)
    return {"nodes": count(m), "casts": count(m, "Cast")}


def ort_float16(src, dst):
    import onnx

    conv = fp16_converter()
    if conv is None:
        raise RuntimeError("onnxruntime missing" if optional("onnxruntime") is None else "not installed")
    t = time.perf_counter()
    m = conv.convert_float_to_float16(onnx.load(src), keep_io_types=True)
    onnx.save(m, dst)
    return {"seconds": time.perf_counter() - t}


def onnxsim_simplify(src, dst):
    import onnx

    sim = optional("onnxsim")
    if sim is None:
        raise RuntimeError("not installed")
    t = time.perf_counter()
    m, ok = sim.simplify(onnx.load(src))
    if not ok:
        raise RuntimeError("onnxsim could not validate its result")
    onnx.save(m, dst)
    return {"seconds": time.perf_counter() - t}


def onnxscript_optimize(src, dst):
    import onnx

    opt = optional("onnxscript.optimizer")
    if opt is None:
        raise RuntimeError("not installed")
    t = time.perf_counter()
    m = opt.optimize(onnx.load(src))
    onnx.save(m, dst)
    return {"seconds": time.perf_counter() - t}


def make_large(path, mib):
    """A chain of MatMuls with 4 MiB float32 weights, mib MiB in all (model_core_bench make-large's shape)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    mib = int(mib)
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
    return {"path": path}


def info():
    import onnx

    ort = optional("onnxruntime")
    names = {"onnxconverter_common.float16": "onnxconverter-common float16",
             "onnxruntime.transformers.float16": "onnxruntime.transformers.float16"}
    peer = next((label for mod, label in names.items() if optional(mod)), None)
    return {"onnx": onnx.__version__, "ort": ort.__version__ if ort else None, "fp16_peer": peer}


WORKERS = {"info": info, "prepare": prepare, "run": run_model, "inspect": inspect, "make_large": make_large,
           "peer16": ort_float16, "onnxsim": onnxsim_simplify, "onnxscript": onnxscript_optimize}


def work(name, args):
    try:
        print(json.dumps(WORKERS[name](*args)), flush=True)
    except Exception as e:  # noqa: BLE001 - the parent reports it in the table
        sys.exit(reason(e))


if __name__ == "__main__":
    main()
