// Reference kernels of the com.microsoft transformer operators (Attention, MultiHeadAttention,
// GroupQueryAttention, RotaryEmbedding, EmbedLayerNormalization, MatMulNBits), checked against the same
// computation written with standard ONNX operators (MatMul, Softmax, Transpose, Gather,
// LayerNormalization, RotaryEmbedding-23...) on seeded random inputs, against small hand-computed
// cases, against each other (packed and unpacked layouts, a decode step against the full prompt), and
// on bad inputs, which must give a clear error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/model.h"
#include "runtime/half.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace tessera {
namespace {

using ir::Attribute;
using ir::DataType;
using rt::Tensor;

// --- Tensors -------------------------------------------------------------------------------------------

Tensor f32(rt::Shape shape, std::vector<float> v) {
  return Tensor::from_vector<float>(DataType::kFloat, std::move(shape), v);
}
Tensor f16(rt::Shape shape, const std::vector<float>& v) {
  std::vector<rt::Float16> h(v.begin(), v.end());
  return Tensor::from_vector<rt::Float16>(DataType::kFloat16, std::move(shape), h);
}
Tensor i32(rt::Shape shape, std::vector<int32_t> v) {
  return Tensor::from_vector<int32_t>(DataType::kInt32, std::move(shape), v);
}
Tensor i64(rt::Shape shape, std::vector<int64_t> v) {
  return Tensor::from_vector<int64_t>(DataType::kInt64, std::move(shape), v);
}
Tensor u8(rt::Shape shape, std::vector<uint8_t> v) {
  return Tensor::from_vector<uint8_t>(DataType::kUint8, std::move(shape), v);
}

int64_t numel(const rt::Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<float> randoms(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}
Tensor rand32(rt::Shape shape, uint32_t seed) {
  return f32(shape, randoms(numel(shape), seed));
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> out;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.dtype() == DataType::kFloat16)
      out.push_back(static_cast<float>(t.data<rt::Float16>()[i]));
    else
      out.push_back(t.data<float>()[i]);
  }
  return out;
}
// A float16 copy of a float tensor, and the float tensor its values round to (the reference input).
Tensor to_f16(const Tensor& t) {
  return f16(t.shape(), floats(t));
}
Tensor rounded(const Tensor& t) {
  return f32(t.shape(), floats(to_f16(t)));
}

void expect_close(const Tensor& got, const Tensor& want, float tol) {
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<float> g = floats(got), w = floats(want);
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], tol) << "element " << i;
}
void expect_values(const Tensor& got, const std::vector<float>& want, float tol) {
  std::vector<float> g = floats(got);
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], tol) << "element " << i;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// --- Models --------------------------------------------------------------------------------------------

// A model under construction: inputs fed from tensors, standard (opset 23) and com.microsoft nodes.
class Net {
 public:
  Net() {
    m_.ir_version = 10;
    m_.opset_imports = {{"", 23}, {"com.microsoft", 1}};
  }
  std::string in(const Tensor& t) {
    if (!t.defined()) return "";
    std::string name = "in";
    name += std::to_string(feeds_.size());
    b_.input(name, ir::Type::tensor(t.dtype()));
    feeds_.emplace_back(name, rt::Value(t));
    return name;
  }
  std::string ints(std::vector<int64_t> v) {
    std::string name = "c";
    name += std::to_string(consts_++);
    return b_.constant_ints(name, std::move(v));
  }
  std::string op(const std::string& type, std::vector<std::string> ins, std::vector<Attribute> attrs = {}) {
    return b_.node(type, std::move(ins), std::move(attrs));
  }
  std::vector<std::string> ms(const std::string& type, std::vector<std::string> ins,
                              std::vector<Attribute> attrs, size_t outputs) {
    return b_.nodes(type, std::move(ins), std::move(attrs), {}, outputs, "com.microsoft");
  }
  std::vector<Tensor> run(const std::vector<std::string>& outs) {
    for (const auto& o : outs) b_.output(o);
    rt::Session s(std::move(m_), {.threads = 2});
    std::vector<Tensor> result;
    for (auto& v : s.run(feeds_)) result.push_back(v.tensor());
    return result;
  }

  // (B, S, N * H) -> (B, N, S, H)
  std::string heads(const std::string& x, int64_t b, int64_t s, int64_t n, int64_t h) {
    return op("Transpose", {op("Reshape", {x, ints({b, s, n, h})})},
              {Attribute::of_ints("perm", {0, 2, 1, 3})});
  }
  // softmax(q k^T * scale + mask) v on (B, N, S, H) operands, back to (B, S, N * Hv).
  std::string attention(const std::string& q, const std::string& k, const std::string& v,
                        const std::string& mask, float scale, int64_t b, int64_t s, int64_t n, int64_t hv) {
    std::string kt = op("Transpose", {k}, {Attribute::of_ints("perm", {0, 1, 3, 2})});
    std::string scores = op("Mul", {op("MatMul", {q, kt}), in(f32({}, {scale}))});
    if (!mask.empty()) scores = op("Add", {scores, mask});
    std::string p = op("Softmax", {scores}, {Attribute::of_int("axis", -1)});
    std::string o = op("Transpose", {op("MatMul", {p, v})}, {Attribute::of_ints("perm", {0, 2, 1, 3})});
    return op("Reshape", {o, ints({b, s, n * hv})});
  }

 private:
  ir::Model m_;
  ir::GraphBuilder b_{m_.graph};
  std::vector<std::pair<std::string, rt::Value>> feeds_;
  int consts_ = 0;
};

// One com.microsoft node; an undefined Tensor leaves that input out.
std::vector<Tensor> run_ms(const std::string& op, const std::vector<Tensor>& ins,
                           std::vector<Attribute> attrs, size_t outputs = 1) {
  Net net;
  std::vector<std::string> names;
  for (const Tensor& t : ins) names.push_back(net.in(t));
  return net.run(net.ms(op, names, std::move(attrs), outputs));
}

