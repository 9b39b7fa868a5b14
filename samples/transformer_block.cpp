#include <cmath>

#include "ir/builder.h"
#include "samples.h"

namespace tessera::samples {

using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::Type;

namespace {

constexpr int64_t kHidden = 256;
constexpr int64_t kHeads = 4;
constexpr int64_t kHeadSize = kHidden / kHeads;
constexpr int64_t kFfn = 1024;

// Weights are random, or (for benchmarks of the checker on huge graphs) shape-only tensors without data.
struct Weights {
  ir::GraphBuilder& b;
  bool with_data;
  std::string normal(const std::string& name, std::vector<int64_t> dims, float stddev) {
    if (with_data) return b.random_normal(name, std::move(dims), stddev);
    ir::Tensor t;
    t.name = name;
    t.dtype = DataType::kFloat;
    t.dims = std::move(dims);
    return b.initializer(std::move(t));
  }
};

std::string linear(ir::GraphBuilder& b, Weights& wt, const std::string& name, const std::string& x,
                   int64_t in, int64_t out) {
  auto w = wt.normal(name + ".weight", {in, out}, 1.0f / std::sqrt(static_cast<float>(in)));
  auto bias = b.constant_floats(name + ".bias", {out}, 0.0f);
  auto y = b.node("MatMul", {x, w}, {}, name + "_matmul");
  return b.node("Add", {y, bias}, {}, name);
}

std::string layer_norm(ir::GraphBuilder& b, const std::string& name, const std::string& x) {
  auto scale = b.constant_floats(name + ".weight", {kHidden}, 1.0f);
  auto bias = b.constant_floats(name + ".bias", {kHidden}, 0.0f);
  return b.node("LayerNormalization", {x, scale, bias},
                {Attribute::of_int("axis", -1), Attribute::of_float("epsilon", 1e-5f)}, name);
}

// [batch, seq, hidden] -> [batch, heads, seq, head_size], the Reshape target built from Shape so the
// symbolic batch and sequence sizes survive, as PyTorch's exporter writes it.
std::string split_heads(ir::GraphBuilder& b, const std::string& name, const std::string& x,
                        const std::string& batch_seq) {
  auto tail = b.constant_ints(name + ".heads_shape", {kHeads, kHeadSize});
  auto shape = b.node("Concat", {batch_seq, tail}, {Attribute::of_int("axis", 0)}, name + "_shape");
  auto r = b.node("Reshape", {x, shape}, {}, name + "_reshape");
  return b.node("Transpose", {r}, {Attribute::of_ints("perm", {0, 2, 1, 3})}, name);
}

}  // namespace

ir::Model make_transformer_block() {
  return make_transformer(1, true);
}

ir::Model make_transformer(int layers, bool with_weights) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports.push_back({"", 17});
  m.producer_name = "tessera-samples";
  m.doc_string = "Pre-norm transformer encoder blocks (random weights).";
  m.graph.name = layers == 1 ? "transformer_block" : "transformer";
  ir::GraphBuilder b(m.graph);
  Weights wt{b, with_weights};

  Type act =
      Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("batch"), Dim::symbol("seq"), Dim::of(kHidden)});
  auto x = b.input("hidden", act);

  auto shape = b.node("Shape", {x}, {}, "input_shape");
  auto starts = b.constant_ints("slice.starts", {0});
  auto ends = b.constant_ints("slice.ends", {2});
  auto batch_seq = b.node("Slice", {shape, starts, ends}, {}, "batch_seq");

  for (int layer = 0; layer < layers; ++layer) {
    std::string p = layers == 1 ? "" : "l" + std::to_string(layer) + ".";
    // Self-attention.
    auto ln1 = layer_norm(b, p + "ln_1", x);
    auto q = split_heads(b, p + "q_heads", linear(b, wt, p + "attn.q", ln1, kHidden, kHidden), batch_seq);
    auto k = split_heads(b, p + "k_heads", linear(b, wt, p + "attn.k", ln1, kHidden, kHidden), batch_seq);
    auto v = split_heads(b, p + "v_heads", linear(b, wt, p + "attn.v", ln1, kHidden, kHidden), batch_seq);
    auto kt = b.node("Transpose", {k}, {Attribute::of_ints("perm", {0, 1, 3, 2})}, p + "k_transposed");
    auto scores = b.node("MatMul", {q, kt}, {}, p + "attn_scores");
    auto scale = b.constant_floats(p + "attn.scale", {}, 1.0f / std::sqrt(static_cast<float>(kHeadSize)));
    auto scaled = b.node("Mul", {scores, scale}, {}, p + "attn_scaled");
    auto probs = b.node("Softmax", {scaled}, {Attribute::of_int("axis", -1)}, p + "attn_probs");
    auto ctx = b.node("MatMul", {probs, v}, {}, p + "attn_context");
    auto merged = b.node("Transpose", {ctx}, {Attribute::of_ints("perm", {0, 2, 1, 3})}, p + "attn_merge");
    auto hidden_dim = b.constant_ints(p + "attn.hidden_shape", {kHidden});
    auto out_shape =
        b.node("Concat", {batch_seq, hidden_dim}, {Attribute::of_int("axis", 0)}, p + "attn_out_shape");
    auto flat = b.node("Reshape", {merged, out_shape}, {}, p + "attn_flatten");
    auto attn = linear(b, wt, p + "attn.out", flat, kHidden, kHidden);
    auto h = b.node("Add", {x, attn}, {}, p + "residual_1");

    // Feed-forward with GELU(x) = x * 0.5 * (1 + erf(x / sqrt(2))).
    auto ln2 = layer_norm(b, p + "ln_2", h);
    auto up = linear(b, wt, p + "ffn.up", ln2, kHidden, kFfn);
    auto sqrt2 = b.constant_floats(p + "gelu.sqrt2", {}, std::sqrt(2.0f));
    auto one = b.constant_floats(p + "gelu.one", {}, 1.0f);
    auto half = b.constant_floats(p + "gelu.half", {}, 0.5f);
    auto erf = b.node("Erf", {b.node("Div", {up, sqrt2}, {}, p + "gelu_div")}, {}, "gelu_erf");
    auto gelu = b.node(
        "Mul", {b.node("Mul", {up, b.node("Add", {erf, one}, {}, p + "gelu_add")}, {}, "gelu_mul"), half}, {},
        "gelu");
    auto down = linear(b, wt, p + "ffn.down", gelu, kFfn, kHidden);
    x = b.node("Add", {h, down}, {}, p + "residual_2");
  }
  b.output(x, act);
  return m;
}

}  // namespace tessera::samples
