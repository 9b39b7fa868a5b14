// The CUDA backend against the CPU's reference kernels: elementwise kernels in float32, float16 and
// bfloat16 over inputs that include the hard regions, broadcasting, placement with copies, out-of-memory
// recovery and device-timed profiles. Every test skips, saying why, where no GPU is.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "cuda_test_util.h"
#include "ir/builder.h"
#include "runtime/backend.h"
#include "runtime/backend_loader.h"
#include "runtime/half.h"
#include "runtime/session.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;
using ir::Dim;
using ir::Type;

// These tests compare float32 kernels with the CPU's: a GPU session's default precision is float16.
constexpr auto kFp32 = tessera::passes::Precision::kFp32;

namespace {

using cuda_test::expect_close;
using cuda_test::floats;

class Cuda : public cuda_test::CudaBackendTest {};

// Values over the float range where the functions are interesting, plus the special ones.
std::vector<float> hard_inputs() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          0.5f,
                          1e-30f,
                          -1e-30f,
                          1e-40f,
                          88.0f,
                          -88.0f,
                          89.0f,
                          -104.0f,
                          20.0f,
                          -20.0f,
                          1e30f,
                          -1e30f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  for (int i = -200; i <= 200; ++i) v.push_back(static_cast<float>(i) * 0.0731f);
  for (int e = -20; e <= 20; ++e) v.push_back(std::ldexp(1.37f, e));
  return v;
}

ir::Model one_node(const std::string& op, DataType t, const std::vector<rt::Shape>& shapes) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  std::vector<std::string> ins;
  for (size_t i = 0; i < shapes.size(); ++i) {
    ir::Shape s;
    for (int64_t d : shapes[i]) s.push_back(Dim::of(d));
    ins.push_back(b.input("x" + std::to_string(i), Type::tensor(t, s)));
  }
  b.output(b.node(op, ins, {}, "op"), Type::tensor(t));
  return m;
}

}  // namespace

TEST_F(Cuda, UnaryKernelsMatchTheReference) {
  auto x = hard_inputs();
  for (const char* op :
       {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Neg", "Abs", "Sqrt", "Erf", "Reciprocal"}) {
    for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
      rt::Shape shape{static_cast<int64_t>(x.size())};
      ir::Model m = one_node(op, t, {shape});
      rt::Session gpu(
          m, {.optimization = rt::OptLevel::kNone, .backend = "cuda", .profile = true, .precision = kFp32});
      rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
      rt::Tensor in = floats(t, shape, x);
      auto g = gpu.run({{"x0", rt::Value(in)}})[0].tensor();
      auto r = ref.run({{"x0", rt::Value(in)}})[0].tensor();
      bool on_gpu = false;
      for (const auto& ev : gpu.last_stats().events) on_gpu |= ev.node_name == "op" && ev.backend == "cuda";
      EXPECT_TRUE(on_gpu) << op << " did not run on the GPU";
      // float32: CUDA's expf/logf/tanhf/erff are within 2 ulp, the reference within 2: 4 together.
      // float16/bfloat16: both compute in float and round once: 1 ulp of the type.
      expect_close(g, r, t == DataType::kFloat ? 4 : 1,
                   std::string(op) + " " + std::string(ir::dtype_name(t)));
    }
  }
}

TEST_F(Cuda, BinaryKernelsBroadcastAsTheReferenceDoes) {
  std::vector<std::pair<rt::Shape, rt::Shape>> shapes = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {3, 1}}, {{1}, {5, 7}}, {{4, 1, 6}, {1, 5, 1}}, {{0, 3}, {3}}};
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"}) {
    for (const auto& [sa, sb] : shapes) {
      ir::Model m = one_node(op, DataType::kFloat, {sa, sb});
      rt::Session gpu(m, {.optimization = rt::OptLevel::kNone, .backend = "cuda", .precision = kFp32});
      rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
      auto fill = [](const rt::Shape& s, float k) {
        std::vector<float> v(static_cast<size_t>(rt::shape_numel(s)));
        for (size_t i = 0; i < v.size(); ++i)
          v[i] = 0.25f + std::fabs(std::sin(k * static_cast<float>(i + 1)));
        return rt::Tensor::from_vector<float>(DataType::kFloat, s, v);
      };
      std::vector<std::pair<std::string, rt::Value>> feeds = {{"x0", rt::Value(fill(sa, 0.7f))},
                                                              {"x1", rt::Value(fill(sb, 1.3f))}};
      expect_close(gpu.run(feeds)[0].tensor(), ref.run(feeds)[0].tensor(), 2, op);
    }
  }
}