std::string error_of(const std::string& op, const std::vector<Tensor>& ins, std::vector<Attribute> attrs,
                     size_t outputs = 1) {
  try {
    run_ms(op, ins, std::move(attrs), outputs);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// An additive mask (B, 1, S, T) from a predicate "key j hidden from row i of batch b".
template <class F>
Tensor additive_mask(int64_t b, int64_t s, int64_t t, float value, F hidden) {
  std::vector<float> m(static_cast<size_t>(b * s * t), 0.0f);
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t i = 0; i < s; ++i)
      for (int64_t j = 0; j < t; ++j)
        if (hidden(bi, i, j)) m[static_cast<size_t>((bi * s + i) * t + j)] = value;
  return f32({b, 1, s, t}, m);
}

// Columns [c0, c0 + n) of a 2-D float tensor, or of a 1-D one.
Tensor columns(const Tensor& t, int64_t c0, int64_t n) {
  std::vector<float> v = floats(t), out;
  const int64_t rows = t.rank() == 2 ? t.dim(0) : 1, cols = t.dim(-1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = c0; c < c0 + n; ++c) out.push_back(v[static_cast<size_t>(r * cols + c)]);
  return t.rank() == 2 ? f32({rows, n}, out) : f32({n}, out);
}

// --- Attention -----------------------------------------------------------------------------------------

struct AttnCase {
  int64_t b = 2, s = 3, din = 8, n = 2, qh = 8, vh = 8, past = 0;
  bool causal = false;
  Tensor mask;      // int32 mask_index
  Tensor ref_mask;  // its additive form for the reference (B, 1, S, T)
  std::optional<float> scale;
};

// The contrib Attention against MatMul + Add projections and the standard-op attention.
void check_attention(const AttnCase& c, bool half) {
  Tensor x = rand32({c.b, c.s, c.din}, 1);
  Tensor w = rand32({c.din, 2 * c.qh + c.vh}, 2);
  Tensor bias = rand32({2 * c.qh + c.vh}, 3);
  const int64_t head = c.qh / c.n, vhead = c.vh / c.n, total = c.past + c.s;
  Tensor past = c.past ? rand32({2, c.b, c.n, c.past, head}, 4) : Tensor();
  if (half)
    x = rounded(x), w = rounded(w), bias = rounded(bias), past = past.defined() ? rounded(past) : past;
  std::vector<Attribute> attrs = {Attribute::of_int("num_heads", c.n),
                                  Attribute::of_int("unidirectional", c.causal)};
  if (c.qh != c.vh) attrs.push_back(Attribute::of_ints("qkv_hidden_sizes", {c.qh, c.qh, c.vh}));
  if (c.scale) attrs.push_back(Attribute::of_float("scale", *c.scale));
  auto cvt = [&](const Tensor& t) { return half && t.defined() ? to_f16(t) : t; };
  std::vector<Tensor> got =
      run_ms("Attention", {cvt(x), cvt(w), cvt(bias), c.mask, cvt(past)}, attrs, c.past ? 2 : 1);

  Net net;
  std::string xn = net.in(x);
  auto proj = [&](int64_t c0, int64_t n) {
    return net.op("Add", {net.op("MatMul", {xn, net.in(columns(w, c0, n))}), net.in(columns(bias, c0, n))});
  };
  std::string q = net.heads(proj(0, c.qh), c.b, c.s, c.n, head);
  std::string k = net.heads(proj(c.qh, c.qh), c.b, c.s, c.n, head);
  std::string v = net.heads(proj(2 * c.qh, c.vh), c.b, c.s, c.n, vhead);
  std::vector<std::string> outs;
  if (c.past) {
    std::vector<float> pv = floats(past);
    const int64_t half_n = numel(past.shape()) / 2;
    Tensor pk = f32({c.b, c.n, c.past, head}, {pv.begin(), pv.begin() + half_n});
    Tensor pvv = f32({c.b, c.n, c.past, head}, {pv.begin() + half_n, pv.end()});
    k = net.op("Concat", {net.in(pk), k}, {Attribute::of_int("axis", 2)});
    v = net.op("Concat", {net.in(pvv), v}, {Attribute::of_int("axis", 2)});
  }
  Tensor mask = c.ref_mask;
  if (c.causal) {
    std::vector<float> m =
        mask.defined() ? floats(mask) : std::vector<float>(static_cast<size_t>(c.b * c.s * total));
    for (int64_t b = 0; b < c.b; ++b)
      for (int64_t i = 0; i < c.s; ++i)
        for (int64_t j = c.past + i + 1; j < total; ++j)
          m[static_cast<size_t>((b * c.s + i) * total + j)] = -1e30f;
    mask = f32({c.b, 1, c.s, total}, m);
  }
  const float scale = c.scale ? *c.scale : 1.0f / std::sqrt(static_cast<float>(head));
  outs.push_back(net.attention(q, k, v, mask.defined() ? net.in(mask) : "", scale, c.b, c.s, c.n, vhead));
  if (c.past) {
    std::string pk = net.op("Unsqueeze", {k, net.ints({0})}), pv = net.op("Unsqueeze", {v, net.ints({0})});
    outs.push_back(net.op("Concat", {pk, pv}, {Attribute::of_int("axis", 0)}));
  }
  std::vector<Tensor> want = net.run(outs);
  const float tol = half ? 5e-3f : 1e-5f;
  expect_close(got[0], want[0], tol);
  if (c.past) expect_close(got[1], want[1], tol);
}

TEST(ContribAttentionKernels, AttentionMatchesStandardOps) {
  check_attention({}, false);
}

TEST(ContribAttentionKernels, AttentionRawMaskPastCausalScale) {
  AttnCase c;
  c.past = 2;
  c.causal = true;
  c.scale = 0.5f;
  const int64_t total = c.past + c.s;
  // Batch 0 hides key 1, batch 1 hides key 4.
  std::vector<int32_t> raw(static_cast<size_t>(c.b * total), 1);
  raw[1] = 0;
  raw[static_cast<size_t>(total + 4)] = 0;
  c.mask = i32({c.b, total}, raw);
  c.ref_mask = additive_mask(c.b, c.s, total, -10000.0f, [&](int64_t b, int64_t, int64_t j) {
    return raw[static_cast<size_t>(b * total + j)] == 0;
  });
  check_attention(c, false);
}

TEST(ContribAttentionKernels, AttentionFloat16QkvHiddenSizes) {
  AttnCase c;
  c.vh = 4;  // V heads of 2 features, Q/K heads of 4
  c.mask = i32({2}, {2, 3});
  c.ref_mask =
      additive_mask(2, 3, 3, -10000.0f, [](int64_t b, int64_t, int64_t j) { return j >= (b == 0 ? 2 : 3); });
  check_attention(c, true);
}

TEST(ContribAttentionKernels, AttentionMaskIndexFormsAgree) {
  // Batch 0 sees keys [1, 3), batch 1 keys [0, 2): as start/end positions, 2-D, 3-D and 4-D masks.
  const int64_t b = 2, s = 3, t = 3;
  Tensor x = rand32({b, s, 4}, 7), w = rand32({4, 12}, 8);
  std::vector<Attribute> attrs = {Attribute::of_int("num_heads", 2)};
  auto run = [&](const Tensor& mask) { return run_ms("Attention", {x, w, Tensor(), mask}, attrs)[0]; };
  std::vector<int32_t> raw = {0, 1, 1, 1, 1, 0};
  Tensor by_2d = run(i32({b, t}, raw));
  expect_close(run(i32({2 * b}, {3, 2, 1, 0})), by_2d, 1e-6f);
  std::vector<int32_t> raw3, raw4;
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t i = 0; i < s; ++i)
      for (int64_t j = 0; j < t; ++j) raw3.push_back(raw[static_cast<size_t>(bi * t + j)]);
  expect_close(run(i32({b, s, t}, raw3)), by_2d, 1e-6f);
  // Megatron's (batch, 1, max, max) with max 4 > total: rows and columns past the total are ignored.
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j)
        raw4.push_back(i < s && j < t ? raw[static_cast<size_t>(bi * t + j)] : 7 * 0);
  expect_close(run(i32({b, 1, 4, 4}, raw4)), by_2d, 1e-6f);
  // And the end-only form equals a 2-D mask of leading ones.
  expect_close(run(i32({b}, {1, 2})), run(i32({b, t}, {1, 0, 0, 1, 1, 0})), 1e-6f);
}

