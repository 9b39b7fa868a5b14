// com.tessera FusedElementwise on the GPU (the fuse_elementwise rule, the NVRTC kernel, its vector and
// strided paths, the interpreter fallback) and the vectorised elementwise and GELU kernels, against the
// CPU's reference kernels. Tolerances:
//   fused, float16/bfloat16: 1 ulp of the type (the GPU's float32 math lands on the other side of a
//     rounding boundary of the CPU's double now and then) plus 1e-6 absolute: the chains as exporters
//     write them cancel in float32 (GPT-2's 0.5 x (1 + tanh(u)): tanhf's 2 ulp near -1 are 1.2e-7, times
//     0.5 |x| <= 5 here), which the CPU's double does not;
//   fused, float32: relative 1e-4 + absolute 1e-6 (float32 math against double: 1 + tanh(u) cancels
//     for negative u, amplifying tanhf's 2 ulp there);
//   Add/Sub/Mul/Div: exact (both sides round the float32 result once); Tanh: 2 ulp of float32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "cuda_test_util.h"
#include "ir/builder.h"
#include "runtime/backend_loader.h"
#include "runtime/half.h"
#include "runtime/session.h"
#include "runtime/value_io.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;
using ir::Dim;
using ir::GraphBuilder;

namespace {

class CudaFused : public cuda_test::CudaBackendTest {};

ir::Type T(DataType t, const std::vector<int64_t>& dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return ir::Type::tensor(t, s);
}

uint16_t bits16(DataType t, float v) {
  return t == DataType::kFloat16 ? rt::Float16(v).bits : rt::BFloat16(v).bits;
}

std::string scalar(GraphBuilder& b, const std::string& name, DataType t, float v) {
  if (t == DataType::kFloat) return b.initializer(ir::make_tensor(name, t, {}, std::vector<float>{v}));
  return b.initializer(ir::make_tensor(name, t, {}, std::vector<uint16_t>{bits16(t, v)}));
}

std::string tanh_gelu(GraphBuilder& b, DataType t, const std::string& x) {
  auto half = b.node("Mul", {x, scalar(b, "half", t, 0.5f)}, {}, "g_mul_half");
  auto cube = b.node("Pow", {x, scalar(b, "three", t, 3.0f)}, {}, "g_pow");
  auto k = b.node("Mul", {cube, scalar(b, "k", t, 0.044715f)}, {}, "g_mul_k");
  auto inner = b.node("Add", {x, k}, {}, "g_add");
  auto scaled = b.node("Mul", {inner, scalar(b, "s", t, 0.7978845608f)}, {}, "g_mul_s");
  auto one =
      b.node("Add", {b.node("Tanh", {scaled}, {}, "g_tanh"), scalar(b, "one", t, 1.0f)}, {}, "g_add_one");
  return b.node("Mul", {half, one}, {}, "g_out");
}

std::string erf_gelu(GraphBuilder& b, DataType t, const std::string& x) {
  auto d = b.node("Div", {x, scalar(b, "sqrt2", t, 1.4142135f)}, {}, "e_div");
  auto p = b.node("Add", {b.node("Erf", {d}, {}, "e_erf"), scalar(b, "one", t, 1.0f)}, {}, "e_add");
  return b.node("Mul", {b.node("Mul", {x, p}, {}, "e_mul"), scalar(b, "half", t, 0.5f)}, {}, "e_half");
}

using Body = std::function<std::vector<std::string>(GraphBuilder&, std::vector<std::string>)>;

ir::Model model_of(std::vector<std::pair<std::string, ir::Type>> inputs, DataType out, const Body& body) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  std::vector<std::string> ins;
  for (auto& [name, type] : inputs) ins.push_back(b.input(name, type));
  for (const auto& o : body(b, ins)) b.output(o, ir::Type::tensor(out));
  return m;
}

rt::Tensor random_tensor(DataType t, const rt::Shape& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  rt::Tensor out = rt::Tensor::zeros(t, dims);
  for (int64_t i = 0; i < out.numel(); ++i) {
    float v = dist(rng);
    if (t == DataType::kFloat) out.data<float>()[i] = v;
    if (t == DataType::kFloat16) out.data<rt::Float16>()[i] = rt::Float16(v);
    if (t == DataType::kBFloat16) out.data<rt::BFloat16>()[i] = rt::BFloat16(v);
    if (t == DataType::kBool) out.data<bool>()[i] = v > 0;
  }
  return out;
}

using Feeds = std::vector<std::pair<std::string, rt::Value>>;

Feeds feeds_for(const ir::Model& m) {
  Feeds f;
  uint32_t seed = 5;
  for (const auto& in : m.graph.inputs) {
    rt::Shape dims;
    for (const auto& d : *in.type.shape) dims.push_back(d.value);
    f.emplace_back(in.name, rt::Value(random_tensor(in.type.elem, dims, seed++)));
  }
  return f;
}

int count(const ir::Model& m, std::string_view op) {
  return static_cast<int>(std::count_if(m.graph.nodes.begin(), m.graph.nodes.end(),
                                        [&](const ir::Node& n) { return n.op_type == op; }));
}

