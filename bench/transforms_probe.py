#!/usr/bin/env python3
"""Which tool crashes on a converted model, and on which node: for the GPU machine's ViT-B/16 SIGSEGV.

  python3 bench/transforms_probe.py --tessera dist/tessera/bin/tessera --model MODEL.onnx --out DIR
          [--input-dir test_data_set_0] [--timeout 600] [--no-convert] [-- extra `convert fp16` arguments]

Converts MODEL with `tessera convert fp16 --keep-io-types` (or probes MODEL itself with --no-convert), then
runs every step that the peers script's one "check and run" child did, each in a child process of its own
with Python's faulthandler on (a native crash prints the Python stack that led to it) and a time limit:

  tessera check; onnx.checker.check_model without and with full_check; onnx's strict shape inference with
  data propagation; an onnxruntime CPU session at each optimisation level (disable all, basic, extended,
  all); one run of that session on the model's inputs (DIR/feeds: --input-dir's input_<k>.pb, else random).

The first onnxruntime step that crashes is then bisected over the model's node list: a prefix of the
nodes (file order is topological), every value it makes that nothing in it reads being an output, is
tried in a child; about log2(nodes) children find the shortest prefix that crashes, and its last node is
printed (op, name, attributes, input and output types) and saved alone as DIR/culprit.onnx. A step that
fails with an error (not a crash) is reported as such. The log goes to stdout and DIR/probe.md.

The parent imports neither onnx nor onnxruntime (a crash must cost one child, never the probe).
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

STEPS = [("checker", "onnx.checker.check_model(path)"),
         ("checker_full", "onnx.checker.check_model(path, full_check=True)"),
         ("strict_inference", "onnx.shape_inference.infer_shapes(strict, check_type, data_prop)"),
         ("ort_disable_all", "onnxruntime CPU session, ORT_DISABLE_ALL"),
         ("ort_basic", "onnxruntime CPU session, ORT_ENABLE_BASIC"),
         ("ort_extended", "onnxruntime CPU session, ORT_ENABLE_EXTENDED"),
         ("ort_all", "onnxruntime CPU session, ORT_ENABLE_ALL (the default)"),
         ("ort_run", "onnxruntime CPU session (default) run on the inputs")]
LEVELS = {"ort_disable_all": "ORT_DISABLE_ALL", "ort_basic": "ORT_ENABLE_BASIC",
          "ort_extended": "ORT_ENABLE_EXTENDED", "ort_all": "ORT_ENABLE_ALL", "ort_run": "ORT_ENABLE_ALL"}


# ---------------------------------------------------------------------------------------------------
# The parent: subprocesses only.


def child(argv, timeout):
    """(status, text): status 'ok', 'error' (non-zero exit; text: the last lines) or 'crash' (a signal or a
    time-out; text: the signal and the end of stderr, where faulthandler wrote the Python stack)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return "crash", f"timed out after {timeout:g} s"
    tail = "\n".join((err.strip() or out.strip()).splitlines()[-12:])
    if p.returncode < 0:
        return "crash", f"{signal.Signals(-p.returncode).name}\n{tail}"
    if p.returncode != 0:
        return "error", tail
    return "ok", out.strip()


def worker(a, *args):
    return child([sys.executable, os.path.abspath(__file__), "--worker", *map(str, args)], a.timeout)


class Log:
    def __init__(self, path):
        self.f = open(path, "w")

    def __call__(self, text=""):
        print(text, flush=True)
        self.f.write(text + "\n")
        self.f.flush()


