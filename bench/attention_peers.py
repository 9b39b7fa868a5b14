#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention at the shapes of Tessera's attention micro-benchmark
(tests/cuda/attention_bench_test.cpp: BERT-base with a [B,1,1,S] padding bias, GPT-2 causal, ViT-B/16;
12 heads of 64, float16), each SDPA backend replayed from a CUDA graph and timed with CUDA events, so the
micro-benchmark's figures have a peer measured in the same run on the same GPU.

  python3 bench/attention_peers.py            # prints a table: us and TFLOP/s per backend
"""
import sys
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [("bert", 1, 128), ("bert", 32, 128), ("gpt2", 1, 128), ("gpt2", 32, 128), ("vit", 1, 197),
          ("vit", 32, 197)]
BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
            ("cudnn", SDPBackend.CUDNN_ATTENTION)]


def median_us(fn, iters=50, per_graph=20):
    """Device time of one call: `per_graph` calls captured in a CUDA graph and replayed, so that the
    Python and dispatch overhead of each call (tens of microseconds) is not what gets timed."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(per_graph):
            fn()
    graph.replay()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        graph.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0 / per_graph)
    times.sort()
    return times[len(times) // 2]


def main():
    torch.manual_seed(0)
    warnings.filterwarnings("ignore")  # each declined backend warns why; the table says n/a
    dev = "cuda"
    print(f"| shape | {' | '.join(n for n, _ in BACKENDS)} |")
    print(f"| --- | {' | '.join('---' for _ in BACKENDS)} |")
    for model, b, s in SHAPES:
        q, k, v = (torch.randn(b, 12, s, 64, device=dev, dtype=torch.float16) for _ in range(3))
        mask = None
        if model == "bert":
            mask = -torch.rand(b, 1, 1, s, device=dev, dtype=torch.float16)
        causal = model == "gpt2"
        flop = 4.0 * b * 12 * s * s * 64 / (2 if causal else 1)
        cells = []
        for _, backend in BACKENDS:
            try:
                with sdpa_kernel(backend):
                    us = median_us(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                                          is_causal=causal))
                cells.append(f"{us:.1f} us {flop / (us * 1e6):.1f} TF/s")
            except RuntimeError:  # the backend declines this shape or mask
                cells.append("n/a")
        print(f"| {model} b{b} s{s} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
