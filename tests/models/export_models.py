#!/usr/bin/env python3
"""Exports the real models Tessera's CPU engine is tested on, with reference outputs from PyTorch.

Usage: export_models.py OUT_DIR [--models resnet50,mobilenet_v2,...] [--batch 1] [--opset 17] [--force]

For each model it writes, in the ONNX conformance test layout:
  OUT_DIR/<name>/model.onnx
  OUT_DIR/<name>/test_data_set_0/input_<k>.pb  and input_<k>.npy   (the inputs, fixed seed)
  OUT_DIR/<name>/test_data_set_0/output_<k>.pb and output_<k>.npy  (what PyTorch computes, float32)
  OUT_DIR/<name>/export.json                                       (how it was made)

All weights are random (torch.manual_seed(0) before building, torchvision weights=None): nothing is
downloaded. Needs torch, torchvision, onnx and numpy: on Debian 12, python3-torch, python3-torchvision,
python3-onnx and python3-numpy, so run it with /usr/bin/python3 where `python3` is a pyenv or venv
python that does not see Debian's packages.

bench/peers/run_peers.py imports build_model() and make_inputs() from here to rebuild the same models.
"""
import argparse
import inspect
import json
import math
import os
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn

WEIGHT_SEED = 0      # torch.manual_seed before building a model: same seed, same weights
INPUT_SEED = 1234    # generator for the random inputs

TORCHVISION_MODELS = ["resnet50", "mobilenet_v2", "efficientnet_b0", "vit_b_16"]

BERT_CONFIGS = {
    # BERT-base sizes.
    "bert_base": dict(hidden=768, heads=12, layers=12, intermediate=3072, vocab=30522,
                      max_positions=512, type_vocab=2, seq=128),
    # A small BERT-style encoder: same structure, quick to export and run.
    "bert_encoder": dict(hidden=256, heads=4, layers=4, intermediate=1024, vocab=30522,
                         max_positions=512, type_vocab=2, seq=128),
}

GPT2_CONFIGS = {
    # GPT-2 small: 12 pre-norm decoder layers with causal self-attention, 768 wide.
    "gpt2": dict(hidden=768, heads=12, layers=12, vocab=50257, max_positions=1024, seq=128),
}

ALL_MODELS = TORCHVISION_MODELS + list(BERT_CONFIGS) + list(GPT2_CONFIGS)
DEFAULT_MODELS = ["resnet50", "mobilenet_v2", "efficientnet_b0", "vit_b_16", "bert_encoder"]

GPT2_INPUTS = ["input_ids"]
GPT2_OUTPUTS = ["last_hidden_state"]
BERT_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]
BERT_OUTPUTS = ["last_hidden_state", "pooler_output"]
IMAGE_INPUTS = ["input"]
IMAGE_OUTPUTS = ["output"]


# ---------------------------------------------------------------------------------------------
# A BERT-style encoder, written out op by op (no nn.MultiheadAttention, no nn.GELU).

def gelu_erf(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        assert hidden % heads == 0
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, hidden)

    # The batch stays a traced size (a dynamic axis in the export); int() makes the sequence length a
    # constant of the graph, so shape inference keeps it (it is fixed in the exported model anyway).
    def split_heads(self, x):  # [b, s, h*d] -> [b, h, s, d]
        return x.reshape(x.size(0), int(x.size(1)), self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, additive_mask):
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + additive_mask, dim=-1)
        context = torch.matmul(probs, v).transpose(1, 2)             # [b, s, h, d]
        context = context.reshape(x.size(0), int(x.size(1)), self.heads * self.head_dim)
        return self.output(context)


class EncoderLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate, eps):
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.attention_norm = nn.LayerNorm(hidden, eps=eps)
        self.ffn_in = nn.Linear(hidden, intermediate)
        self.ffn_out = nn.Linear(intermediate, hidden)
        self.ffn_norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x, additive_mask):
        x = self.attention_norm(x + self.attention(x, additive_mask))
        return self.ffn_norm(x + self.ffn_out(gelu_erf(self.ffn_in(x))))


