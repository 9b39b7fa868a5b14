#!/usr/bin/env python3
"""Resident memory of `tessera run` on a Llama-style decoder, against the size of its weights.

A weight kept in a kernel's own layout (the GEMM's packed panels) must not be held a second time in its
original form: the session releases the original and gives a memory-mapped file's pages back. This
exports a Llama-style decoder (RMSNorm, rotary embeddings, causal attention, SiLU-gated MLP; random
weights, nothing downloaded) with Debian's PyTorch, runs it with each `tessera` given (say, an older
build and this one) and prints peak resident memory (ru_maxrss of the child) over the weight bytes.

Usage: /usr/bin/python3 bench/weight_memory.py --tessera build/src/tessera [--tessera OTHER] [--work DIR]
       [--hidden 1024 --layers 8 --intermediate 2816 --vocab 32000 --seq 64] [--markdown FILE]
"""
import argparse
import math
import os
import subprocess
import sys
import time

import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Block(nn.Module):
    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.heads, self.dim = heads, hidden // heads
        self.attn_norm, self.mlp_norm = RMSNorm(hidden), RMSNorm(hidden)
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden, bias=False) for _ in range(4))
        self.gate = nn.Linear(hidden, intermediate, bias=False)
        self.up = nn.Linear(hidden, intermediate, bias=False)
        self.down = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, h = x.shape
        y = self.attn_norm(x)
        q, k, v = (p(y).view(b, s, self.heads, self.dim).transpose(1, 2) for p in (self.q, self.k, self.v))
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dim) + mask, dim=-1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(b, s, h))
        y = self.mlp_norm(x)
        return x + self.down(torch.nn.functional.silu(self.gate(y)) * self.up(y))


class Decoder(nn.Module):
    def __init__(self, hidden, heads, layers, intermediate, vocab, seq):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads, intermediate) for _ in range(layers))
        self.norm = RMSNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)
        dim = hidden // heads
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        ang = torch.outer(torch.arange(seq).float(), inv)
        self.register_buffer("cos", torch.cat((ang, ang), -1).cos()[None, None])
        self.register_buffer("sin", torch.cat((ang, ang), -1).sin()[None, None])
        self.register_buffer("mask", torch.full((seq, seq), float("-inf")).triu(1)[None, None])

    def forward(self, ids):
        x = self.embed(ids)
        for blk in self.blocks:
            x = blk(x, self.cos, self.sin, self.mask)
        return self.head(self.norm(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessera", action="append", required=True)
    ap.add_argument("--work", default="/tmp/tessera-weight-memory")
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--intermediate", type=int, default=2816)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--markdown")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    path = os.path.join(a.work, f"llama_h{a.hidden}_l{a.layers}.onnx")
    if not os.path.exists(path):
        torch.manual_seed(0)
        m = Decoder(a.hidden, a.heads, a.layers, a.intermediate, a.vocab, a.seq).eval()
        ids = torch.randint(0, a.vocab, (1, a.seq))
        t0 = time.time()
        torch.onnx.export(m, (ids,), path, input_names=["input_ids"], output_names=["logits"], opset_version=17)
        print(f"exported {path} in {time.time() - t0:.1f} s", file=sys.stderr)
    weight_mib = os.path.getsize(path) / 2**20
    rows = []
    for binary in a.tessera:
        # One child process per measurement: ru_maxrss of children only grows.
        code = ("import resource,subprocess,sys;"
                "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
                "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss);sys.exit(p.returncode)")
        cmd = [sys.executable, "-c", code, binary, "run", path, "-n", "2", "--warmup", "0", "--threads",
               str(a.threads), "--no-progress"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stdout + p.stderr, file=sys.stderr)
            sys.exit(f"{binary} failed")
        rss = int(p.stdout.strip().splitlines()[-1]) / 1024.0
        rows.append((binary, rss))
    lines = [f"Llama-style decoder, hidden {a.hidden}, {a.layers} layers, vocab {a.vocab}, sequence {a.seq}: "
             f"{weight_mib:.0f} MiB file, {a.threads} threads",
             "", "| tessera | peak resident MiB | peak / file size |", "| --- | ---: | ---: |"]
    lines += [f"| `{b}` | {r:.0f} | {r / weight_mib:.2f} |" for b, r in rows]
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