TEST(ContribAttentionKernels, AttentionFullyMaskedRowIsNotZeroed) {
  // mask_filter_value is added, not -inf: with every key masked the row is the unmasked softmax again
  // (up to float rounding at -10000), not zero as with -inf masking.
  Tensor x = rand32({1, 2, 2}, 9);
  std::vector<float> eye = {1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1};  // Q = K = V = x
  Tensor w = f32({2, 6}, eye);
  std::vector<Attribute> attrs = {Attribute::of_int("num_heads", 1)};
  Tensor masked = run_ms("Attention", {x, w, Tensor(), i32({1}, {0})}, attrs)[0];
  expect_close(masked, run_ms("Attention", {x, w}, attrs)[0], 2e-3f);
  EXPECT_NE(floats(masked)[0], 0.0f);
}

TEST(ContribAttentionKernels, AttentionSharedPastBuffer) {
  // A (2, 1, 1, 4, 2) buffer holding 1 past token; the new token lands at row 1 and rows 2..3 stay.
  Tensor x = f32({1, 1, 2}, {1, 2});
  std::vector<float> eye = {1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1};
  Tensor w = f32({2, 6}, eye);
  std::vector<float> pv(16, 9.0f);
  pv[0] = 0, pv[1] = 0, pv[8] = 5, pv[9] = 6;  // past key (0, 0), past value (5, 6)
  Tensor past = f32({2, 1, 1, 4, 2}, pv);
  std::vector<Attribute> attrs = {Attribute::of_int("num_heads", 1),
                                  Attribute::of_int("past_present_share_buffer", 1),
                                  Attribute::of_float("scale", 1.0f)};
  auto out = run_ms("Attention", {x, w, Tensor(), Tensor(), past, Tensor(), i32({1}, {1})}, attrs, 2);
  ASSERT_EQ(out[1].shape(), (rt::Shape{2, 1, 1, 4, 2}));
  expect_values(out[1], {0, 0, 1, 2, 9, 9, 9, 9, 5, 6, 1, 2, 9, 9, 9, 9}, 0);
  // Scores 0 (past) and 5 (itself): weights 1/(1+e^5) and e^5/(1+e^5).
  const float p = 1.0f / (1.0f + std::exp(5.0f));
  expect_values(out[0], {5 * p + 1 * (1 - p), 6 * p + 2 * (1 - p)}, 1e-5f);
}

TEST(ContribAttentionKernels, AttentionErrors) {
  Tensor x = rand32({1, 2, 4}, 1), w = rand32({4, 12}, 2);
  std::vector<Attribute> attrs = {Attribute::of_int("num_heads", 2)};
  EXPECT_TRUE(contains(error_of("Attention", {x, w, Tensor(), i32({3}, {1, 1, 1})}, attrs), "mask_index"));
  EXPECT_TRUE(
      contains(error_of("Attention", {x, w, Tensor(), i32({5}, {1, 1, 1, 1, 1})}, attrs), "3 * batch"));
  EXPECT_TRUE(contains(error_of("Attention", {x, rand32({3, 12}, 2)}, attrs), "weights"));
  EXPECT_TRUE(contains(error_of("Attention", {x, rand32({4, 10}, 2)}, attrs), "divisible"));
  EXPECT_TRUE(contains(error_of("Attention", {x, w, rand32({11}, 3)}, attrs), "bias"));
  EXPECT_TRUE(contains(
      error_of("Attention", {x, w}, {Attribute::of_int("num_heads", 2), Attribute::of_int("do_rotary", 1)}),
      "do_rotary"));
  std::vector<Attribute> shared = {Attribute::of_int("num_heads", 2),
                                   Attribute::of_int("past_present_share_buffer", 1)};
  Tensor past = rand32({2, 1, 2, 3, 2}, 4);
  EXPECT_TRUE(
      contains(error_of("Attention", {x, w, Tensor(), Tensor(), past}, shared, 2), "past_sequence_length"));
  EXPECT_TRUE(contains(
      error_of("Attention", {x, w, Tensor(), Tensor(), past, Tensor(), i32({1}, {2})}, shared, 2), "fit"));
  EXPECT_TRUE(contains(
      error_of("Attention", {x, w, Tensor(), Tensor(), rand32({2, 1, 3, 3, 2}, 4)}, attrs, 2), "past"));
  EXPECT_TRUE(
      contains(error_of("Attention", {x, w, Tensor(), Tensor(), Tensor(), rand32({1, 2, 2, 3}, 5)}, attrs),
               "attention_bias"));
}

// --- MultiHeadAttention --------------------------------------------------------------------------------

TEST(ContribAttentionKernels, MultiHeadAttentionMatchesStandardOps) {
  // Cross attention: 3 queries over 4 keys, bias, key padding, attention_bias per head, qk output.
  const int64_t b = 2, s = 3, l = 4, n = 2, h = 3, hv = 2;
  Tensor q = rand32({b, s, n * h}, 11), k = rand32({b, l, n * h}, 12), v = rand32({b, l, n * hv}, 13);
  Tensor bias = rand32({2 * n * h + n * hv}, 14);
  Tensor kpm = i32({b, l}, {1, 1, 1, 0, 1, 0, 1, 1});
  Tensor ab = rand32({1, n, s, l}, 15);
  std::vector<Attribute> attrs = {Attribute::of_int("num_heads", n)};
  std::vector<Tensor> got = run_ms("MultiHeadAttention", {q, k, v, bias, kpm, ab}, attrs, 4);

  Net net;
  auto biased = [&](const Tensor& x, int64_t c0, int64_t w) {
    return net.op("Add", {net.in(x), net.in(columns(bias, c0, w))});
  };
  std::string qn = net.heads(biased(q, 0, n * h), b, s, n, h);
  std::string kn = net.heads(biased(k, n * h, n * h), b, l, n, h);
  std::string vn = net.heads(biased(v, 2 * n * h, n * hv), b, l, n, hv);
  Tensor pad = additive_mask(b, 1, l, -10000.0f, [&](int64_t bi, int64_t, int64_t j) {
    return kpm.data<int32_t>()[bi * l + j] == 0;
  });
  std::string mask = net.op("Add", {net.in(pad), net.in(ab)});
  std::string y = net.attention(qn, kn, vn, mask, 1.0f / std::sqrt(3.0f), b, s, n, hv);
  std::string kt = net.op("Transpose", {kn}, {Attribute::of_ints("perm", {0, 1, 3, 2})});
  std::string qk = net.op(
      "Add", {net.op("Mul", {net.op("MatMul", {qn, kt}), net.in(f32({}, {1.0f / std::sqrt(3.0f)}))}), mask});
  std::vector<Tensor> want = net.run({y, kn, vn, qk});
  for (int i = 0; i < 4; ++i) expect_close(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)], 1e-5f);
}

