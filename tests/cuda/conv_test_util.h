// Shared by the matmul_*, conv_* and pool_* CUDA tests: one-node models, deterministic random inputs, a run
// on the GPU and on the CPU's reference kernels, and a comparison with an error bound derived from the
// computation (K * eps * sum |a||b| for products, found by running the reference on absolute values);
// the pooling check of the NCHW and NHWC pool tests.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "ir/builder.h"
#include "runtime/backend.h"
#include "runtime/backend_loader.h"
#include "runtime/half.h"
#include "runtime/session.h"

namespace cuda_test {

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;

class CudaBlas : public CudaBackendTest {};

struct Node {
  std::string op;
  DataType type = DataType::kFloat;
  std::vector<rt::Shape> shapes;  // one per input
  std::vector<ir::Attribute> attrs;
  std::string domain;  // "" for ai.onnx
  int opset = 17;
};

inline Node make_node(std::string op, DataType t, std::vector<rt::Shape> shapes,
                      std::vector<ir::Attribute> attrs = {}, std::string domain = "") {
  Node n;
  n.op = std::move(op);
  n.type = t;
  n.shapes = std::move(shapes);
  n.attrs = std::move(attrs);
  n.domain = std::move(domain);
  return n;
}

inline ir::Model one_node(const Node& n) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", n.opset}};
  if (!n.domain.empty()) m.opset_imports.push_back({n.domain, 1});
  ir::GraphBuilder b(m.graph);
  std::vector<std::string> ins;
  for (size_t i = 0; i < n.shapes.size(); ++i) {
    ir::Shape s;
    for (int64_t d : n.shapes[i]) s.push_back(ir::Dim::of(d));
    ins.push_back(b.input(fmt::format("x{}", i), ir::Type::tensor(n.type, s)));
  }
  std::string y = b.node(n.op, ins, n.attrs, "op");
  if (!n.domain.empty()) m.graph.nodes.back().domain = n.domain;
  b.output(y, ir::Type::tensor(n.type));
  return m;
}

// Uniform values in [-1, 1) from a fixed seed, rounded to the element type.
inline rt::Tensor random_tensor(DataType t, const rt::Shape& shape, uint32_t seed, bool absolute = false) {
  rt::Tensor out = rt::Tensor::zeros(t, shape);
  uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (int64_t i = 0; i < out.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    float v = static_cast<float>((s >> 40) & 0xFFFFFF) / static_cast<float>(1 << 23) - 1.f;
    if (absolute) v = std::fabs(v);
    if (t == DataType::kFloat) out.data<float>()[i] = v;
    if (t == DataType::kFloat16) out.data<rt::Float16>()[i] = rt::Float16(v);
    if (t == DataType::kBFloat16) out.data<rt::BFloat16>()[i] = rt::BFloat16(v);
  }
  return out;
}

// The same tensor with every element's absolute value.
inline rt::Tensor absolute(const rt::Tensor& t) {
  rt::Tensor out = rt::Tensor::zeros(DataType::kFloat, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i)
    out.data<float>()[i] = static_cast<float>(std::fabs(t.to_double(i)));
  return out;
}

using Feeds = std::vector<std::pair<std::string, rt::Value>>;

inline Feeds feeds_of(const std::vector<rt::Tensor>& ins) {
  Feeds f;
  for (size_t i = 0; i < ins.size(); ++i) f.emplace_back(fmt::format("x{}", i), rt::Value(ins[i]));
  return f;
}

struct Result {
  rt::Tensor gpu, ref, bound;  // bound: sum of |terms| per element (float32), for the error bound
  bool on_gpu = false;
  std::string path;  // the GPU kernel's path (NodeEvent::path), e.g. which convolution path ran
};

// Runs the node on the GPU and on the reference kernels, and the reference once more in float32 on the
// inputs' absolute values (float attributes such as alpha made positive) for the bound.
inline Result run_both(const Node& n, const std::vector<rt::Tensor>& ins) {
  Result r;
  ir::Model m = one_node(n);
  // float32 models run in float32: a GPU session's default precision is float16.
  rt::Session gpu(m, {.optimization = rt::OptLevel::kNone,
                      .backend = "cuda",
                      .profile = true,
                      .precision = tessera::passes::Precision::kFp32});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .reference_kernels = true});
  r.gpu = gpu.run(feeds_of(ins))[0].tensor();
  r.ref = ref.run(feeds_of(ins))[0].tensor();
  for (const auto& ev : gpu.last_stats().events) {
    if (ev.node_name != "op") continue;
    r.on_gpu |= ev.backend == "cuda";
    r.path = ev.path;
  }
  Node fn = n;
  fn.type = DataType::kFloat;
  // Gemm's alpha and beta as magnitudes, so that the bound sums |terms|; FusedConv's activation left out
  // (those tested are 1-Lipschitz, so the bound before them holds after).
  std::erase_if(fn.attrs, [](const ir::Attribute& a) { return a.name == "activation"; });
  for (auto& a : fn.attrs)
    if (a.type == ir::AttrType::kFloat) a.f = std::fabs(a.f);
  std::vector<rt::Tensor> abs_ins;
  for (const auto& t : ins) abs_ins.push_back(absolute(t));
  rt::Session bound(one_node(fn), {.optimization = rt::OptLevel::kNone, .reference_kernels = true});
  r.bound = bound.run(feeds_of(abs_ins))[0].tensor();
  return r;
}

// |gpu - ref| <= 2 * terms * 2^-23 * bound + ulps * eps(type) * |ref| + staged * eps(type) * bound: float32
// accumulation error of `terms` summands on both sides (bound = sum |a||b|), rounding to the element type
// on both sides, and `staged` ulps of the bound where the GPU rounds an intermediate to the element type
// (a convolution stored before its bias and Z are added: where they cancel, that rounding is many ulps
// of the result).
inline void expect_within(const Result& r, double terms, double ulps, const std::string& what,
                          double staged = 0) {
  ASSERT_EQ(r.gpu.shape(), r.ref.shape()) << what;
  ASSERT_EQ(r.gpu.dtype(), r.ref.dtype()) << what;
  EXPECT_TRUE(r.on_gpu) << what << ": the node did not run on the GPU";
  const DataType t = r.gpu.dtype();
  const double eps = t == DataType::kFloat ? 0x1p-23 : t == DataType::kFloat16 ? 0x1p-10 : 0x1p-7;
  int bad = 0;
  for (int64_t i = 0; i < r.gpu.numel() && bad < 5; ++i) {
    const double g = r.gpu.to_double(i), w = r.ref.to_double(i), b = r.bound.to_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    const double tol = 2 * terms * 0x1p-23 * b + ulps * eps * std::fabs(w) + staged * eps * b + 1e-30;
    if (std::fabs(g - w) <= tol) continue;
    ++bad;
    ADD_FAILURE() << what << " element " << i << ": cuda " << g << ", reference " << w << ", bound " << tol;
  }
}

inline std::string type_name(DataType t) {
  return std::string(ir::dtype_name(t));
}

// A pooling node (of `domain`: "" or com.tessera's NHWC pools) over random x against the reference:
// `window` values per output summed (max is exact), 4 ulps of rounding.
inline void check_pool(const std::string& op, const rt::Shape& x, std::vector<ir::Attribute> attrs,
                       DataType t, double window, const std::string& domain = "") {
  Node n = make_node(op, t, {x}, std::move(attrs), domain);
  Result r = run_both(n, {random_tensor(t, x, 21)});
  expect_within(r, window, 4, op + " " + rt::shape_str(x) + " " + type_name(t));
}

}  // namespace cuda_test