void expect_close(const rt::Tensor& want, const rt::Tensor& got, const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  ASSERT_EQ(want.dtype(), got.dtype()) << what;
  const DataType t = got.dtype();
  int bad = 0;
  for (int64_t i = 0; i < want.numel() && bad < 5; ++i) {
    double w = want.to_double(i), g = got.to_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    double tol = 0;
    if (t == DataType::kFloat) {
      tol = 1e-4 * std::fabs(w) + 1e-6;
    } else {
      int mant = t == DataType::kFloat16 ? 10 : 7, min_exp = t == DataType::kFloat16 ? -14 : -126;
      tol = std::ldexp(
                1.0, std::max(std::ilogb(std::max(std::fabs(w), std::ldexp(1.0, min_exp))), min_exp) - mant) +
            1e-6;
    }
    if (std::fabs(w - g) <= tol) continue;
    ++bad;
    ADD_FAILURE() << what << " element " << i << ": cuda " << g << ", reference " << w;
  }
}

// Runs `m` on the GPU at the layout level (the rule fires) and checks, for every output, the GPU
// against the CPU reference kernels running the same fused model. Returns the GPU session's model.
ir::Model run_fused(const ir::Model& m, const std::string& what, int want_fused = 1) {
  Feeds feeds = feeds_for(m);
  rt::Session gpu(m, {.optimization = rt::OptLevel::kLayout,
                      .backend = "cuda",
                      .precision = tessera::passes::Precision::kFp32});
  const ir::Model& fused = gpu.model();
  EXPECT_EQ(count(fused, "FusedElementwise"), want_fused) << what;
  EXPECT_EQ(gpu.backends().front().nodes, fused.graph.nodes.size())
      << what << ": not every node ran on the GPU";
  std::vector<rt::Value> got = gpu.run(feeds);
  rt::Session cpu(fused, {.optimization = rt::OptLevel::kNone, .threads = 4, .reference_kernels = true});
  std::vector<rt::Value> want = cpu.run(feeds);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    expect_close(want[i].tensor(), got[i].tensor(), what + " output " + std::to_string(i));
  return fused;
}

}  // namespace

TEST_F(CudaFused, GeluChainsInEveryFloatType) {
  for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
    // 8 x 128 x 768: the vector path; 3 x 97 x 257: the scalar one.
    for (std::vector<int64_t> dims : {std::vector<int64_t>{8, 128, 768}, std::vector<int64_t>{3, 97, 257}}) {
      std::string what = std::string(ir::dtype_name(t)) + " " + std::to_string(dims.back());
      run_fused(model_of({{"x", T(t, dims)}}, t,
                         [t](GraphBuilder& b, std::vector<std::string> in) {
                           return std::vector<std::string>{tanh_gelu(b, t, in[0])};
                         }),
                "tanh gelu " + what);
      // The erf form becomes Gelu first (fuse_gelu); as a chain it is this rule's when that is off.
      ir::Model erf = model_of({{"x", T(t, dims)}}, t, [t](GraphBuilder& b, std::vector<std::string> in) {
        return std::vector<std::string>{b.node("Relu", {erf_gelu(b, t, in[0])}, {}, "after")};
      });
      Feeds feeds = feeds_for(erf);
      rt::Session gpu(erf, {.optimization = rt::OptLevel::kLayout,
                            .backend = "cuda",
                            .disabled_rules = {"fuse_gelu"},
                            .precision = tessera::passes::Precision::kFp32});
      ASSERT_EQ(count(gpu.model(), "FusedElementwise"), 1) << what;
      rt::Session cpu(gpu.model(),
                      {.optimization = rt::OptLevel::kNone, .threads = 4, .reference_kernels = true});
      expect_close(cpu.run(feeds)[0].tensor(), gpu.run(feeds)[0].tensor(), "erf gelu " + what);
    }
  }
}

TEST_F(CudaFused, BroadcastPatternsAndTwoOutputs) {
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    // Row ([768]), column ([4,50,1]), scalar ([1]) and strided ([4,1,768] against [4,50,768]) inputs; the
    // sum is read by the graph too.
    ir::Model m =
        model_of({{"a", T(t, {4, 50, 768})},
                  {"b", T(t, {4, 50, 768})},
                  {"g", T(t, {768})},
                  {"c", T(t, {4, 50, 1})},
                  {"s", T(t, {1})},
                  {"p", T(t, {4, 1, 768})}},
                 t, [](GraphBuilder& b, std::vector<std::string> in) {
                   auto sum = b.node("Add", {in[0], in[1]}, {}, "sum");
                   auto y = b.node("Mul", {b.node("Sub", {sum, in[3]}, {}, "sub"), in[2]}, {}, "mul");
                   y = b.node("Div", {b.node("Add", {y, in[5]}, {}, "addp"), in[4]}, {}, "div");
                   return std::vector<std::string>{b.node("Sigmoid", {y}, {}, "sig"), sum};
                 });
    run_fused(m, std::string("broadcast ") + std::string(ir::dtype_name(t)));
  }
}