TEST(ContribAttentionKernels, MultiHeadAttentionPastCausalFloat16) {
  const int64_t b = 1, s = 2, p = 3, n = 2, h = 4;
  Tensor q = rounded(rand32({b, s, n * h}, 21)), k = rounded(rand32({b, s, n * h}, 22));
  Tensor v = rounded(rand32({b, s, n * h}, 23));
  Tensor pk = rounded(rand32({b, n, p, h}, 24)), pv = rounded(rand32({b, n, p, h}, 25));
  std::vector<Attribute> attrs = {Attribute::of_int("num_heads", n), Attribute::of_int("unidirectional", 1)};
  std::vector<Tensor> got = run_ms(
      "MultiHeadAttention",
      {to_f16(q), to_f16(k), to_f16(v), Tensor(), Tensor(), Tensor(), to_f16(pk), to_f16(pv)}, attrs, 3);
  EXPECT_EQ(got[0].dtype(), DataType::kFloat16);
  Net net;
  std::string kn =
      net.op("Concat", {net.in(pk), net.heads(net.in(k), b, s, n, h)}, {Attribute::of_int("axis", 2)});
  std::string vn =
      net.op("Concat", {net.in(pv), net.heads(net.in(v), b, s, n, h)}, {Attribute::of_int("axis", 2)});
  Tensor causal =
      additive_mask(b, s, p + s, -1e30f, [&](int64_t, int64_t i, int64_t j) { return j > p + i; });
  std::string y = net.attention(net.heads(net.in(q), b, s, n, h), kn, vn, net.in(causal), 0.5f, b, s, n, h);
  std::vector<Tensor> want = net.run({y, kn, vn});
  expect_close(got[0], want[0], 5e-3f);
  expect_close(got[1], want[1], 0);
  expect_close(got[2], want[2], 0);
}

TEST(ContribAttentionKernels, MultiHeadAttentionPackedLayoutsAgree) {
  const int64_t b = 2, s = 3, n = 2, h = 2;
  Tensor q = rand32({b, s, n * h}, 31), k = rand32({b, s, n * h}, 32), v = rand32({b, s, n * h}, 33);
  Tensor bias = rand32({3 * n * h}, 34);
  std::vector<Attribute> attrs = {Attribute::of_int("num_heads", n)};
  Tensor separate = run_ms("MultiHeadAttention", {q, k, v, bias}, attrs)[0];
  std::vector<float> qv = floats(q), kv = floats(k), vv = floats(v), qkv, kv2;
  for (int64_t t = 0; t < b * s; ++t)
    for (int64_t hh = 0; hh < n; ++hh) {
      for (const auto* src : {&qv, &kv, &vv})
        for (int64_t e = 0; e < h; ++e) qkv.push_back((*src)[static_cast<size_t>(t * n * h + hh * h + e)]);
      for (const auto* src : {&kv, &vv})
        for (int64_t e = 0; e < h; ++e) kv2.push_back((*src)[static_cast<size_t>(t * n * h + hh * h + e)]);
    }
  expect_close(run_ms("MultiHeadAttention", {f32({b, s, n, 3, h}, qkv), Tensor(), Tensor(), bias}, attrs)[0],
               separate, 1e-6f);
  Tensor no_bias = run_ms("MultiHeadAttention", {q, k, v}, attrs)[0];
  expect_close(run_ms("MultiHeadAttention", {q, f32({b, s, n, 2, h}, kv2)}, attrs)[0], no_bias, 1e-6f);
  // Key and value handed over already split into heads (a cross-attention cache) come back as present.
  Net net;
  std::string kh = net.heads(net.in(k), b, s, n, h), vh = net.heads(net.in(v), b, s, n, h);
  std::vector<Tensor> bnsh = net.run({kh, vh});
  std::vector<Tensor> out = run_ms("MultiHeadAttention", {q, bnsh[0], bnsh[1]}, attrs, 3);
  expect_close(out[0], no_bias, 1e-6f);
  expect_close(out[1], bnsh[0], 0);
}

TEST(ContribAttentionKernels, MultiHeadAttentionErrors) {
  Tensor q = rand32({1, 2, 4}, 1);
  std::vector<Attribute> attrs = {Attribute::of_int("num_heads", 2)};
  EXPECT_TRUE(contains(error_of("MultiHeadAttention", {q}, attrs), "key is required"));
  EXPECT_TRUE(contains(error_of("MultiHeadAttention", {q, rand32({1, 2, 6}, 2), q}, attrs), "key"));
  EXPECT_TRUE(contains(error_of("MultiHeadAttention", {q, q, q, Tensor(), i32({3}, {1, 1, 1})}, attrs),
                       "key_padding_mask"));
  EXPECT_TRUE(contains(error_of("MultiHeadAttention", {q, q, q, rand32({5}, 3)}, attrs), "bias"));
  Tensor pk = rand32({1, 2, 1, 2}, 4);
  EXPECT_TRUE(contains(error_of("MultiHeadAttention", {q, q, q, Tensor(), Tensor(), Tensor(), pk}, attrs, 3),
                       "together"));
  EXPECT_TRUE(contains(
      error_of("MultiHeadAttention", {q, q, q, Tensor(), i32({1, 2}, {1, 1}), Tensor(), pk, pk}, attrs, 3),
      "total_sequence_length"));
  EXPECT_TRUE(
      contains(error_of("MultiHeadAttention",
                        {q, q, q, Tensor(), Tensor(), Tensor(), Tensor(), Tensor(), i32({1}, {0})}, attrs),
               "past_sequence_length"));
  EXPECT_TRUE(
      contains(error_of("MultiHeadAttention", {q, q, q}, {Attribute::of_int("num_heads", 3)}), "divisible"));
}

// --- GroupQueryAttention -------------------------------------------------------------------------------

std::vector<Attribute> gqa_attrs(int64_t n, int64_t nkv, std::vector<Attribute> more = {}) {
  more.push_back(Attribute::of_int("num_heads", n));
  more.push_back(Attribute::of_int("kv_num_heads", nkv));
  return more;
}

// The standard-op reference of a GQA prompt: key/value heads repeated with Gather, a causal (and
// window) mask.
Tensor gqa_reference(const Tensor& q, const Tensor& k, const Tensor& v, int64_t n, int64_t nkv,
                     int64_t window) {
  const int64_t b = q.dim(0), s = q.dim(1), h = q.dim(2) / n;
  Net net;
  std::vector<int64_t> group;
  for (int64_t i = 0; i < n; ++i) group.push_back(i / (n / nkv));
  std::string idx = net.ints(group);
  std::string kn =
      net.op("Gather", {net.heads(net.in(k), b, s, nkv, h), idx}, {Attribute::of_int("axis", 1)});
  std::string vn =
      net.op("Gather", {net.heads(net.in(v), b, s, nkv, h), idx}, {Attribute::of_int("axis", 1)});
  Tensor mask = additive_mask(b, s, s, -1e30f, [&](int64_t, int64_t i, int64_t j) {
    return j > i || (window > 0 && j < i - window);
  });
  std::string y = net.attention(net.heads(net.in(q), b, s, n, h), kn, vn, net.in(mask),
                                1.0f / std::sqrt(static_cast<float>(h)), b, s, n, h);
  return net.run({y})[0];
}

