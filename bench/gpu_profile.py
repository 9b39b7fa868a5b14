#!/usr/bin/env python3
"""Where the GPU time goes: `tessera profile --backend cuda` of the benchmark models.

Exports each model as bench/gpu_inference.py does (same random weights, dynamo exporter), profiles it
with per-layer device times, and writes per cell the JSON report (profile_<model>_b<batch>.json) and a
summary (time by operator, the slowest layers, achieved bandwidth-free TFLOP/s; where the layers came
from, their sum against the device end-to-end time and the profiling overhead: issue 13's criteria) to
profile.md. The inputs and outputs stay on the GPU (--device-io, as the benchmark runs) unless --host-io. Run on the
GPU test machine: `bash scripts/gpu-check.sh OUT profile` (MODELS and BATCHES choose the cells).
"""
import argparse
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_inference as gi  # noqa: E402


def profile(binary, model_dir, report, extra):
    cmd = [binary, "profile", os.path.join(model_dir, "model.onnx"), "--backend", "cuda", "--input-dir",
           os.path.join(model_dir, "test_data_set_0"), "-n", "20", "--warmup", "5", "--no-progress",
           "--report", report] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr or p.stdout).strip()[-1500:]
    with open(report) as f:
        return json.load(f), p.stdout


def summary(name, batch, rep):
    lines = [f"## {name} batch {batch}", ""]
    lat = rep["latency_ms"]["median"]
    lines.append(f"median {lat:.3f} ms, layer sum {rep.get('layer_sum_ms', 0):.3f} ms, "
                 f"precision {rep.get('precision', {}).get('compute', '?') if isinstance(rep.get('precision'), dict) else rep.get('precision')}")
    t = rep.get("trace")
    if t:
        # Issue 13's criteria: layer sum within 5% of the device end-to-end time, overhead under 3%.
        lines.append(f"layers from {t['layers_source']}: device end-to-end {t['device_ms']:.3f} ms, layer sum "
                     f"{t['layer_sum_ms']:.3f} ms ({t['layer_sum_percent_of_device']:.1f}%), spans "
                     f"{t['span_sum_ms']:.3f} ms; run {t['untraced_run_ms']:.3f} ms untraced, "
                     f"{t['traced_run_ms']:.3f} ms traced ({t['overhead_percent']:+.1f}% on the host); graph device time "
                     f"{t.get('untraced_device_ms', 0):.3f} ms untraced, {t.get('traced_device_ms', 0):.3f} ms traced "
                     f"(profiling overhead {t.get('device_overhead_percent', 0):+.1f}%)"
                     + (f"; note: {t['note']}" if t.get("note") else ""))
        # The layers are device times: the overhead that matters is the replayed graph's device time,
        # traced against untraced (both timed by events after a gate, bench and docs/profile-report.md).
        ok_sum = abs(t["layer_sum_percent_of_device"] - 100) <= 5
        ok_overhead = t.get("traced_device_ms", 0) > 0 and t.get("device_overhead_percent", 99) < 3
        lines.append(f"criteria: layer sum within 5% of the device end-to-end time: {'yes' if ok_sum else 'NO'}; "
                     f"profiling overhead under 3%: {'yes' if ok_overhead else 'NO'}")
    by_op = collections.defaultdict(lambda: [0.0, 0])
    for layer in rep["layers"]:
        key = (layer["op_type"], layer["backend"])
        by_op[key][0] += layer["time_ms"]
        by_op[key][1] += 1
    lines += ["", "| operator | backend | layers | ms | % |", "| --- | --- | --- | --- | --- |"]
    total = sum(v[0] for v in by_op.values()) or 1
    for (op, be), (ms, n) in sorted(by_op.items(), key=lambda kv: -kv[1][0])[:25]:
        lines.append(f"| {op} | {be} | {n} | {ms:.3f} | {100 * ms / total:.1f} |")
    lines += ["", "| slowest layer | op | kernel | ms | output shapes |", "| --- | --- | --- | --- | --- |"]
    for layer in sorted(rep["layers"], key=lambda l: -l["time_ms"])[:15]:
        lines.append(f"| {layer['name'][:40]} | {layer['op_type']} | {layer.get('kernel', '')[:40]} | "
                     f"{layer['time_ms']:.3f} | {layer.get('output_shapes')} |")
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--models", default=",".join(gi.DEFAULT_MODELS))
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--work", default="/tmp/tessera-gpu-bench")
    ap.add_argument("--out", required=True)
    ap.add_argument("--extra", default="", help="more `tessera profile` options, space separated")
    ap.add_argument("--host-io", action="store_true",
                    help="profile with the inputs' and outputs' host copies (default: --device-io, as the benchmark)")
    a = ap.parse_args()
    md = []
    bad = 0
    for name in a.models.split(","):
        for batch in [int(b) for b in a.batches.split(",")]:
            d = gi.export(name, batch, a.work)
            report = os.path.join(a.out, f"profile_{name}_b{batch}.json")
            extra = a.extra.split() + ([] if a.host_io else ["--device-io"])
            rep, text = profile(a.tessera, d, report, extra)
            if rep is None:
                md += [f"## {name} batch {batch}", "", "failed: " + text, ""]
                bad += 1
                continue
            md += summary(name, batch, rep)
            print("\n".join(md[-40:]), flush=True)
    with open(os.path.join(a.out, "profile.md"), "w") as f:
        f.write("\n".join(md))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
