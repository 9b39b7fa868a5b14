// Shared by the CUDA reduction, softmax and normalisation tests: a one-node model run on the CUDA backend
// and on the CPU's reference kernels, random inputs in each element type, and a comparison with a
// relative and an absolute tolerance. Tests skip, saying why, where no GPU is.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_util.h"
#include "ir/builder.h"
#include "runtime/backend.h"
#include "runtime/backend_loader.h"
#include "runtime/half.h"
#include "runtime/session.h"

namespace tessera::cuda_test {

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;

// The parts of a failure message, separated by spaces.
template <class... Parts>
std::string label(const Parts&... parts) {
  std::ostringstream os;
  ((os << parts << ' '), ...);
  std::string s = os.str();
  if (!s.empty()) s.pop_back();
  return s;
}

class CudaOps : public ::cuda_test::CudaBackendTest {};

// Uniform values in [lo, hi) as a tensor of type t (rounded once to it).
inline rt::Tensor random_tensor(DataType t, rt::Shape shape, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  rt::Tensor out = rt::Tensor::zeros(t, std::move(shape));
  for (int64_t i = 0; i < out.numel(); ++i) {
    const float v = d(rng);
    switch (t) {
      case DataType::kFloat:
        out.data<float>()[i] = v;
        break;
      case DataType::kFloat16:
        out.data<rt::Float16>()[i] = rt::Float16(v);
        break;
      case DataType::kBFloat16:
        out.data<rt::BFloat16>()[i] = rt::BFloat16(v);
        break;
      case DataType::kInt32:
        out.data<int32_t>()[i] = static_cast<int32_t>(std::floor(v));
        break;
      case DataType::kInt64:
        out.data<int64_t>()[i] = static_cast<int64_t>(std::floor(v));
        break;
      case DataType::kDouble:
        out.data<double>()[i] = static_cast<double>(v) + static_cast<double>(d(rng)) * 0x1p-30;
        break;
      case DataType::kBool:
        out.data<bool>()[i] = v > 0.5f * (lo + hi);
        break;
      default:
        ADD_FAILURE() << "random_tensor: unexpected type";
        return out;
    }
  }
  return out;
}

using ::cuda_test::floats;

inline rt::Tensor ints(rt::Shape shape, const std::vector<int64_t>& v) {
  return rt::Tensor::from_vector<int64_t>(DataType::kInt64, std::move(shape), v);
}

// One unit in the last place of the type, relative (2^-23, 2^-10, 2^-7); 0 for integers.
inline double type_eps(DataType t) {
  return t == DataType::kFloat      ? 0x1p-23
         : t == DataType::kFloat16  ? 0x1p-10
         : t == DataType::kBFloat16 ? 0x1p-7
                                    : 0;
}

struct OneNode {
  std::string op;
  int opset = 17;
  std::vector<ir::Attribute> attrs;
  std::vector<rt::Tensor> inputs;  // "" entries are left out: use `absent`
  std::vector<bool> absent;        // input k is left out of the node (optional)
  size_t outputs = 1;
  std::string domain;
};

inline OneNode node(std::string op, int opset, std::vector<ir::Attribute> attrs = {}) {
  OneNode n;
  n.op = std::move(op);
  n.opset = opset;
  n.attrs = std::move(attrs);
  return n;
}

struct Outputs {
  std::vector<rt::Tensor> gpu, ref;
  size_t gpu_nodes = 0;  // nodes the session placed on the CUDA backend
};

// The one-node model (every input a graph input with its full shape, named x<i>), and the feeds of its
// inputs.
inline ir::Model one_node_model(const OneNode& c, std::vector<std::pair<std::string, rt::Value>>& feeds) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", c.opset}};
  if (!c.domain.empty()) m.opset_imports.push_back({c.domain, 1});
  ir::GraphBuilder b(m.graph);
  std::vector<std::string> ins;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (i < c.absent.size() && c.absent[i]) {
      ins.emplace_back();
      continue;
    }
    ir::Shape s;
    for (int64_t d : c.inputs[i].shape()) s.push_back(ir::Dim::of(d));
    const std::string name = fmt::format("x{}", i);
    ins.push_back(b.input(name, ir::Type::tensor(c.inputs[i].dtype(), s)));
    feeds.emplace_back(name, rt::Value(c.inputs[i]));
  }
  auto outs = b.nodes(c.op, ins, c.attrs, "op", c.outputs, c.domain);
  for (const auto& o : outs) b.output(o);
  return m;
}

// The best device time of node "op" over `runs` runs of the one-node model on "cuda" (the kernel
// micro-benchmarks), whether it ran there, and the path its kernel took.
struct Timed {
  double best_us = std::numeric_limits<double>::infinity();
  bool on_gpu = false;
  std::string path;
};

inline Timed time_node(const OneNode& c, int runs) {
  std::vector<std::pair<std::string, rt::Value>> feeds;
  const ir::Model m = one_node_model(c, feeds);
  rt::Session gpu(m, {.optimization = rt::OptLevel::kNone,
                      .backend = "cuda",
                      .profile = true,
                      .precision = tessera::passes::Precision::kFp32});
  Timed t;
  for (int r = 0; r < runs; ++r) {
    gpu.run(feeds);
    for (const auto& ev : gpu.last_stats().events) {
      if (ev.node_name != "op") continue;
      t.on_gpu = ev.backend == "cuda";
      t.path = ev.path;
      t.best_us = std::min(t.best_us, ev.duration_us);
    }
  }
  return t;
}

// Runs the one-node model on "cuda" and on the reference kernels with the same feeds.
inline Outputs run_both(const OneNode& c) {
  std::vector<std::pair<std::string, rt::Value>> feeds;
  const ir::Model m = one_node_model(c, feeds);
  // Float32 as written: a GPU session would lower the model to float16 by default; the float16 and
  // bfloat16 cases feed those types directly.
  rt::Session gpu(m, {.optimization = rt::OptLevel::kNone,
                      .backend = "cuda",
                      .precision = tessera::passes::Precision::kFp32});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  Outputs r;
  for (const auto& v : gpu.run(feeds)) r.gpu.push_back(v.tensor());
  for (const auto& v : ref.run(feeds)) r.ref.push_back(v.tensor());
  for (const auto& bi : gpu.backends())
    if (bi.name == "cuda") r.gpu_nodes += bi.nodes;
  return r;
}

// |got - want| <= rtol * |want| + atol element by element (NaN matches NaN, infinities match exactly).
inline void expect_near(const rt::Tensor& got, const rt::Tensor& want, double rtol, double atol,
                        const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    const double g = got.to_double(i), w = want.to_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    if (std::fabs(g - w) <= rtol * std::fabs(w) + atol) continue;
    ++bad;
    ADD_FAILURE() << what << " element " << i << ": cuda " << g << ", reference " << w;
  }
}

// Runs the case and compares every output; the node must have run on the GPU.
inline void expect_matches(const OneNode& c, double rtol, double atol, const std::string& what) {
  Outputs r = run_both(c);
  EXPECT_EQ(r.gpu_nodes, 1u) << what << " did not run on the GPU";
  ASSERT_EQ(r.gpu.size(), r.ref.size()) << what;
  for (size_t i = 0; i < r.gpu.size(); ++i)
    expect_near(r.gpu[i], r.ref[i], rtol, atol, label(what, "output", i));
}

inline std::string_view type_name(DataType t) {
  return ir::dtype_name(t);
}

}  // namespace tessera::cuda_test
