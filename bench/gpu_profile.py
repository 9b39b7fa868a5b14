#!/usr/bin/env python3
"""Where the GPU time goes: `tessera profile --backend cuda` of the benchmark models.

Exports each model as bench/gpu_inference.py does (same random weights, dynamo exporter), profiles it
with per-layer device times, and writes per cell the JSON report (profile_<model>_b<batch>.json) and a
summary (time by operator, the slowest layers; where the layers came from, their sum against the device
end-to-end time and the profiling overhead; the roofline: the share of layer time in compute-bound
layers and the fraction of the peak FLOP rate they reach, the same for memory-bound ones against the
bandwidth: issue 13's criteria) to profile.md. The peaks are measured here first (a large float16 matrix
product as bench/gpu_inference.py measures it, a device-to-device copy of 1 GiB) and handed to Tessera
as --peak-tflops/--peak-gbps, unless given. The inputs and outputs stay on the GPU (--device-io, as the benchmark runs) unless --host-io. Run on the
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


def peak_gbps():
    """Device memory bandwidth, GB/s: a 1 GiB device-to-device copy reads and writes every byte once."""
    a = gi.torch.empty(1 << 28, device="cuda", dtype=gi.torch.float32)
    b = gi.torch.empty_like(a)
    ms = gi.time_cuda(lambda: b.copy_(a), 10, 3)
    del a, b
    gi.torch.cuda.empty_cache()
    return 2 * (1 << 28) * 4 / ms / 1e6


def roofline_lines(name, batch, rep):
    """Issue 13's half-peak criterion: the compute-bound layers' achieved FLOP rate against the peak."""
    r = rep.get("roofline")
    if not r or not r.get("peak_tflops"):
        return ["roofline: not in this report (no peaks)"], None
    c, m, u = r["compute_bound"], r["memory_bound"], r["unbounded"]
    lines = [f"roofline (peaks {r['peak_tflops']:.0f} TFLOP/s, {r['peak_gbps']:.0f} GB/s; {r['peak_source']}): "
             f"model {r['model_flops'] / 1e9:.1f} GFLOP, {r['model_tflops_per_s']:.1f} TFLOP/s end to end "
             f"({r['model_percent_of_peak']:.1f}% of peak)",
             f"compute-bound: {c['layers']} layers, {c['time_ms']:.3f} ms = {c['percent_of_layer_time']:.1f}% of "
             f"layer time, {c['tflops_per_s']:.1f} TFLOP/s = {c['percent_of_peak']:.1f}% of peak",
             f"memory-bound: {m['layers']} layers, {m['time_ms']:.3f} ms = {m['percent_of_layer_time']:.1f}%, "
             f"{m['gbps']:.0f} GB/s = {m['percent_of_peak']:.1f}% of peak; "
             f"no bound: {u['layers']} layers, {u['time_ms']:.3f} ms = {u['percent_of_layer_time']:.1f}%"
             + (f"; FLOPs not counted for {', '.join(r['flops_not_counted'])}" if r.get("flops_not_counted") else "")]
    half = c["percent_of_peak"] >= 50 if c["layers"] else None
    if batch >= 32:
        lines.append("criterion (b32): compute-bound layers at half the peak FLOP rate or more: "
                     + ("no compute-bound layers" if half is None else "yes" if half else "NO"))
    row = {"model": name, "batch": batch, "compute_share": c["percent_of_layer_time"],
           "compute_tflops": c["tflops_per_s"], "compute_peak": c["percent_of_peak"],
           "memory_share": m["percent_of_layer_time"], "memory_gbps": m["gbps"], "memory_peak": m["percent_of_peak"],
           "model_tflops": r["model_tflops_per_s"], "model_peak": r["model_percent_of_peak"]}
    lines += ["", "| compute-bound layer | op | ms | TFLOP/s | % of bound |", "| --- | --- | --- | --- | --- |"]
    bound = sorted((l for l in rep["layers"] if l.get("bound") == "compute"), key=lambda l: -l["time_ms"])
    for layer in bound[:8]:
        lines.append(f"| {layer['name'][:40]} | {layer['op_type']} | {layer['time_ms']:.3f} | "
                     f"{layer['tflops_per_s']:.1f} | {layer['percent_of_bound']:.1f} |")
    return lines, row


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
        lines.append(f"criteria (CUPTI layer times): layer sum within 5% of the device end-to-end time: "
                     f"{'yes' if ok_sum else 'NO'}; profiling overhead under 3%: {'yes' if ok_overhead else 'NO'}")
        # Stamped layer times (one stamp kernel per untraced replay, runtime/replay_trace.h): their sum
        # against the untraced graph's device time, and what the stamped replays cost it.
        if t.get("stamped_replays"):
            untraced = t.get("untraced_device_ms", 0)
            ssum, sdev, sov = t["stamped_layer_sum_ms"], t["stamped_device_ms"], t["stamp_overhead_percent"]
            pct = 100 * ssum / untraced if untraced else 0
            lines.append(f"stamped layer times ({t['stamped_replays']} replays): sum {ssum:.3f} ms = {pct:.1f}% of the "
                         f"untraced graph's {untraced:.3f} ms; stamped replay {sdev:.3f} ms "
                         f"(profiling overhead {sov:+.1f}%)")
            lines.append(f"criteria (stamped layer times): layer sum within 5%: {'yes' if abs(pct - 100) <= 5 else 'NO'}; "
                         f"profiling overhead under 3%: {'yes' if 0 < sdev and sov < 3 else 'NO'}")
        elif t.get("stamp_note"):
            lines.append(f"no stamped layer times: {t['stamp_note']}")
    roof, row = roofline_lines(name, batch, rep)
    lines += roof
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
    return lines + [""], row


def roofline_table(rows):
    """One line per cell: what issue 13's half-peak criterion is about."""
    out = ["## Roofline by cell", "",
           "| model | batch | compute-bound % of time | their TFLOP/s | % of peak | memory-bound % of time | "
           "their GB/s | % of peak | model TFLOP/s | % of peak |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        out.append(f"| {r['model']} | {r['batch']} | {r['compute_share']:.1f} | {r['compute_tflops']:.1f} | "
                   f"{r['compute_peak']:.1f} | {r['memory_share']:.1f} | {r['memory_gbps']:.0f} | {r['memory_peak']:.1f} | "
                   f"{r['model_tflops']:.1f} | {r['model_peak']:.1f} |")
    return out + [""]


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
    ap.add_argument("--peak-tflops", type=float, default=0,
                    help="peak FLOP rate in the profile's precision (default: measured here in float16, Tessera's "
                         "default on the GPU: give it with --extra '--precision fp32' or tf32)")
    ap.add_argument("--peak-gbps", type=float, default=0, help="peak memory bandwidth (default: measured here)")
    a = ap.parse_args()
    tflops = a.peak_tflops or gi.peak_fp16_tflops()
    gbps = a.peak_gbps or peak_gbps()
    md = [f"peaks: {tflops:.0f} TFLOP/s ({'given' if a.peak_tflops else 'measured: float16 8192^3 matrix product'}), "
          f"{gbps:.0f} GB/s ({'given' if a.peak_gbps else 'measured: 1 GiB device-to-device copy'})", ""]
    print(md[0], flush=True)
    rows = []
    bad = 0
    for name in a.models.split(","):
        for batch in [int(b) for b in a.batches.split(",")]:
            d = gi.export(name, batch, a.work)
            report = os.path.join(a.out, f"profile_{name}_b{batch}.json")
            extra = a.extra.split() + ([] if a.host_io else ["--device-io"])
            extra += ["--peak-tflops", f"{tflops:.1f}", "--peak-gbps", f"{gbps:.1f}"]
            rep, text = profile(a.tessera, d, report, extra)
            if rep is None:
                md += [f"## {name} batch {batch}", "", "failed: " + text, ""]
                bad += 1
                continue
            lines, row = summary(name, batch, rep)
            md += lines
            if row:
                rows.append(row)
            print("\n".join(lines), flush=True)
    md += roofline_table(rows)
    print("\n".join(roofline_table(rows)), flush=True)
    with open(os.path.join(a.out, "profile.md"), "w") as f:
        f.write("\n".join(md))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