class BertEncoder(nn.Module):
    """Token + position + segment embeddings, LayerNorm, N post-norm encoder layers, tanh pooler."""

    def __init__(self, hidden=768, heads=12, layers=12, intermediate=3072, vocab=30522,
                 max_positions=512, type_vocab=2, eps=1e-12, **_):
        super().__init__()
        self.token_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.segment_embeddings = nn.Embedding(type_vocab, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=eps)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, intermediate, eps) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)
        self.register_buffer("position_ids", torch.arange(max_positions).unsqueeze(0), persistent=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):  # BERT's initialisation: N(0, 0.02), zero biases, unit LayerNorm
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.bias)
        if isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)

    def forward(self, input_ids, attention_mask, token_type_ids):
        # int(): the exported graph has a fixed sequence length (only the batch is dynamic), so the
        # position slice folds to a constant and shape inference keeps the sequence dimension.
        seq = int(input_ids.size(1))
        x = (self.token_embeddings(input_ids)
             + self.position_embeddings(self.position_ids[:, :seq])
             + self.segment_embeddings(token_type_ids))
        x = self.embedding_norm(x)
        # [b, s] int64 (1 keep, 0 masked) -> additive [b, 1, 1, s] float: 0 or -10000
        additive_mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, additive_mask)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


# A GPT-2-style decoder (GPT-2 small's sizes), op by op like the encoder above.

def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


class DecoderLayer(nn.Module):
    def __init__(self, hidden, heads, eps):
        super().__init__()
        self.attention_norm = nn.LayerNorm(hidden, eps=eps)
        self.attention = SelfAttention(hidden, heads)  # causal through the additive mask
        self.ffn_norm = nn.LayerNorm(hidden, eps=eps)
        self.ffn_in = nn.Linear(hidden, 4 * hidden)
        self.ffn_out = nn.Linear(4 * hidden, hidden)

    def forward(self, x, additive_mask):
        x = x + self.attention(self.attention_norm(x), additive_mask)
        return x + self.ffn_out(gelu_tanh(self.ffn_in(self.ffn_norm(x))))


class Gpt2Decoder(nn.Module):
    """Token + position embeddings, N pre-norm decoder layers with a causal mask, final LayerNorm."""

    def __init__(self, hidden=768, heads=12, layers=12, vocab=50257, max_positions=1024, eps=1e-5, **_):
        super().__init__()
        self.token_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.layers = nn.ModuleList(DecoderLayer(hidden, heads, eps) for _ in range(layers))
        self.final_norm = nn.LayerNorm(hidden, eps=eps)
        causal = torch.triu(torch.full((max_positions, max_positions), -10000.0), diagonal=1)
        self.register_buffer("causal_mask", causal, persistent=False)
        self.register_buffer("position_ids", torch.arange(max_positions).unsqueeze(0), persistent=False)
        self.apply(BertEncoder._init_weights)

    def forward(self, input_ids):
        seq = int(input_ids.size(1))
        x = self.token_embeddings(input_ids) + self.position_embeddings(self.position_ids[:, :seq])
        mask = self.causal_mask[:seq, :seq].to(x.dtype)[None, None]  # [1, 1, s, s] additive
        for layer in self.layers:
            x = layer(x, mask)
        return self.final_norm(x)


# ---------------------------------------------------------------------------------------------
# What run_peers.py imports.

def is_bert(name):
    return name in BERT_CONFIGS


def is_gpt2(name):
    return name in GPT2_CONFIGS


def io_names(name):
    if is_gpt2(name):
        return GPT2_INPUTS, GPT2_OUTPUTS
    return (BERT_INPUTS, BERT_OUTPUTS) if is_bert(name) else (IMAGE_INPUTS, IMAGE_OUTPUTS)


def make_nontrivial(model, image_model):
    """Makes a freshly initialised model a useful test: non-constant parameters, O(1) activations.

    A model straight from its initialiser computes next to nothing worth comparing: torchvision's
    ViT zero-initialises its head (every output is exactly 0); BatchNorm's running statistics
    (mean 0, variance 1) do not match the activations, so MobileNetV2's outputs are ~1e-9 and
    EfficientNet-B0's ~1e-14 while ResNet-50's grow to ~100; and every bias is 0 and every norm
    scale 1, so an engine that dropped them would still pass (the exporter even folds the
    identical tensors into one, through Identity nodes). So, deterministically:
      1. every parameter whose elements are all equal (zero biases, unit norm scales, ViT's zero
         head and class token) is redrawn: zeros from N(0, 0.05^2), anything else c*U(0.8, 1.2);
      2. BatchNorm running statistics are set to the true batch statistics of a fixed random
         batch (one forward pass with only the BatchNorm layers in training mode), single-threaded
         so the result does not depend on the thread count.
    """
    g = torch.Generator().manual_seed(WEIGHT_SEED + 1)
    with torch.no_grad():
        for _, p in model.named_parameters():
            flat = p.detach().reshape(-1)
            if flat.numel() == 0 or not bool(torch.all(flat == flat[0])):
                continue
            c = float(flat[0])
            if c == 0.0:
                p.copy_(torch.randn(p.shape, generator=g) * 0.05)
            else:
                p.copy_(c * (0.8 + 0.4 * torch.rand(p.shape, generator=g)))
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if bns and image_model:
        model.eval()
        for bn in bns:
            bn.reset_running_stats()
            bn.momentum = None        # cumulative average: after one pass, exactly that batch's statistics
            bn.train()
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.no_grad():
                model(torch.randn(4, 3, 224, 224, generator=g))
        finally:
            torch.set_num_threads(threads)
        for bn in bns:
            bn.momentum = 0.1
    return model.eval()