def bisect(a, log, path, step, nodes):
    """Shortest crashing prefix of path's nodes for step; returns its length (nodes when none shorter)."""
    lo, hi = 0, nodes  # a prefix of lo nodes does not crash (0: nothing), one of hi does
    while hi - lo > 1:
        mid = (lo + hi) // 2
        status, text = worker(a, "prefix", path, mid, os.path.join(a.out, "prefix.onnx"), step, a.feeds)
        log(f"  prefix of {mid} nodes: {status}" + (f" ({text.splitlines()[0][:100]})" if status == "error" else ""))
        if status == "crash":
            hi = mid
        else:
            lo = mid
    return hi


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        return work(sys.argv[2], sys.argv[3:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--input-dir", default="", help="input_<k>.pb of the model (default: random inputs)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--no-convert", action="store_true", help="probe --model itself")
    ap.add_argument("extra", nargs="*", help="more `tessera convert fp16` arguments (after --)")
    a = ap.parse_args()
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    log = Log(os.path.join(a.out, "probe.md"))
    status, text = worker(a, "info")
    log(f"# probe of {a.model}\n\n{text.splitlines()[-1] if status == 'ok' else '(onnx/onnxruntime: ' + text + ')'}")
    path = os.path.abspath(a.model)
    if not a.no_convert:
        path = os.path.join(a.out, "fp16.onnx")
        t = time.perf_counter()
        status, text = child([a.tessera, "convert", "fp16", a.model, "-o", path, "--keep-io-types", *a.extra],
                             a.timeout)
        counts = [ln.strip() for ln in text.splitlines() if "kept" in ln or "Cast" in ln] if status == "ok" else []
        log(f"- tessera convert fp16 --keep-io-types {' '.join(a.extra)}: {status} "
            f"({time.perf_counter() - t:.2f} s){'; ' + ', '.join(counts) if counts else ''}"
            f"{'' if status == 'ok' else chr(10) + text}")
        if status != "ok":
            return 1
    status, text = child([a.tessera, "check", path], a.timeout)
    log(f"- tessera check: {status}: {text.splitlines()[-1] if text else ''}")
    a.feeds = os.path.join(a.out, "feeds.npz")
    status, text = worker(a, "feeds", path, a.input_dir or "-", a.feeds)
    log(f"- inputs: {status} {text.splitlines()[-1] if text else ''}")
    first_crash = None
    for step, what in STEPS:
        t = time.perf_counter()
        status, text = worker(a, "step", path, step, a.feeds)
        log(f"- {what}: **{status}** ({time.perf_counter() - t:.1f} s)")
        if status != "ok":
            log("```\n" + text + "\n```")
        if status == "crash" and first_crash is None and step.startswith("ort"):
            first_crash = step
    if first_crash is None:
        log("\nNo onnxruntime step crashed.")
        return 0
    status, text = worker(a, "count", path)
    nodes = int(json.loads(text.splitlines()[-1])["nodes"]) if status == "ok" else 0
    log(f"\n## bisecting {first_crash} over {nodes} nodes")
    k = bisect(a, log, path, first_crash, nodes)
    status, _ = worker(a, "save_prefix", path, k, os.path.join(a.out, "crash_prefix.onnx"))
    log(f"the shortest crashing prefix saved as crash_prefix.onnx: {status}")
    alone = os.path.join(a.out, "culprit.onnx")
    status, text = worker(a, "culprit", path, k, alone)
    log(f"\nshortest crashing prefix: {k} nodes; its last node:\n```\n{text}\n```")
    status, text = worker(a, "step", alone, first_crash, "-")
    log(f"that node alone ({alone}), {first_crash}: **{status}**" +
        ("" if status == "ok" else f" ({text.splitlines()[0]})"))
    if a.no_convert:
        return 0
    # Whether keeping that operator float32 is enough (a workaround, and what to look at in the converter).
    op = worker(a, "op_of", path, k)[1].splitlines()[-1]
    blocked = os.path.join(a.out, "fp16_blocked.onnx")
    status, text = child([a.tessera, "convert", "fp16", a.model, "-o", blocked, "--keep-io-types",
                          "--op-block-list", op, *a.extra], a.timeout)
    if status == "ok":
        status, text = worker(a, "step", blocked, "ort_run", a.feeds)
    log(f"converted again with --op-block-list {op}, then an onnxruntime run: **{status}**" +
        ("" if status == "ok" else f" ({text.splitlines()[0]})"))
    return 0


# ---------------------------------------------------------------------------------------------------
# The workers: each runs in a child process and may import onnx, onnxruntime and numpy.


def info():
    import onnx

    try:
        import onnxruntime as ort
        v = ort.__version__
    except Exception:  # noqa: BLE001
        v = "missing"
    return {"onnx": onnx.__version__, "onnxruntime": v, "python": sys.version.split()[0]}


def feeds(path, data_dir, out):
    import numpy as np
    import onnx
    from onnx import numpy_helper

    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    ins = [i for i in m.graph.input if i.name not in inits]
    rng = np.random.default_rng(0)
    got = {}
    for k, i in enumerate(ins):
        f = os.path.join(data_dir, f"input_{k}.pb")
        if data_dir != "-" and os.path.exists(f):
            t = onnx.TensorProto()
            with open(f, "rb") as fh:
                t.ParseFromString(fh.read())
            got[i.name] = numpy_helper.to_array(t)
            continue
        tt = i.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in tt.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dtype, np.integer):
            got[i.name] = rng.integers(0, 100, size=shape).astype(dtype)
        else:
            got[i.name] = rng.standard_normal(shape).astype(dtype)
    np.savez(out, **got)
    return {k: list(v.shape) for k, v in got.items()}


def session(path, level):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, LEVELS[level])
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def step(path, name, feeds_path):
    import onnx

    if name == "checker":
        onnx.checker.check_model(path)
    elif name == "checker_full":
        onnx.checker.check_model(path, full_check=True)
    elif name == "strict_inference":
        m = onnx.load(path)
        onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True, data_prop=True)
    else:
        s = session(path, name)
        if name == "ort_run":
            import numpy as np

            given = dict(np.load(feeds_path)) if os.path.exists(feeds_path) else {}
            types = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(int64)": np.int64,
                     "tensor(int32)": np.int32, "tensor(bool)": np.bool_, "tensor(double)": np.float64}
            run_feeds = {}
            for i in s.get_inputs():  # a node alone reads values no file holds: ones of its type and shape
                shape = [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
                run_feeds[i.name] = given.get(i.name, np.ones(shape, dtype=types.get(i.type, np.float32)))
            s.run(None, run_feeds)
    return {"step": name}


def count(path):
    import onnx

    return {"nodes": len(onnx.load(path, load_external_data=False).graph.node)}


def prefix_model(path, k):
    """The model with its first k nodes; every value they make that none of them reads is an output."""
    import onnx

    m = onnx.load(path)
    g = m.graph
    keep = list(g.node[:k])
    read = {i for n in keep for i in n.input}
    made = [o for n in keep for o in n.output if o and o not in read]
    inferred = onnx.shape_inference.infer_shapes(m)
    types = {v.name: v for v in list(inferred.graph.value_info) + list(g.output) + list(g.value_info)}
    outs = [types[o] for o in made if o in types]
    if not outs:  # nothing typed: keep the last node's first output untyped
        outs = [onnx.helper.make_empty_tensor_value_info(keep[-1].output[0])]
    del g.node[:]
    g.node.extend(keep)
    del g.output[:]
    g.output.extend(outs)
    return m


def prefix(path, k, out, name, feeds_path):
    import onnx

    onnx.save(prefix_model(path, int(k)), out)
    return step(out, name, feeds_path)


def save_prefix(path, k, out):
    import onnx

    onnx.save(prefix_model(path, int(k)), out, save_as_external_data=True, location=os.path.basename(out) + ".data")
    return {"saved": out}


def culprit(path, k, out):
    import onnx

    m = onnx.load(path, load_external_data=False)
    node = m.graph.node[int(k) - 1]
    inferred = onnx.shape_inference.infer_shapes(onnx.load(path))
    types = {v.name: v.type for v in list(inferred.graph.value_info) + list(inferred.graph.input)
             + list(inferred.graph.output)}
    types.update({i.name: onnx.helper.make_tensor_type_proto(i.data_type, list(i.dims))
                  for i in inferred.graph.initializer})
    lines = [f"{node.op_type} '{node.name}' (domain '{node.domain}')"]
    for at in node.attribute:
        lines.append(f"  attribute {onnx.helper.printable_attribute(at)[:200]}")
    for kind, names in (("input", node.input), ("output", node.output)):
        for n in names:
            t = types.get(n)
            lines.append(f"  {kind} '{n}': {onnx.helper.printable_type(t) if t else '(untyped)'}")
    # The node alone: its inputs graph inputs (initializers it reads stay initializers).
    inits = {i.name: i for i in inferred.graph.initializer}
    g = onnx.helper.make_graph(
        [node], "culprit",
        [onnx.helper.make_value_info(n, types[n]) for n in node.input if n and n in types and n not in inits],
        [onnx.helper.make_value_info(n, types[n]) if n in types else onnx.helper.make_empty_tensor_value_info(n)
         for n in node.output if n],
        [inits[n] for n in node.input if n in inits])
    alone = onnx.helper.make_model(g, opset_imports=m.opset_import, ir_version=m.ir_version)
    onnx.save(alone, out)
    return "\n".join(lines)


def op_of(path, k):
    import onnx

    return onnx.load(path, load_external_data=False).graph.node[int(k) - 1].op_type


def histogram(*paths):
    """Node counts by op type (every graph) of each model, side by side: what one sanitizer removes and
    another keeps."""
    import collections

    import onnx

    paths = [p for p in paths if os.path.exists(p)]  # a peer that is not installed wrote nothing
    counts = []
    for p in paths:
        c = collections.Counter()

        def walk(nodes):
            for n in nodes:
                c[(n.domain + ":" if n.domain else "") + n.op_type] += 1
                for at in n.attribute:
                    for g in ([at.g] if at.type == onnx.AttributeProto.GRAPH else list(at.graphs)):
                        walk(g.node)

        m = onnx.load(p, load_external_data=False)
        walk(m.graph.node)
        for f in m.functions:
            walk(f.node)
        counts.append(c)
    ops = sorted(set().union(*counts), key=lambda o: (-max(c[o] for c in counts), o))
    lines = ["| op | " + " | ".join(os.path.basename(p) for p in paths) + " |",
             "| --- |" + " --- |" * len(paths)]
    lines += [f"| {o} | " + " | ".join(str(c[o]) for c in counts) + " |" for o in ops]
    lines.append("| all | " + " | ".join(str(sum(c.values())) for c in counts) + " |")
    return "\n".join(lines)


def skeleton(src, dst):
    """src with every tensor of 1 KiB or more in external data that is not kept (dst.data is deleted): the
    graph's structure to take home; a file of zeros of the same size makes it loadable again."""
    import onnx

    m = onnx.load(src)
    data = os.path.basename(dst) + ".data"
    onnx.save(m, dst, save_as_external_data=True, all_tensors_to_one_file=True, location=data,
              size_threshold=1024)
    size = os.path.getsize(os.path.join(os.path.dirname(dst) or ".", data))
    os.remove(os.path.join(os.path.dirname(dst) or ".", data))
    return {"data_bytes": size}


def work(name, args):
    import faulthandler

    faulthandler.enable()
    fns = {"info": info, "feeds": feeds, "step": step, "count": count, "prefix": prefix, "culprit": culprit,
           "histogram": histogram, "skeleton": skeleton, "op_of": op_of,
           "save_prefix": save_prefix}
    try:
        result = fns[name](*args)
    except Exception as e:  # noqa: BLE001 - the parent reports it
        sys.exit(f"{type(e).__name__}: {str(e).strip()[:400]}")
    print(result if isinstance(result, str) else json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