TEST(ContribAttentionKernels, GroupQueryAttentionPromptMatchesStandardOps) {
  const int64_t b = 2, s = 4, n = 4, nkv = 2, h = 3;
  Tensor q = rand32({b, s, n * h}, 41), k = rand32({b, s, nkv * h}, 42), v = rand32({b, s, nkv * h}, 43);
  Tensor seqlens = i32({b}, {3, 3}), total = i32({}, {4});
  std::vector<Tensor> got =
      run_ms("GroupQueryAttention", {q, k, v, Tensor(), Tensor(), seqlens, total}, gqa_attrs(n, nkv), 3);
  expect_close(got[0], gqa_reference(q, k, v, n, nkv, -1), 1e-5f);
  Net net;
  std::vector<Tensor> kv = net.run({net.heads(net.in(k), b, s, nkv, h), net.heads(net.in(v), b, s, nkv, h)});
  expect_close(got[1], kv[0], 0);
  expect_close(got[2], kv[1], 0);
  // Sliding window of 1: each query sees itself and the token before.
  got = run_ms("GroupQueryAttention", {q, k, v, Tensor(), Tensor(), seqlens, total},
               gqa_attrs(n, nkv, {Attribute::of_int("local_window_size", 1)}), 3);
  expect_close(got[0], gqa_reference(q, k, v, n, nkv, 1), 1e-5f);
}

TEST(ContribAttentionKernels, GroupQueryAttentionDecodeMatchesPrompt) {
  // Prompt of 3 tokens then one decode step with the cache equals the last row of a 4-token prompt;
  // packed QKV gives the same as separate inputs; float16 runs too.
  const int64_t s = 4, n = 4, nkv = 1, h = 2;
  Tensor q = rand32({1, s, n * h}, 51), k = rand32({1, s, nkv * h}, 52), v = rand32({1, s, nkv * h}, 53);
  auto rows = [](const Tensor& t, int64_t r0, int64_t r1) {
    std::vector<float> x = floats(t);
    const int64_t w = t.dim(2);
    return f32({1, r1 - r0, w}, {x.begin() + r0 * w, x.begin() + r1 * w});
  };
  std::vector<Attribute> attrs = gqa_attrs(n, nkv);
  Tensor full =
      run_ms("GroupQueryAttention", {q, k, v, Tensor(), Tensor(), i32({1}, {3}), i32({}, {4})}, attrs, 3)[0];
  std::vector<Tensor> prompt =
      run_ms("GroupQueryAttention",
             {rows(q, 0, 3), rows(k, 0, 3), rows(v, 0, 3), Tensor(), Tensor(), i32({1}, {2}), i32({}, {3})},
             attrs, 3);
  std::vector<Tensor> step =
      run_ms("GroupQueryAttention",
             {rows(q, 3, 4), rows(k, 3, 4), rows(v, 3, 4), prompt[1], prompt[2], i32({1}, {3}), i32({}, {4})},
             attrs, 3);
  expect_close(step[0], rows(full, 3, 4), 1e-5f);
  ASSERT_EQ(step[1].shape(), (rt::Shape{1, nkv, 4, h}));
  // A shared buffer of 6 rows: present keeps its size, rows past the tokens stay as they were.
  std::vector<float> buf = floats(prompt[1]);
  buf.insert(buf.end(), {7, 7, 7, 7, 7, 7});
  std::vector<float> vbuf = floats(prompt[2]);
  vbuf.insert(vbuf.end(), 6, 0.0f);
  std::vector<Tensor> shared = run_ms("GroupQueryAttention",
                                      {rows(q, 3, 4), rows(k, 3, 4), rows(v, 3, 4), f32({1, 1, 6, h}, buf),
                                       f32({1, 1, 6, h}, vbuf), i32({1}, {3}), i32({}, {4})},
                                      attrs, 3);
  expect_close(shared[0], step[0], 1e-6f);
  ASSERT_EQ(shared[1].shape(), (rt::Shape{1, nkv, 6, h}));
  EXPECT_EQ(floats(shared[1])[10], 7.0f);
  // Packed QKV.
  std::vector<float> qv = floats(q), kv = floats(k), vv = floats(v), packed;
  for (int64_t t = 0; t < s; ++t) {
    packed.insert(packed.end(), qv.begin() + t * n * h, qv.begin() + (t + 1) * n * h);
    packed.insert(packed.end(), kv.begin() + t * nkv * h, kv.begin() + (t + 1) * nkv * h);
    packed.insert(packed.end(), vv.begin() + t * nkv * h, vv.begin() + (t + 1) * nkv * h);
  }
  expect_close(run_ms("GroupQueryAttention",
                      {f32({1, s, (n + 2 * nkv) * h}, packed), Tensor(), Tensor(), Tensor(), Tensor(),
                       i32({1}, {3}), i32({}, {4})},
                      attrs, 3)[0],
               full, 1e-6f);
  Tensor half =
      run_ms("GroupQueryAttention",
             {to_f16(q), to_f16(k), to_f16(v), Tensor(), Tensor(), i32({1}, {3}), i32({}, {4})}, attrs, 3)[0];
  EXPECT_EQ(half.dtype(), DataType::kFloat16);
  expect_close(half, gqa_reference(rounded(q), rounded(k), rounded(v), n, nkv, -1), 5e-3f);
}

TEST(ContribAttentionKernels, GroupQueryAttentionRotaryEqualsRotatingFirst) {
  // do_rotary = RotaryEmbedding on Q and K (at positions 0..S-1), then plain GQA; both layouts.
  const int64_t s = 3, n = 2, nkv = 1, h = 4;
  Tensor q = rand32({1, s, n * h}, 61), k = rand32({1, s, nkv * h}, 62), v = rand32({1, s, nkv * h}, 63);
  Tensor cos = rand32({5, 2}, 64), sin = rand32({5, 2}, 65);
  Tensor pos = i64({1, s}, {0, 1, 2});
  for (int64_t inter : {0, 1}) {
    Tensor qr = run_ms("RotaryEmbedding", {q, pos, cos, sin},
                       {Attribute::of_int("interleaved", inter), Attribute::of_int("num_heads", n)})[0];
    Tensor kr = run_ms("RotaryEmbedding", {k, pos, cos, sin},
                       {Attribute::of_int("interleaved", inter), Attribute::of_int("num_heads", nkv)})[0];
    Tensor want = run_ms("GroupQueryAttention", {qr, kr, v, Tensor(), Tensor(), i32({1}, {2}), i32({}, {3})},
                         gqa_attrs(n, nkv), 3)[0];
    std::vector<Tensor> got =
        run_ms("GroupQueryAttention", {q, k, v, Tensor(), Tensor(), i32({1}, {2}), i32({}, {3}), cos, sin},
               gqa_attrs(n, nkv,
                         {Attribute::of_int("do_rotary", 1), Attribute::of_int("rotary_interleaved", inter)}),
               3);
    expect_close(got[0], want, 1e-5f);
    // Explicit position_ids equal to the defaults change nothing.
    std::vector<Tensor> with_ids = run_ms(
        "GroupQueryAttention", {q, k, v, Tensor(), Tensor(), i32({1}, {2}), i32({}, {3}), cos, sin, pos},
        gqa_attrs(n, nkv,
                  {Attribute::of_int("do_rotary", 1), Attribute::of_int("rotary_interleaved", inter)}),
        3);
    expect_close(with_ids[0], want, 1e-6f);
  }
}