TEST_F(Cuda, MixedPlacementCopiesEachValueOncePerDevice) {
  // Relu (GPU) -> MaxUnpool (an op the CUDA backend has no kernel for: the CPU) -> Add with a weight
  // (GPU) -> Exp (GPU).
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x =
      b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(1), Dim::of(4), Dim::of(4), Dim::of(4)}));
  auto idx = b.input(
      "idx", Type::tensor(DataType::kInt64, ir::Shape{Dim::of(1), Dim::of(4), Dim::of(4), Dim::of(4)}));
  auto r = b.node("Relu", {x}, {}, "relu");
  auto s = b.node("MaxUnpool", {r, idx},
                  {ir::Attribute::of_ints("kernel_shape", {2, 2}), ir::Attribute::of_ints("strides", {2, 2})},
                  "unpool");
  auto w = b.random_normal("w", {1, 4, 8, 8}, 1.0f);
  auto a = b.node("Add", {s, w}, {}, "add");
  b.output(b.node("Exp", {a}, {}, "exp"), Type::tensor(DataType::kFloat));
  rt::Session gpu(
      m, {.optimization = rt::OptLevel::kNone, .backend = "cuda", .profile = true, .precision = kFp32});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  std::vector<float> xv(64);
  std::vector<int64_t> iv(64);
  for (size_t i = 0; i < xv.size(); ++i) {
    xv[i] = std::sin(static_cast<float>(i)) * 3;
    const int64_t c = static_cast<int64_t>(i) / 16, h = static_cast<int64_t>(i) / 4 % 4,
                  wi = static_cast<int64_t>(i) % 4;
    iv[i] = c * 64 + (2 * h + (wi & 1)) * 8 + 2 * wi;  // one place in each 2x2 window of the 8x8 output
  }
  std::vector<std::pair<std::string, rt::Value>> feeds = {
      {"x", rt::Value(rt::Tensor::from_vector<float>(DataType::kFloat, {1, 4, 4, 4}, xv))},
      {"idx", rt::Value(rt::Tensor::from_vector<int64_t>(DataType::kInt64, {1, 4, 4, 4}, iv))}};
  expect_close(gpu.run(feeds)[0].tensor(), ref.run(feeds)[0].tensor(), 4, "mixed model");
  std::map<std::string, int> ops;
  for (const auto& ev : gpu.last_stats().events) {
    ops[ev.op_type]++;
    if (ev.backend == "cuda") {
      EXPECT_EQ(ev.device, "cuda:0");
    }
  }
  EXPECT_EQ(ops["MemcpyToDevice"], 2);  // x, unpool's output
  EXPECT_EQ(ops["MemcpyToHost"], 2);    // relu's output, the graph output
  EXPECT_EQ(gpu.backends().front().nodes, 3u);
}

TEST_F(Cuda, OutOfMemoryIsAClearErrorAndTheDeviceStaysUsable) {
  try {
    backend_->allocate(size_t{1} << 50);
    FAIL() << "a petabyte was allocated";
  } catch (const rt::OutOfMemory& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("out of GPU memory on cuda:0"), std::string::npos) << msg;
  }
  auto small = backend_->allocate(1 << 20);
  EXPECT_NE(small.get(), nullptr);
  ir::Model m = one_node("Relu", DataType::kFloat, {{8}});
  rt::Session gpu(m, {.optimization = rt::OptLevel::kNone, .backend = "cuda", .precision = kFp32});
  auto out = gpu.run({{"x0", rt::Value(floats(DataType::kFloat, {8}, {-1, 2, -3, 4, -5, 6, -7, 8}))}});
  EXPECT_EQ(out[0].tensor().data<float>()[1], 2.0f);
}

TEST_F(Cuda, DeviceMemoryIsPlannedPerRun) {
  ir::Model m = one_node("Relu", DataType::kFloat, {{1 << 16}});
  rt::Session gpu(m, {.optimization = rt::OptLevel::kNone, .backend = "cuda", .precision = kFp32});
  rt::Tensor x = rt::Tensor::zeros(DataType::kFloat, {1 << 16});
  gpu.run({{"x0", rt::Value(x)}});
  gpu.run({{"x0", rt::Value(x)}});
  const auto& st = gpu.last_stats();
  ASSERT_EQ(st.devices.size(), 2u);
  EXPECT_EQ(st.devices[0].device, "cuda:0");
  EXPECT_TRUE(st.devices[0].memory.planned);
  EXPECT_GE(st.devices[0].memory.lower_bound_bytes, (1u << 16) * 4);
}

// Copies of more than one staging chunk (4 MiB) and of an odd size go through the pinned buffers in
// overlapping chunks; every byte must arrive, both ways, also right after another copy.
TEST_F(Cuda, LargeCopiesRoundTripThroughThePinnedStage) {
  for (int64_t n : {int64_t{70000}, int64_t{2'500'001}, int64_t{9'000'017}}) {
    std::vector<float> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000003) * 0.5f - 7.0f;
    rt::Tensor host = rt::Tensor::from_vector<float>(DataType::kFloat, {n}, v);
    rt::Tensor dev = rt::to_device(*backend_, host);
    rt::Tensor back = rt::to_host(*backend_, dev);
    ASSERT_EQ(back.numel(), n);
    EXPECT_EQ(std::memcmp(back.raw(), host.raw(), host.nbytes()), 0) << n << " floats";
  }
}