def build_model(name):
    """The model with its random weights, in eval mode; the same weights on every call."""
    torch.manual_seed(WEIGHT_SEED)
    np.random.seed(WEIGHT_SEED)
    if is_bert(name):
        model = BertEncoder(**BERT_CONFIGS[name])
    elif is_gpt2(name):
        model = Gpt2Decoder(**GPT2_CONFIGS[name])
    elif name in TORCHVISION_MODELS:
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
    else:
        raise ValueError(f"unknown model '{name}' (known: {', '.join(ALL_MODELS)})")
    return make_nontrivial(model, image_model=not (is_bert(name) or is_gpt2(name)))


def make_inputs(name, batch):
    """The fixed-seed inputs, as a tuple of tensors in the model's input order."""
    g = torch.Generator().manual_seed(INPUT_SEED)
    if is_gpt2(name):
        cfg = GPT2_CONFIGS[name]
        return (torch.randint(0, cfg["vocab"], (batch, cfg["seq"]), generator=g, dtype=torch.int64),)
    if not is_bert(name):
        return (torch.randn(batch, 3, 224, 224, generator=g),)
    cfg = BERT_CONFIGS[name]
    seq, pad = cfg["seq"], 16
    input_ids = torch.randint(1000, cfg["vocab"], (batch, seq), generator=g, dtype=torch.int64)
    input_ids[:, 0] = 101                       # [CLS]
    input_ids[:, seq - pad - 1] = 102           # [SEP]
    input_ids[:, seq - pad:] = 0                # [PAD]
    attention_mask = torch.ones(batch, seq, dtype=torch.int64)
    attention_mask[:, seq - pad:] = 0           # the last 16 positions are padding
    token_type_ids = torch.zeros(batch, seq, dtype=torch.int64)
    token_type_ids[:, seq // 2:seq - pad] = 1   # a second segment
    return (input_ids, attention_mask, token_type_ids)


def run_model(model, inputs):
    """The model's outputs as a list of float32 numpy arrays."""
    with torch.no_grad():
        out = model(*inputs)
    if isinstance(out, torch.Tensor):
        out = (out,)
    return [o.detach().to(torch.float32).numpy() for o in out]


# ---------------------------------------------------------------------------------------------

def model_files(out_dir, name, n_inputs, n_outputs):
    d = os.path.join(out_dir, name)
    data = os.path.join(d, "test_data_set_0")
    files = [os.path.join(d, "model.onnx"), os.path.join(d, "export.json")]
    for k in range(n_inputs):
        files += [os.path.join(data, f"input_{k}.pb"), os.path.join(data, f"input_{k}.npy")]
    for k in range(n_outputs):
        files += [os.path.join(data, f"output_{k}.pb"), os.path.join(data, f"output_{k}.npy")]
    return files


def write_tensor(path_stem, array, tensor_name):
    from onnx import numpy_helper
    np.save(path_stem + ".npy", array)
    with open(path_stem + ".pb", "wb") as f:
        f.write(numpy_helper.from_array(array, tensor_name).SerializeToString())


# torch >= 2.9 exports through dynamo by default; ask for the TorchScript exporter that torch 1.13
# (Debian 12) has, so the graphs come out the same everywhere.
EXPORT_EXTRA = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}