TEST(ContribAttentionKernels, GroupQueryAttentionSmoothSoftmaxAndQk) {
  // One query, one key with score 0 (q = 0): smooth softmax weighs it 1/2 against the 0 logit;
  // head_sink = ln 3 gives 1/4. qk_output 2 returns those probabilities.
  Tensor q = f32({1, 1, 2}, {0, 0}), k = f32({1, 1, 2}, {1, 1}), v = f32({1, 1, 2}, {4, 8});
  std::vector<Tensor> in = {q, k, v, Tensor(), Tensor(), i32({1}, {0}), i32({}, {1})};
  std::vector<Tensor> out =
      run_ms("GroupQueryAttention", in,
             gqa_attrs(1, 1, {Attribute::of_int("smooth_softmax", 1), Attribute::of_int("qk_output", 2)}), 4);
  expect_values(out[0], {2, 4}, 1e-6f);
  expect_values(out[3], {0.5f}, 1e-6f);
  in.resize(12);
  in[11] = f32({1}, {std::log(3.0f)});
  expect_values(run_ms("GroupQueryAttention", in, gqa_attrs(1, 1), 3)[0], {1, 2}, 1e-6f);
}

TEST(ContribAttentionKernels, GroupQueryAttentionErrors) {
  Tensor q = rand32({1, 2, 4}, 1), k = rand32({1, 2, 2}, 2);
  std::vector<Attribute> attrs = gqa_attrs(2, 1);
  auto err = [&](std::vector<Tensor> in, std::vector<Attribute> a, size_t outs = 3) {
    return error_of("GroupQueryAttention", in, a, outs);
  };
  EXPECT_TRUE(contains(err({q, k, k, Tensor(), Tensor(), i32({1}, {5}), i32({}, {2})}, attrs), "seqlens_k"));
  EXPECT_TRUE(
      contains(err({q, k, k, Tensor(), Tensor(), i32({2}, {1, 1}), i32({}, {2})}, attrs), "seqlens_k"));
  EXPECT_TRUE(contains(err({q, k, k, Tensor(), Tensor(), i32({1}, {1}), i32({}, {9})}, attrs),
                       "total_sequence_length"));
  EXPECT_TRUE(
      contains(err({q, k, Tensor(), Tensor(), Tensor(), i32({1}, {1}), i32({}, {2})}, attrs), "together"));
  EXPECT_TRUE(contains(err({q, k, k, Tensor(), Tensor(), i32({1}, {1}), i32({}, {2})},
                           gqa_attrs(2, 1, {Attribute::of_int("do_rotary", 1)})),
                       "cos_cache"));
  Tensor cos = rand32({1, 1}, 3);  // one position only
  EXPECT_TRUE(contains(err({q, k, k, Tensor(), Tensor(), i32({1}, {1}), i32({}, {2}), cos, cos},
                           gqa_attrs(2, 1, {Attribute::of_int("do_rotary", 1)})),
                       "outside the cos/sin cache"));
  EXPECT_TRUE(
      contains(err({q, k, k, Tensor(), Tensor(), i32({1}, {1}), i32({}, {2})}, attrs, 4), "qk_output"));
  EXPECT_TRUE(contains(
      err({q, rand32({1, 2, 3}, 4), rand32({1, 2, 3}, 4), Tensor(), Tensor(), i32({1}, {1}), i32({}, {2})},
          attrs),
      "key"));
  // A step after the first prompt whose total is shorter than its new tokens.
  Tensor pk = rand32({1, 1, 1, 2}, 7);
  EXPECT_TRUE(
      contains(err({q, k, k, pk, pk, i32({1}, {0}), i32({}, {3})}, attrs), "less than the sequence length"));
}

// --- RotaryEmbedding -----------------------------------------------------------------------------------

TEST(ContribAttentionKernels, RotaryEmbeddingMatchesOnnxRotary) {
  const int64_t b = 2, s = 3, n = 2, h = 8, max_pos = 6;
  Tensor x4 = rand32({b, n, s, h}, 71), x3 = rand32({b, s, n * h}, 72);
  Tensor cos = rand32({max_pos, 2}, 73), sin = rand32({max_pos, 2}, 74);  // rotary dim 4 of 8
  Tensor pos = i64({b, s}, {0, 2, 4, 5, 1, 3});
  for (int64_t inter : {0, 1}) {
    std::vector<Attribute> a = {Attribute::of_int("interleaved", inter),
                                Attribute::of_int("rotary_embedding_dim", 4),
                                Attribute::of_int("num_heads", n)};
    for (const Tensor& x : {x4, x3}) {
      Tensor got = run_ms("RotaryEmbedding", {x, pos, cos, sin}, a)[0];
      Net net;
      std::string y = net.op("RotaryEmbedding", {net.in(x), net.in(cos), net.in(sin), net.in(pos)}, a);
      expect_close(got, net.run({y})[0], 1e-6f);
    }
  }
}

TEST(ContribAttentionKernels, RotaryEmbeddingHandCasesAndFloat16) {
  // 90 degrees turns (x1, x2) into (-x2, x1): halves (1, 3), (2, 4) when not interleaved, neighbours when
  // interleaved. The scalar position 1 offsets token s to row 1 + s.
  Tensor x = f32({1, 1, 4}, {1, 2, 3, 4});
  Tensor cos = f32({3, 2}, {1, 1, 9, 9, 0, 0}), sin = f32({3, 2}, {0, 0, 9, 9, 1, 1});
  expect_values(run_ms("RotaryEmbedding", {x, i64({1}, {2}), cos, sin}, {})[0], {-3, -4, 1, 2}, 1e-6f);
  expect_values(
      run_ms("RotaryEmbedding", {x, i64({1}, {2}), cos, sin}, {Attribute::of_int("interleaved", 1)})[0],
      {-2, 1, -4, 3}, 1e-6f);
  expect_values(run_ms("RotaryEmbedding", {x, i64({1, 1}, {0}), cos, sin}, {})[0], {1, 2, 3, 4}, 1e-6f);
  Tensor h = run_ms("RotaryEmbedding", {to_f16(x), i64({1}, {2}), to_f16(cos), to_f16(sin)}, {})[0];
  EXPECT_EQ(h.dtype(), DataType::kFloat16);
  expect_values(h, {-3, -4, 1, 2}, 0);
  // Two tokens with the scalar offset 1: rows 1 and 2.
  Tensor x2 = f32({1, 2, 4}, {1, 2, 3, 4, 1, 2, 3, 4});
  Tensor cos3 = f32({3, 2}, {9, 9, 1, 1, 0, 0}), sin3 = f32({3, 2}, {9, 9, 0, 0, 1, 1});
  expect_values(run_ms("RotaryEmbedding", {x2, i64({1}, {1}), cos3, sin3}, {})[0], {1, 2, 3, 4, -3, -4, 1, 2},
                1e-6f);
}