TEST_F(CudaFused, WhereClipAndTheInterpreter) {
  ir::Model m =
      model_of({{"x", T(DataType::kFloat16, {6, 33, 65})},
                {"c", T(DataType::kBool, {6, 33, 65})},
                {"y", T(DataType::kFloat16, {65})}},
               DataType::kFloat16, [](GraphBuilder& b, std::vector<std::string> in) {
                 auto e = b.node("Exp", {in[0]}, {}, "exp");
                 auto w = b.node("Where", {in[1], e, in[2]}, {}, "where");
                 auto lo = scalar(b, "lo", DataType::kFloat16, -1.0f);
                 auto hi = scalar(b, "hi", DataType::kFloat16, 6.0f);
                 auto c = b.node("Clip", {w, lo, hi}, {}, "clip");
                 return std::vector<std::string>{b.node("Tanh", {b.node("Neg", {c}, {}, "neg")}, {}, "t")};
               });
  run_fused(m, "where clip (nvrtc)");
  ::setenv("TESSERA_DISABLE_NVRTC", "1", 1);
  run_fused(m, "where clip (interpreter)");
  run_fused(model_of({{"x", T(DataType::kFloat, {3, 97, 257})}, {"p", T(DataType::kFloat, {3, 1, 257})}},
                     DataType::kFloat,
                     [](GraphBuilder& b, std::vector<std::string> in) {
                       auto y = b.node("Add", {b.node("Mul", {in[0], in[1]}, {}, "m"), in[0]}, {}, "a");
                       return std::vector<std::string>{tanh_gelu(b, DataType::kFloat, y)};
                     }),
            "gelu of a strided product (interpreter)");
  ::unsetenv("TESSERA_DISABLE_NVRTC");
}

// The vectorised unary and binary kernels (same shape, a row, a scalar, either side) and the GELU
// kernels' vector and scalar paths, unfused (no optimisation), against the reference kernels.
TEST_F(CudaFused, VectorisedElementwiseAndGeluKernels) {
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    for (int64_t cols : {768, 771}) {
      std::string what = std::string(ir::dtype_name(t)) + " cols " + std::to_string(cols);
      ir::Model m =
          model_of({{"a", T(t, {33, 64, cols})},
                    {"r", T(t, {cols})},
                    {"s", T(t, {1})},
                    {"b", T(t, {33, 64, cols})},
                    {"m", T(t, {33, 1, cols})},
                    {"c", T(t, {33, 64, 1})}},
                   t, [](GraphBuilder& b, std::vector<std::string> in) {
                     // Same shape, a row on either side, a scalar, a mask-like [33,1,cols] and a column
                     // [33,64,1].
                     return std::vector<std::string>{b.node("Add", {in[0], in[3]}, {}, "same"),
                                                     b.node("Sub", {in[1], in[0]}, {}, "row_first"),
                                                     b.node("Div", {in[0], in[1]}, {}, "row_second"),
                                                     b.node("Mul", {in[2], in[0]}, {}, "scalar_first"),
                                                     b.node("Sub", {in[4], in[0]}, {}, "mask"),
                                                     b.node("Div", {in[0], in[5]}, {}, "column"),
                                                     b.node("Tanh", {in[3]}, {}, "tanh")};
                   });
      Feeds feeds = feeds_for(m);
      rt::Session gpu(m, {.optimization = rt::OptLevel::kNone,
                          .backend = "cuda",
                          .precision = tessera::passes::Precision::kFp32});
      ASSERT_EQ(gpu.backends().front().nodes, 7u) << what;
      rt::Session cpu(m, {.optimization = rt::OptLevel::kNone, .threads = 4, .reference_kernels = true});
      auto got = gpu.run(feeds), want = cpu.run(feeds);
      for (size_t o = 0; o < 6; ++o)
        EXPECT_EQ(rt::compare_values(want[o], got[o], {0.0, 0.0}), "") << what << " output " << o;
      EXPECT_EQ(rt::compare_values(want[6], got[6], {t == DataType::kFloat ? 2.4e-7 : 1e-3, 1e-7}), "")
          << what;

      ir::Model bg;
      bg.ir_version = 9;
      bg.opset_imports = {{"", 17}, {"com.microsoft", 1}};
      GraphBuilder b(bg.graph);
      auto x = b.input("x", T(t, {33, 64, cols}));
      auto bias = b.input("bias", T(t, {cols}));
      auto y = b.node("BiasGelu", {x, bias}, {}, "bg");
      bg.graph.nodes.back().domain = "com.microsoft";
      b.output(y, ir::Type::tensor(t));
      Feeds gf = feeds_for(bg);
      rt::Session ggpu(bg, {.optimization = rt::OptLevel::kNone,
                            .backend = "cuda",
                            .precision = tessera::passes::Precision::kFp32});
      ASSERT_EQ(ggpu.backends().front().nodes, 1u);
      rt::Session gcpu(bg, {.optimization = rt::OptLevel::kNone, .threads = 4, .reference_kernels = true});
      expect_close(gcpu.run(gf)[0].tensor(), ggpu.run(gf)[0].tensor(), "BiasGelu " + what);
    }
  }
}
