// The CUDA backend's com.microsoft GELU forms (what the fuse_gelu and fuse_bias_gelu rules emit) against
// the CPU's reference kernels, in float32 and float16, with and without a bias along the last axis.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cuda_test_util.h"
#include "ir/builder.h"
#include "runtime/backend_loader.h"
#include "runtime/half.h"
#include "runtime/session.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;
using ir::Dim;
using ir::Type;

namespace {

class CudaContrib : public cuda_test::CudaBackendTest {};

ir::Model gelu_model(const std::string& op, DataType t, int64_t rows, int64_t cols, bool bias) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}, {"com.microsoft", 1}};
  ir::GraphBuilder b(m.graph);
  std::vector<std::string> ins = {b.input("x", Type::tensor(t, ir::Shape{Dim::of(rows), Dim::of(cols)}))};
  if (bias) ins.push_back(b.input("b", Type::tensor(t, ir::Shape{Dim::of(cols)})));
  std::string y = b.node(op, ins, {}, "op");
  m.graph.nodes.back().domain = "com.microsoft";
  b.output(y, Type::tensor(t));
  return m;
}

rt::Tensor random_tensor(DataType t, rt::Shape shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0.0f, 3.0f);
  rt::Tensor out = rt::Tensor::zeros(t, std::move(shape));
  for (int64_t i = 0; i < out.numel(); ++i) {
    float v = d(gen);
    if (t == DataType::kFloat) out.data<float>()[i] = v;
    if (t == DataType::kFloat16) out.data<rt::Float16>()[i] = rt::Float16(v);
  }
  return out;
}

// float32: a few ulps (the kernel computes float32 outputs in double); float16: 1 ulp of float16 (the
// kernel's float32 math is far within half an ulp, but lands on the other side of a rounding boundary
// now and then), the ulp of float16's subnormals (2^-24) below its normal range.
void expect_close(const rt::Tensor& got, const rt::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape());
  const bool f32 = got.dtype() == DataType::kFloat;
  double eps = f32 ? 4 * 0x1p-23 : 0x1p-10;
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    double g = got.to_double(i), w = want.to_double(i);
    if (std::fabs(g - w) <= eps * std::max(std::fabs(w), f32 ? 1e-6 : 0x1p-14) + 1e-30) continue;
    ++bad;
    ADD_FAILURE() << what << " element " << i << ": cuda " << g << ", reference " << w;
  }
}

}  // namespace

TEST_F(CudaContrib, GeluFormsMatchTheReference) {
  const int64_t rows = 257, cols = 768;
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    for (auto [op, bias] :
         {std::pair{"Gelu", false}, std::pair{"BiasGelu", true}, std::pair{"FastGelu", false},
          std::pair{"FastGelu", true}, std::pair{"QuickGelu", false}}) {
      std::string what = std::string(op) + (bias ? " with bias " : " ") + std::string(ir::dtype_name(t));
      ir::Model m = gelu_model(op, t, rows, cols, bias);
      std::vector<std::pair<std::string, rt::Value>> feeds = {
          {"x", rt::Value(random_tensor(t, {rows, cols}, 7))}};
      if (bias) feeds.push_back({"b", rt::Value(random_tensor(t, {cols}, 8))});
      rt::Session cpu(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .reference_kernels = true});
      rt::Session gpu(m, {.optimization = rt::OptLevel::kNone,
                          .backend = "cuda",
                          .precision = tessera::passes::Precision::kFp32});
      ASSERT_EQ(gpu.backends().front().nodes, 1u) << what << " did not run on the GPU";
      expect_close(gpu.run(feeds)[0].tensor(), cpu.run(feeds)[0].tensor(), what);
    }
  }
}