TEST(ContribAttentionKernels, RotaryEmbeddingErrors) {
  Tensor x = rand32({1, 2, 4}, 1), cos = rand32({2, 2}, 2);
  EXPECT_TRUE(contains(error_of("RotaryEmbedding", {x, i64({1}, {1}), cos, cos}, {}), "outside"));
  EXPECT_TRUE(contains(error_of("RotaryEmbedding", {x, i64({1, 2}, {0, -1}), cos, cos}, {}), "outside"));
  EXPECT_TRUE(
      contains(error_of("RotaryEmbedding", {x, i64({2, 2}, {0, 0, 0, 0}), cos, cos}, {}), "position_ids"));
  EXPECT_TRUE(
      contains(error_of("RotaryEmbedding", {x, i64({1}, {0}), rand32({2, 3}, 3), cos}, {}), "cos_cache"));
  EXPECT_TRUE(contains(error_of("RotaryEmbedding", {rand32({1, 2, 6}, 1), i64({1}, {0}), cos, cos}, {}),
                       "divisible"));
  EXPECT_TRUE(contains(
      error_of("RotaryEmbedding", {x, i64({1}, {0}), cos, cos}, {Attribute::of_int("is_packed_batching", 1)}),
      "is_packed_batching"));
}

// --- EmbedLayerNormalization ---------------------------------------------------------------------------

TEST(ContribAttentionKernels, EmbedLayerNormMatchesGatherLayerNorm) {
  const int64_t b = 2, s = 3, hidden = 5;
  Tensor ids = i32({b, s}, {1, 4, 0, 3, 3, 2});
  Tensor seg = i32({b, s}, {0, 0, 1, 1, 0, 1});
  Tensor word = rand32({5, hidden}, 81), pos = rand32({4, hidden}, 82), segemb = rand32({2, hidden}, 83);
  Tensor gamma = rand32({hidden}, 84), beta = rand32({hidden}, 85);
  Tensor mask = i32({b, s}, {1, 1, 0, 1, 1, 1});
  Tensor pos_ids = i32({1, s}, {3, 1, 2});
  const float eps = 1e-5f;
  std::vector<Attribute> a = {Attribute::of_float("epsilon", eps)};
  std::vector<Tensor> got =
      run_ms("EmbedLayerNormalization", {ids, seg, word, pos, segemb, gamma, beta, mask, pos_ids}, a, 3);
  Net net;
  std::string sum = net.op("Add", {net.op("Gather", {net.in(word), net.in(ids)}),
                                   net.op("Gather", {net.in(pos), net.in(pos_ids)})});
  sum = net.op("Add", {sum, net.op("Gather", {net.in(segemb), net.in(seg)})});
  std::string y = net.op("LayerNormalization", {sum, net.in(gamma), net.in(beta)},
                         {Attribute::of_int("axis", -1), Attribute::of_float("epsilon", eps)});
  std::vector<Tensor> want = net.run({y, sum});
  expect_close(got[0], want[0], 1e-5f);
  expect_close(got[2], want[1], 1e-6f);
  ASSERT_EQ(got[1].dtype(), DataType::kInt32);
  EXPECT_EQ(got[1].data<int32_t>()[0], 2);
  EXPECT_EQ(got[1].data<int32_t>()[1], 3);

  // No segments, default positions 0..S-1, no mask (mask_index 0), float16.
  std::vector<Tensor> plain =
      run_ms("EmbedLayerNormalization",
             {ids, Tensor(), to_f16(word), to_f16(pos), Tensor(), to_f16(gamma), to_f16(beta)}, {}, 2);
  EXPECT_EQ(plain[0].dtype(), DataType::kFloat16);
  EXPECT_EQ(plain[1].data<int32_t>()[0], 0);
  Net net2;
  std::string sum2 =
      net2.op("Add", {net2.op("Gather", {net2.in(rounded(word)), net2.in(ids)}),
                      net2.op("Gather", {net2.in(rounded(pos)), net2.in(i32({s}, {0, 1, 2}))})});
  std::string y2 = net2.op("LayerNormalization", {sum2, net2.in(rounded(gamma)), net2.in(rounded(beta))},
                           {Attribute::of_int("axis", -1), Attribute::of_float("epsilon", 1e-12f)});
  expect_close(plain[0], net2.run({y2})[0], 1e-2f);
}

TEST(ContribAttentionKernels, EmbedLayerNormErrors) {
  Tensor word = rand32({3, 2}, 1), pos = rand32({2, 2}, 2), g = rand32({2}, 3);
  auto err = [&](const Tensor& ids, std::vector<Tensor> more = {}) {
    std::vector<Tensor> in = {ids, Tensor(), word, pos, Tensor(), g, g};
    in.insert(in.end(), more.begin(), more.end());
    return error_of("EmbedLayerNormalization", in, {});
  };
  EXPECT_TRUE(contains(err(i32({1, 2}, {0, 3})), "input_ids value 3"));
  EXPECT_TRUE(contains(err(i32({1, 2}, {-1, 0})), "input_ids"));
  EXPECT_TRUE(contains(err(i32({1, 3}, {0, 1, 2})), "position_embedding"));
  EXPECT_TRUE(contains(err(i32({1, 2}, {0, 1}), {i32({1, 3}, {1, 1, 1})}), "mask"));
  EXPECT_TRUE(contains(err(i32({1, 2}, {0, 1}), {Tensor(), i32({1, 2}, {0, 7})}), "position"));
  EXPECT_TRUE(
      contains(error_of("EmbedLayerNormalization",
                        {i32({1, 2}, {0, 1}), i32({1, 2}, {0, 2}), word, pos, rand32({2, 2}, 4), g, g}, {}),
               "segment_ids"));
  EXPECT_TRUE(contains(error_of("EmbedLayerNormalization",
                                {i32({1, 2}, {0, 1}), Tensor(), word, pos, Tensor(), rand32({3}, 5), g}, {}),
                       "gamma"));
}

// --- MatMulNBits ---------------------------------------------------------------------------------------

struct Quantised {
  Tensor b, scales, zp_packed, zp_float;
  std::vector<float> w;  // (N, K) dequantised with the packed zero points
};

// Random codes for an (N, K) weight, packed low bits first; the dequantised weight computed from the
// codes directly.
Quantised quantise(int64_t n, int64_t k, int64_t block, int64_t bits, uint32_t seed, bool with_zp) {
  std::mt19937 rng(seed);
  const int64_t blocks = (k + block - 1) / block, blob = block * bits / 8, levels = int64_t{1} << bits;
  std::vector<int> codes(static_cast<size_t>(n * blocks * block), 0);
  for (int& c : codes) c = static_cast<int>(rng() % levels);
  std::vector<uint8_t> packed(static_cast<size_t>(n * blocks * blob), 0);
  for (size_t i = 0; i < codes.size(); ++i) {
    const size_t bit = i * static_cast<size_t>(bits);
    packed[bit / 8] = static_cast<uint8_t>(packed[bit / 8] | (codes[i] << (bit % 8)));
  }
  std::vector<float> scales = randoms(n * blocks, seed + 1, 0.01f, 0.1f);
  std::vector<int> zps(static_cast<size_t>(n * blocks), static_cast<int>(levels / 2));
  const int64_t zrow = (blocks * bits + 7) / 8;
  std::vector<uint8_t> zp_packed(static_cast<size_t>(n * zrow), 0);
  if (with_zp) {
    for (int64_t r = 0; r < n; ++r)
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const int z = static_cast<int>(rng() % levels);
        zps[static_cast<size_t>(r * blocks + blk)] = z;
        const int64_t bit = blk * bits;
        zp_packed[static_cast<size_t>(r * zrow + bit / 8)] |= static_cast<uint8_t>(z << (bit % 8));
      }
  }
  Quantised qz;
  qz.b = u8({n, blocks, blob}, packed);
  qz.scales = f32({n, blocks}, scales);
  qz.zp_packed = u8({n * zrow}, zp_packed);
  std::vector<float> zf(zps.begin(), zps.end());
  qz.zp_float = f32({n * blocks}, zf);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      const size_t g = static_cast<size_t>(r * blocks + c / block);
      const int code = codes[static_cast<size_t>((r * blocks + c / block) * block + c % block)];
      qz.w.push_back(static_cast<float>(code - zps[g]) * scales[g]);
    }
  return qz;
}

