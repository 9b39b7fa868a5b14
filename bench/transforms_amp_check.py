#!/usr/bin/env python3
"""Whether a `tessera convert amp` result holds its tolerance on inputs it was not tuned on.

  /usr/bin/python3 bench/transforms_amp_check.py --tessera build/src/tessera --original MODEL.onnx
          --converted AMP.onnx --like DIR/test_data_set_0 [--sets 3] [--rtol 1e-2 --atol 1e-3]

Makes --sets new input sets shaped like the tuning inputs in --like (input_<k>.npy): integer inputs
random in [0, their largest tuning value] (token ids stay in the vocabulary) except 0/1 ones (an
attention mask, segment ids: kept as tuned, the same sequence layout), float inputs normal with the
tuning inputs' mean and spread; runs both models
with `tessera run` and prints, per set, the worst element's excess over atol + rtol * |float32|
(<= 1: within tolerance). Exit status 1 when a set breaks it. Needs numpy.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def outputs(tessera, model, inputs, work):
    out = os.path.join(work, "out")
    subprocess.run([tessera, "run", model, "--input-dir", inputs, "-n", "1", "--warmup", "0", "--no-progress",
                    "-o", out], check=True, capture_output=True)
    with open(os.path.join(out, "outputs.json")) as f:
        files = json.load(f)
    return [np.load(os.path.join(out, p)).astype(np.float64) for p in files.values()]


def like(tuning, rng):
    made = []
    for a in tuning:
        if np.issubdtype(a.dtype, np.integer) and int(a.max()) <= 1:
            b = a.copy()  # a mask or segment ids: the same layout of the sequence
        elif np.issubdtype(a.dtype, np.integer):
            b = rng.integers(0, int(a.max()) + 1, size=a.shape).astype(a.dtype)
        elif a.dtype == np.bool_:
            b = rng.integers(0, 2, size=a.shape).astype(bool)
        else:
            b = (rng.standard_normal(a.shape) * (a.std() or 1) + a.mean()).astype(a.dtype)
        made.append(b)
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--original", required=True)
    ap.add_argument("--converted", required=True)
    ap.add_argument("--like", required=True, help="folder of the tuning inputs (input_<k>.npy)")
    ap.add_argument("--sets", type=int, default=3)
    ap.add_argument("--seed", type=int, default=99)
    ap.add_argument("--rtol", type=float, default=1e-2)
    ap.add_argument("--atol", type=float, default=1e-3)
    a = ap.parse_args()
    tuning = []
    while os.path.exists(os.path.join(a.like, f"input_{len(tuning)}.npy")):
        tuning.append(np.load(os.path.join(a.like, f"input_{len(tuning)}.npy")))
    if not tuning:
        sys.exit(f"no input_0.npy in {a.like}")
    rng = np.random.default_rng(a.seed)
    broken = 0
    with tempfile.TemporaryDirectory() as work:
        for s in range(a.sets):
            inputs = os.path.join(work, f"set{s}")
            os.makedirs(inputs)
            for k, v in enumerate(like(tuning, rng)):
                np.save(os.path.join(inputs, f"input_{k}.npy"), v)
            ref = outputs(a.tessera, a.original, inputs, work)
            got = outputs(a.tessera, a.converted, inputs, work)
            worst = max(float(((np.abs(r - g) - a.rtol * np.abs(r)) / a.atol).max()) for r, g in zip(ref, got))
            broken += worst > 1
            print(f"set {s} (seed {a.seed}): worst excess {worst:.3g}x the tolerance", flush=True)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