def export_one(name, out_dir, batch, opset, exporter="torchscript"):
    import onnx
    input_names, output_names = io_names(name)
    d = os.path.join(out_dir, name)
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx_path = os.path.join(d, "model.onnx")
    if os.path.exists(os.path.join(d, "export.json")):   # an export cut short must not look complete
        os.remove(os.path.join(d, "export.json"))

    t0 = time.perf_counter()
    model = build_model(name)
    params = sum(p.numel() for p in model.parameters())
    inputs = make_inputs(name, batch)
    t_build = time.perf_counter() - t0

    t0 = time.perf_counter()
    expected = run_model(model, inputs)
    t_ref = time.perf_counter() - t0

    dynamic_axes = {n: {0: "batch"} for n in input_names + output_names}
    # Under no_grad, eval-mode nn.MultiheadAttention (ViT) takes PyTorch's fused fast path,
    # aten::_native_multi_head_attention, which has no ONNX export. With grad enabled (and the
    # weights requiring grad) it runs the plain ops, which export; the math is the same.
    uses_mha = any(isinstance(m, nn.MultiheadAttention) for m in model.modules())
    grad_mode = torch.enable_grad() if uses_mha else torch.no_grad()
    t0 = time.perf_counter()
    with grad_mode, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about shape asserts turned constants
        if exporter == "dynamo":
            # torch.export-based exporter, the default of PyTorch 2.9+: opset 18 or newer, static shapes.
            torch.onnx.export(model, tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,), onnx_path,
                              opset_version=max(opset, 18), input_names=input_names, output_names=output_names,
                              dynamo=True, external_data=False)
        else:
            torch.onnx.export(model, inputs, onnx_path, opset_version=opset, do_constant_folding=True,
                              input_names=input_names, output_names=output_names,
                              dynamic_axes=dynamic_axes, **EXPORT_EXTRA)
    t_export = time.perf_counter() - t0

    t0 = time.perf_counter()
    onnx.checker.check_model(onnx_path)
    t_check = time.perf_counter() - t0

    for k, (n, x) in enumerate(zip(input_names, inputs)):
        write_tensor(os.path.join(data, f"input_{k}"), x.numpy(), n)
    for k, (n, y) in enumerate(zip(output_names, expected)):
        write_tensor(os.path.join(data, f"output_{k}"), y, n)

    info = {
        "model": name, "params": params, "batch": batch, "opset": opset,
        "weight_seed": WEIGHT_SEED, "input_seed": INPUT_SEED,
        "config": BERT_CONFIGS.get(name) or GPT2_CONFIGS.get(name), "inputs": input_names, "outputs": output_names,
        "input_shapes": [list(x.shape) for x in inputs], "output_shapes": [list(y.shape) for y in expected],
        "torch": torch.__version__, "onnx": onnx.__version__,
        "export_s": round(t_export, 3), "model_bytes": os.path.getsize(onnx_path),
    }
    try:
        import torchvision
        info["torchvision"] = torchvision.__version__
    except ImportError:
        pass
    with open(os.path.join(d, "export.json"), "w") as f:   # written last: marks a complete export
        json.dump(info, f, indent=2)
        f.write("\n")
    return params, t_build, t_ref, t_export, t_check, os.path.getsize(onnx_path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=f"models: {', '.join(ALL_MODELS)}")
    ap.add_argument("out_dir", metavar="OUT_DIR")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help="comma-separated (default: %(default)s; also: bert_base)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--force", action="store_true", help="export again even if the files exist")
    ap.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript",
                    help="torchscript (torch 1.13's, and torch.onnx.export(dynamo=False)) or dynamo "
                         "(torch >= 2.9's default; opset 18+)")
    args = ap.parse_args(argv)

    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in ALL_MODELS]
    if unknown:
        ap.error(f"unknown model(s): {', '.join(unknown)} (known: {', '.join(ALL_MODELS)})")
    if args.batch < 1:
        ap.error("--batch must be at least 1")

    os.makedirs(args.out_dir, exist_ok=True)
    print(f"torch {torch.__version__}, opset {args.opset}, batch {args.batch}, out {args.out_dir}", flush=True)
    failed = []
    for i, name in enumerate(names, 1):
        ins, outs = io_names(name)
        tag = f"[{i}/{len(names)}] {name}"
        if not args.force and all(os.path.exists(f) for f in model_files(args.out_dir, name, len(ins), len(outs))):
            print(f"{tag}: files exist, skipped (--force to export again)", flush=True)
            continue
        print(f"{tag}: exporting ...", flush=True)
        try:
            params, t_build, t_ref, t_export, t_check, size = export_one(name, args.out_dir, args.batch, args.opset, args.exporter)
        except Exception as e:  # report and go on with the other models
            print(f"{tag}: FAILED: {type(e).__name__}: {e}", flush=True)
            failed.append(name)
            continue
        print(f"{tag}: {params / 1e6:.2f} M params, build {t_build:.1f} s, reference outputs {t_ref:.1f} s, "
              f"export {t_export:.1f} s, check {t_check:.1f} s, model.onnx {size / 2**20:.1f} MiB", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