// A @ W^T (+ bias) with standard MatMul on the dequantised weight.
Tensor nbits_reference(const Tensor& a, const std::vector<float>& w, int64_t n, int64_t k,
                       const Tensor& bias) {
  std::vector<float> wt(static_cast<size_t>(k * n));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) wt[static_cast<size_t>(c * n + r)] = w[static_cast<size_t>(r * k + c)];
  Net net;
  std::string y = net.op("MatMul", {net.in(a), net.in(f32({k, n}, wt))});
  if (bias.defined()) y = net.op("Add", {y, net.in(bias)});
  return net.run({y})[0];
}

std::vector<Attribute> nbits_attrs(int64_t k, int64_t n, int64_t block, int64_t bits) {
  return {Attribute::of_int("K", k), Attribute::of_int("N", n), Attribute::of_int("block_size", block),
          Attribute::of_int("bits", bits), Attribute::of_int("accuracy_level", 4)};
}

TEST(ContribAttentionKernels, MatMulNBitsMatchesDequantisedMatMul) {
  // K = 40 is not a multiple of the block (last block padded); 4, 8 and 2 bits; zero points packed,
  // as floats, and absent; bias.
  const int64_t n = 5, k = 40, block = 16;
  Tensor a = rand32({2, 3, k}, 91), bias = rand32({n}, 92);
  for (int64_t bits : {4, 8, 2}) {
    SCOPED_TRACE(bits);
    Quantised zq = quantise(n, k, block, bits, 93 + static_cast<uint32_t>(bits), true);
    Tensor want = nbits_reference(a, zq.w, n, k, Tensor());
    expect_close(run_ms("MatMulNBits", {a, zq.b, zq.scales, zq.zp_packed}, nbits_attrs(k, n, block, bits))[0],
                 want, 1e-4f);
    expect_close(run_ms("MatMulNBits", {a, zq.b, zq.scales, zq.zp_float}, nbits_attrs(k, n, block, bits))[0],
                 want, 1e-4f);
    Quantised sym = quantise(n, k, block, bits, 95 + static_cast<uint32_t>(bits), false);
    expect_close(run_ms("MatMulNBits", {a, sym.b, sym.scales, Tensor(), Tensor(), bias},
                        nbits_attrs(k, n, block, bits))[0],
                 nbits_reference(a, sym.w, n, k, bias), 1e-4f);
  }
}

TEST(ContribAttentionKernels, MatMulNBitsHandCaseGIdxAndFloat16) {
  // N = 1, K = 16, 4 bits: codes 0..15, zero point 3, scale 0.5; A = ones picks the sum of the weights.
  std::vector<uint8_t> b(8);
  for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = static_cast<uint8_t>((2 * i) | ((2 * i + 1) << 4));
  Tensor bt = u8({1, 1, 8}, b);
  Tensor a = f32({1, 16}, std::vector<float>(16, 1.0f));
  float sum = 0;
  for (int c = 0; c < 16; ++c) sum += (c - 3) * 0.5f;
  expect_values(run_ms("MatMulNBits", {a, bt, f32({1}, {0.5f}), u8({1}, {3})}, nbits_attrs(16, 1, 16, 4))[0],
                {sum}, 1e-5f);
  // float16 A, scales and zero points.
  Tensor h = run_ms("MatMulNBits", {to_f16(a), bt, f16({1}, {0.5f}), f16({1}, {3.0f})},
                    nbits_attrs(16, 1, 16, 4))[0];
  EXPECT_EQ(h.dtype(), DataType::kFloat16);
  expect_values(h, {sum}, 1e-2f);
  // g_idx: K = 32 in two blocks whose scales 1 and 10 are swapped between the halves by g_idx.
  std::vector<uint8_t> b2(16, 0x11);  // every code 1
  std::vector<int32_t> g(32);
  for (int i = 0; i < 32; ++i) g[static_cast<size_t>(i)] = i < 16 ? 1 : 0;
  Tensor a2 = f32({1, 32}, std::vector<float>(32, 1.0f));
  a2.data<float>()[0] = 2.0f;  // element 0 (block 0, scale of block 1 = 10) counts twice
  Tensor y =
      run_ms("MatMulNBits", {a2, u8({1, 2, 8}, b2), f32({2}, {1.0f, 10.0f}), f32({2}, {0, 0}), i32({32}, g)},
             nbits_attrs(32, 1, 16, 4))[0];
  expect_values(y, {17 * 10.0f + 16 * 1.0f}, 1e-4f);
}

TEST(ContribAttentionKernels, MatMulNBitsErrors) {
  Tensor a = rand32({2, 16}, 1), b = u8({2, 1, 8}, std::vector<uint8_t>(16, 0)), s = rand32({2}, 2);
  std::vector<Attribute> attrs = nbits_attrs(16, 2, 16, 4);
  EXPECT_TRUE(contains(error_of("MatMulNBits", {rand32({2, 8}, 1), b, s}, attrs), "K = 16"));
  EXPECT_TRUE(
      contains(error_of("MatMulNBits", {a, u8({2, 1, 4}, std::vector<uint8_t>(8, 0)), s}, attrs), "B"));
  EXPECT_TRUE(contains(error_of("MatMulNBits", {a, b, rand32({3}, 2)}, attrs), "scales"));
  EXPECT_TRUE(contains(error_of("MatMulNBits", {a, b, s, u8({3}, {0, 0, 0})}, attrs), "zero_points"));
  EXPECT_TRUE(contains(
      error_of("MatMulNBits", {a, b, s, Tensor(), i32({16}, std::vector<int32_t>(16, 1))}, attrs), "g_idx"));
  EXPECT_TRUE(
      contains(error_of("MatMulNBits", {a, b, s, Tensor(), Tensor(), rand32({3}, 3)}, attrs), "bias"));
  EXPECT_TRUE(contains(error_of("MatMulNBits", {a, b, s}, nbits_attrs(16, 2, 16, 3)), "bits"));
  EXPECT_TRUE(contains(error_of("MatMulNBits", {a, b, s, i32({2}, {0, 0})}, attrs), "int32"));
}

}  // namespace
}  // namespace tessera
