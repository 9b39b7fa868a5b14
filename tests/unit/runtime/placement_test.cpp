// Placement, copies between devices, per-device memory, streams, typed kernel infos, weights held once
// per device: the backend interface exercised without a GPU, through a simulated device whose memory
// is host memory the test keeps apart (every pointer its kernels receive must come from it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <set>

#include "ir/builder.h"
#include "runtime/backend.h"
#include "runtime/backend_loader.h"
#include "runtime/pass_target.h"
#include "runtime/session.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;
using ir::Dim;
using ir::Type;

namespace {

struct SimCounters {
  std::mutex mu;
  std::set<const void*> live;  // blocks the device handed out
  size_t to_device = 0, to_host = 0, bytes_in_use = 0, most_bytes = 0, prepared = 0;
  bool foreign_pointer = false, wrong_stream = false, host_input_on_device = false;
  // The device "captures" and fails to (a kernel synchronised), or with captures_succeed, succeeds
  // where nothing was allocated while capturing (as CUDA's backend does); a replay does nothing (the
  // kernels ran when captured, and the tests feed the same inputs again).
  size_t capture_attempts = 0, allocated_while_capturing = 0, replays = 0;
  bool captures_succeed = false, capturing = false;
};

class SimStream : public rt::Stream {
 public:
  void synchronize() override {}
};

class SimEvent : public rt::Event {
 public:
  void record(rt::Stream&) override {}
  void synchronize() override {}
  double elapsed_ms(const rt::Event&) const override { return 0.001; }
};

SimCounters* g_sim = nullptr;
rt::Stream* g_sim_stream = nullptr;

// Checks that a kernel of the simulated device reads only that device's memory, on its stream.
void expect_on_device(rt::KernelContext& ctx, const rt::Tensor& t) {
  std::lock_guard lock(g_sim->mu);
  if (t.device().kind != rt::DeviceKind::kSimulated) g_sim->foreign_pointer = true;
  if (&ctx.stream() != g_sim_stream) g_sim->wrong_stream = true;
}

// Elementwise float kernels of the device.
template <class F>
class SimUnary : public rt::OpKernel {
 public:
  explicit SimUnary(const rt::KernelInfo&) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    expect_on_device(ctx, x);
    rt::Tensor& y = ctx.output_uninitialized(0, DataType::kFloat, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = F{}(x.data<float>()[i]);
  }
};
struct ReluFn {
  float operator()(float v) const { return v > 0 ? v : 0; }
};

// Add that prepares its second input when it is a weight: keeps its own copy and releases the original.
class SimAdd : public rt::OpKernel {
 public:
  explicit SimAdd(const rt::KernelInfo&) {}
  void prepare(rt::PrepareContext& ctx) override {
    const rt::Tensor* w = ctx.constant(1);
    if (!w) return;
    own_.assign(w->data<float>(), w->data<float>() + w->numel());
    own_shape_ = w->shape();
    ctx.release(1);
    std::lock_guard lock(g_sim->mu);
    g_sim->prepared++;
  }
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& a = ctx.input(0);
    expect_on_device(ctx, a);
    const float* b = own_.empty() ? nullptr : own_.data();
    if (!b) {
      expect_on_device(ctx, ctx.input(1));
      b = ctx.input(1).data<float>();
    }
    rt::Tensor& y = ctx.output_uninitialized(0, DataType::kFloat, a.shape());
    for (int64_t i = 0; i < a.numel(); ++i) y.data<float>()[i] = a.data<float>()[i] + b[i];
  }

 private:
  std::vector<float> own_;
  rt::Shape own_shape_;
};

// Relu in float16 on the device: a negative half (sign bit set) becomes +0.
class SimReluHalf : public rt::OpKernel {
 public:
  explicit SimReluHalf(const rt::KernelInfo&) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    expect_on_device(ctx, x);
    rt::Tensor& y = ctx.output_uninitialized(0, DataType::kFloat16, x.shape());
    const auto* in = static_cast<const uint16_t*>(x.raw());
    auto* out = static_cast<uint16_t*>(y.raw());
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = (in[i] & 0x8000u) ? uint16_t{0} : in[i];
  }
};

// Shape on the device: reads only the input's shape and makes its output on the host.
class SimShape : public rt::OpKernel {
 public:
  explicit SimShape(const rt::KernelInfo&) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    expect_on_device(ctx, x);
    std::vector<int64_t> dims(x.shape().begin(), x.shape().end());
    auto n = static_cast<int64_t>(dims.size());
    ctx.set_output(0, rt::Value(rt::Tensor::from_vector<int64_t>(DataType::kInt64, {n}, dims)));
  }
};

// Reshape on the device: the data on the device, the shape read on the host.
class SimReshape : public rt::OpKernel {
 public:
  explicit SimReshape(const rt::KernelInfo&) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor& shape = ctx.input(1);
    expect_on_device(ctx, x);
    if (shape.device().kind != rt::DeviceKind::kCpu) {
      std::lock_guard lock(g_sim->mu);
      g_sim->host_input_on_device = true;
    }
    rt::Shape out(shape.data<int64_t>(), shape.data<int64_t>() + shape.numel());
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), out);
    std::memcpy(y.raw(), x.raw(), x.nbytes());
  }
};

bool all_float(const rt::KernelInfo& info) {
  for (size_t i = 0; i < info.input_count(); ++i)
    if (info.input_dtype(i) != DataType::kFloat) return false;
  return true;
}

class SimDevice : public rt::Backend {
 public:
  SimDevice() {
    auto add = [&](const char* op, rt::KernelFactory f) {
      rt::KernelDef d;
      d.op_type = op;
      d.name = "sim";
      d.supports = all_float;  // typed at session build: the device declines other element types
      if (d.op_type == "Shape" || d.op_type == "Reshape") d.supports = {};  // any element type
      d.create = std::move(f);
      registry_.add(std::move(d));
    };
    add("Relu",
        [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<SimUnary<ReluFn>>(i); });
    add("Add", [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<SimAdd>(i); });
    rt::KernelDef half;
    half.op_type = "Relu";
    half.name = "sim";
    half.priority = 1;
    half.supports = [](const rt::KernelInfo& i) { return i.input_dtype(0) == DataType::kFloat16; };
    half.create = [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<SimReluHalf>(i); };
    registry_.add(std::move(half));
    add("Shape", [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<SimShape>(i); });
    add("Reshape", [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<SimReshape>(i); });
    g_sim_stream = &stream_;
  }
  bool input_on_host(const rt::KernelInfo& n, size_t i) const override {
    return n.op_type() == "Reshape" && i == 1;
  }
  bool output_on_host(const rt::KernelInfo& n, size_t) const override { return n.op_type() == "Shape"; }
  std::string_view name() const override { return "sim"; }
  rt::Device device() const override { return {rt::DeviceKind::kSimulated, 0}; }
  std::string device_name() const override { return "simulated device"; }
  const rt::KernelRegistry& kernels() const override { return registry_; }
  std::shared_ptr<void> allocate(size_t bytes) override {
    void* p = std::malloc(std::max<size_t>(bytes, 1));
    std::lock_guard lock(g_sim->mu);
    g_sim->live.insert(p);
    if (g_sim->capturing) g_sim->allocated_while_capturing++;
    g_sim->bytes_in_use += bytes;
    g_sim->most_bytes = std::max(g_sim->most_bytes, g_sim->bytes_in_use);
    return {p, [bytes](void* q) {
              std::lock_guard l(g_sim->mu);
              g_sim->live.erase(q);
              g_sim->bytes_in_use -= bytes;
              std::free(q);
            }};
  }
  void fill_zero(void* p, size_t bytes, rt::Stream&) override { std::memset(p, 0, bytes); }
  void copy_to_host(const rt::Tensor& src, void* dst, rt::Stream&) override {
    std::memcpy(dst, src.raw(), src.nbytes());
    std::lock_guard lock(g_sim->mu);
    g_sim->to_host++;
  }
  void copy_from_host(const void* src, rt::Tensor& dst, rt::Stream&) override {
    std::memcpy(dst.raw(), src, dst.nbytes());
    std::lock_guard lock(g_sim->mu);
    g_sim->to_device++;
  }
  rt::Stream& stream() override { return stream_; }
  std::unique_ptr<rt::Stream> create_stream() override { return std::make_unique<SimStream>(); }
  std::unique_ptr<rt::Event> create_event() override { return std::make_unique<SimEvent>(); }
  bool begin_capture() override {
    std::lock_guard lock(g_sim->mu);
    g_sim->capture_attempts++;
    g_sim->capturing = true;
    g_sim->allocated_while_capturing = 0;
    return true;
  }
  std::shared_ptr<void> end_capture() override {
    std::lock_guard lock(g_sim->mu);
    g_sim->capturing = false;
    if (!g_sim->captures_succeed || g_sim->allocated_while_capturing) return nullptr;
    return std::make_shared<int>(0);
  }
  void replay(const std::shared_ptr<void>&) override {
    std::lock_guard lock(g_sim->mu);
    g_sim->replays++;
  }

 private:
  rt::KernelRegistry registry_;
  SimStream stream_;
};

class Placement : public ::testing::Test {
 protected:
  void SetUp() override {
    g_sim = &counters_;
    rt::register_backend("sim", [](const rt::BackendOptions&) { return std::make_unique<SimDevice>(); });
  }
  void TearDown() override {
    rt::unregister_backend("sim");
    g_sim = nullptr;
  }
  SimCounters counters_;
};

rt::Tensor ramp(int64_t n, float start) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i) * 0.25f;
  return rt::Tensor::from_vector<float>(DataType::kFloat, {n}, v);
}

// x -> Relu (device) -> Sigmoid (host) -> Add W (device) -> Relu (device) -> y, and the Relu's output is
// also read by Neg (host) -> z.
ir::Model mixed_model(int64_t n) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(n)}));
  auto r = b.node("Relu", {x}, {}, "relu");
  auto s = b.node("Sigmoid", {r}, {}, "sigmoid");
  auto w = b.initializer(ir::make_tensor<float>("W", DataType::kFloat, {n}, std::vector<float>(n, 0.5f)));
  auto a = b.node("Add", {s, w}, {}, "add");
  auto r2 = b.node("Relu", {a}, {}, "relu2");
  auto z = b.node("Neg", {r}, {}, "neg");
  b.output(r2, Type::tensor(DataType::kFloat));
  b.output(z, Type::tensor(DataType::kFloat));
  return m;
}

std::vector<float> expected_y(const rt::Tensor& x) {
  std::vector<float> y;
  for (int64_t i = 0; i < x.numel(); ++i) {
    float r = std::max(0.0f, x.data<float>()[i]);
    y.push_back(1.0f / (1.0f + std::exp(-r)) + 0.5f);
  }
  return y;
}

}  // namespace

TEST_F(Placement, DeviceNodesRunOnTheDeviceWithOneCopyPerValueAndDevice) {
  // In float32 (a device session's default is float16): this test is about where nodes run.
  rt::Session s(mixed_model(64), {.optimization = rt::OptLevel::kNone,
                                  .threads = 1,
                                  .backend = "sim",
                                  .profile = true,
                                  .precision = tessera::passes::Precision::kFp32});
  rt::Tensor x = ramp(64, -8.0f);
  for (int run = 0; run < 2; ++run) {
    auto outs = s.run({{"x", rt::Value(x)}});
    auto want = expected_y(x);
    ASSERT_EQ(outs[0].tensor().device().kind, rt::DeviceKind::kCpu) << "graph outputs come back to the host";
    for (int64_t i = 0; i < 64; ++i) {
      EXPECT_NEAR(outs[0].tensor().data<float>()[i], want[static_cast<size_t>(i)], 1e-6f);
      EXPECT_FLOAT_EQ(outs[1].tensor().data<float>()[i], -std::max(0.0f, x.data<float>()[i]));
    }
  }
  EXPECT_FALSE(counters_.foreign_pointer) << "a device kernel read host memory";
  EXPECT_FALSE(counters_.wrong_stream) << "a device kernel ran without the device's stream";
  // Per run: x to the device; relu's output to the host once (read by Sigmoid and Neg); sigmoid's
  // output to the device; relu2's output to the host. W went to the device once, when compiled.
  std::map<std::string, int> ops;
  for (const auto& ev : s.last_stats().events) ops[ev.op_type]++;
  EXPECT_EQ(ops["MemcpyToDevice"], 2);
  EXPECT_EQ(ops["MemcpyToHost"], 2);
  EXPECT_EQ(counters_.to_device, 1u + 2u * 2u);
  EXPECT_EQ(counters_.to_host, 2u * 2u);
  for (const auto& ev : s.last_stats().events) {
    bool device_op = ev.node_name == "relu" || ev.node_name == "add" || ev.node_name == "relu2";
    if (ev.op_type.rfind("Memcpy", 0) == 0) continue;
    EXPECT_EQ(ev.backend, device_op ? "sim" : "cpu") << ev.node_name;
    EXPECT_EQ(ev.device, device_op ? "sim:0" : "cpu:0") << ev.node_name;
  }
  auto backends = s.backends();
  ASSERT_EQ(backends.size(), 2u);
  EXPECT_EQ(backends[0].name, "sim");
  EXPECT_EQ(backends[0].nodes, 3u);
  EXPECT_EQ(backends[1].nodes, 2u);
}

// y = Reshape(Relu(x), Shape(Relu(x)) computed on the host side...): the shape Shape makes on the host is
// read there by the device's Reshape, and never copied to the device.
TEST_F(Placement, InputsADeviceKernelReadsOnTheHostStayThere) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(2), Dim::of(6)}));
  auto r = b.node("Relu", {x}, {}, "relu");
  auto shape = b.node("Shape", {r}, {}, "shape");
  auto flat = b.initializer(ir::make_tensor<int64_t>("flat", DataType::kInt64, {2}, {3, 4}));
  auto y = b.node("Reshape", {r, flat}, {}, "reshape");
  b.output(y, Type::tensor(DataType::kFloat));
  b.output(shape, Type::tensor(DataType::kInt64));
  rt::Session s(std::move(m),
                {.optimization = rt::OptLevel::kNone, .threads = 1, .backend = "sim", .profile = true});
  EXPECT_EQ(s.backends()[0].nodes, 3u);
  rt::Tensor xv = ramp(12, -1.0f);
  xv = rt::Tensor::from_vector<float>(DataType::kFloat, {2, 6},
                                      std::vector<float>(xv.data<float>(), xv.data<float>() + 12));
  auto outs = s.run({{"x", rt::Value(xv)}});
  EXPECT_EQ(outs[0].tensor().shape(), (rt::Shape{3, 4}));
  EXPECT_FLOAT_EQ(outs[0].tensor().data<float>()[11], std::max(0.0f, xv.data<float>()[11]));
  EXPECT_EQ(outs[1].tensor().data<int64_t>()[1], 6);
  EXPECT_FALSE(counters_.host_input_on_device) << "the Reshape's shape went to the device";
  EXPECT_FALSE(counters_.foreign_pointer);
  std::map<std::string, int> ops;
  for (const auto& ev : s.last_stats().events) ops[ev.op_type]++;
  EXPECT_EQ(ops["MemcpyToDevice"], 1) << "x only";
  EXPECT_EQ(ops["MemcpyToHost"], 1) << "y only: Shape's output is already on the host";
}

// A device session computes in float16 by default: nodes the device runs in float16 are lowered, the
// others (the device's float32-only Add, the host's nodes) stay float32, graph inputs and outputs keep
// their types behind one Cast each.
TEST_F(Placement, ADeviceSessionLowersToFloat16WhereTheDeviceHasNarrowKernels) {
  rt::Session s(mixed_model(64), {.optimization = rt::OptLevel::kNone, .threads = 1, .backend = "sim"});
  const rt::PrecisionResult& p = s.precision();
  EXPECT_EQ(p.precision, tessera::passes::Precision::kFp16) << p.note;
  std::set<std::string> kept(p.kept.begin(), p.kept.end());
  EXPECT_EQ(kept, (std::set<std::string>{"sigmoid", "add", "neg"}));
  EXPECT_GT(p.casts, 0u);
  EXPECT_GE(p.lowered, 2u) << "both Relu nodes compute in float16";
  for (const auto& ev : s.backends()) {
    if (ev.name != "sim") continue;
    EXPECT_EQ(ev.nodes, 3u) << "relu, relu2 in float16 and add in float32";
  }
  rt::Tensor x = ramp(64, -8.0f);
  auto outs = s.run({{"x", rt::Value(x)}});
  ASSERT_EQ(outs[0].tensor().dtype(), DataType::kFloat) << "graph outputs keep their type";
  auto want = expected_y(x);
  // relu(x) rounded to float16 (relative 2^-11), sigmoid and add in float32, relu2 in float16 again.
  for (int64_t i = 0; i < 64; ++i)
    EXPECT_NEAR(outs[0].tensor().data<float>()[i], want[static_cast<size_t>(i)],
                2e-3f * std::abs(want[static_cast<size_t>(i)]));
  rt::Session fp32(mixed_model(64), {.optimization = rt::OptLevel::kNone,
                                     .threads = 1,
                                     .backend = "sim",
                                     .precision = tessera::passes::Precision::kFp32});
  EXPECT_EQ(fp32.precision().precision, tessera::passes::Precision::kFp32);
  EXPECT_TRUE(fp32.precision().kept.empty());
  for (const auto& n : fp32.model().graph.nodes) EXPECT_NE(n.op_type, "Cast");
}

TEST_F(Placement, EachDeviceHasItsOwnPlannedMemory) {
  rt::Session s(mixed_model(1024), {.optimization = rt::OptLevel::kNone, .threads = 1, .backend = "sim"});
  rt::Tensor x = ramp(1024, -100.0f);
  s.run({{"x", rt::Value(x)}});
  s.run({{"x", rt::Value(x)}});
  const auto& st = s.last_stats();
  ASSERT_EQ(st.devices.size(), 2u);
  EXPECT_EQ(st.devices[0].backend, "sim");
  EXPECT_TRUE(st.devices[0].memory.planned);
  EXPECT_GT(st.devices[0].memory.planned_allocations, 0u) << "device tensors come from the device's arena";
  EXPECT_GE(st.devices[0].memory.lower_bound_bytes, 1024u * 4);
  EXPECT_EQ(st.devices[1].backend, "cpu");
  EXPECT_GT(counters_.most_bytes, 0u);
}

TEST_F(Placement, AWeightHeldByAKernelOnTheDeviceIsReleasedOnTheHost) {
  rt::Session s(mixed_model(256), {.optimization = rt::OptLevel::kNone,
                                   .threads = 1,
                                   .backend = "sim",
                                   .precision = tessera::passes::Precision::kFp32});
  EXPECT_EQ(counters_.prepared, 1u) << "kernels prepare when the session is built, not on the first run";
  EXPECT_EQ(s.last_stats().released_weight_bytes, 256u * 4);
  const ir::Tensor* w = s.model().graph.find_initializer("W");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->data, nullptr) << "the original weight is let go";
  rt::Tensor x = ramp(256, -30.0f);
  auto outs = s.run({{"x", rt::Value(x)}});
  auto want = expected_y(x);
  for (int64_t i = 0; i < 256; ++i)
    EXPECT_NEAR(outs[0].tensor().data<float>()[i], want[static_cast<size_t>(i)], 1e-6f);
}

TEST_F(Placement, TheDeviceDeclinesTypesItHasNoKernelFor) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kInt32, ir::Shape{Dim::of(4)}));
  auto r = b.node("Relu", {x});
  b.output(r, Type::tensor(DataType::kInt32));
  rt::Session s(std::move(m), {.optimization = rt::OptLevel::kNone, .threads = 1, .backend = "sim"});
  EXPECT_EQ(s.backends()[0].nodes, 0u);
  auto outs =
      s.run({{"x", rt::Value(rt::Tensor::from_vector<int32_t>(DataType::kInt32, {4}, {-2, 3, -1, 5}))}});
  EXPECT_EQ(outs[0].tensor().data<int32_t>()[1], 3);
  EXPECT_EQ(counters_.to_device + counters_.to_host, 0u) << "nothing placed on the device, nothing copied";
}

TEST_F(Placement, SubgraphsReadDeviceValuesThroughOneHostCopy) {
  // r = Relu(x) on the device; an If whose branches read r from the outer scope, on the host.
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(8)}));
  auto c = b.input("c", Type::tensor(DataType::kBool, ir::Shape{}));
  auto r = b.node("Relu", {x}, {}, "relu");
  auto branch = [&](const char* op, const char* name) {
    ir::Graph g;
    g.name = name;
    ir::GraphBuilder gb(g);
    auto o = gb.node(op, {r}, {}, std::string(name) + "_op");
    gb.output(o, Type::tensor(DataType::kFloat));
    return g;
  };
  auto out = b.node("If", {c},
                    {ir::Attribute::of_graph("then_branch", branch("Neg", "then")),
                     ir::Attribute::of_graph("else_branch", branch("Abs", "else"))},
                    "if");
  b.output(out, Type::tensor(DataType::kFloat));
  rt::Session s(std::move(m), {.optimization = rt::OptLevel::kNone, .threads = 1, .backend = "sim"});
  rt::Tensor xv = ramp(8, -1.0f);
  auto outs =
      s.run({{"x", rt::Value(xv)}, {"c", rt::Value(rt::Tensor::scalar<bool>(DataType::kBool, true))}});
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_FLOAT_EQ(outs[0].tensor().data<float>()[i], -std::max(0.0f, xv.data<float>()[i]));
  EXPECT_EQ(counters_.to_host, 1u);
  EXPECT_FALSE(counters_.foreign_pointer);
}

TEST(Backends, AMissingDeviceBackendIsAOneLineErrorAndAutoFallsBackToTheCpu) {
  ir::Model m = mixed_model(4);
  try {
    rt::Session s(m, {.backend = "cuda"});
    // A machine with libtessera_cuda.so and a GPU may run it: then it must have placed nodes there.
    EXPECT_EQ(s.backends().front().name, "cuda");
  } catch (const rt::RunError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("backend 'cuda' is not available"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  rt::Session a(m, {.backend = "auto"});
  auto outs = a.run({{"x", rt::Value(ramp(4, 1.0f))}});
  EXPECT_EQ(outs.size(), 2u);
  EXPECT_EQ(a.backends().back().name, "cpu");
}

TEST(Backends, UnknownBackendLibraryNamesWhereItWasLookedFor) {
  try {
    rt::load_backend("nosuchdevice");
    FAIL() << "loaded a backend that does not exist";
  } catch (const rt::BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("libtessera_nosuchdevice.so"), std::string::npos) << e.what();
  }
  auto c = rt::backend_library_candidates("cuda");
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.back(), "libtessera_cuda.so");
}

// Constant folding computes a node through the CPU's kernel directly, without a nested session.
TEST(Backends, TheNodeEvaluatorRunsOneNode) {
  ir::Model m = mixed_model(16);
  rt::CpuNodeEvaluator ev;
  ir::Node n;
  n.op_type = "Relu";
  n.inputs = {"a"};
  n.outputs = {"b"};
  auto a = ir::make_tensor<float>("a", DataType::kFloat, {3}, {-1.0f, 0.5f, 2.0f});
  auto out = ev.evaluate(m, n, {&a});
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].name, "b");
  EXPECT_EQ((*out)[0].as<float>()[0], 0.0f);
  EXPECT_EQ((*out)[0].as<float>()[2], 2.0f);
}

TEST(Backends, SwitchedOffRulesDoNotRewrite) {
  // Relu(Conv(x)) fuses into FusedConv unless fuse_conv_activation is off.
  auto model = [] {
    ir::Model m;
    m.ir_version = 8;
    m.opset_imports = {{"", 17}};
    ir::GraphBuilder b(m.graph);
    auto x = b.input(
        "x", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(1), Dim::of(2), Dim::of(5), Dim::of(5)}));
    auto w = b.random_normal("w", {3, 2, 3, 3}, 0.5f);
    auto c = b.node("Conv", {x, w}, {}, "conv");
    auto r = b.node("Relu", {c}, {}, "relu");
    b.output(r, Type::tensor(DataType::kFloat));
    return m;
  };
  auto fused = [](const rt::Session& s) {
    for (const auto& [rule, node] : s.rewrites())
      if (rule == "fuse_conv_activation") return true;
    return false;
  };
  rt::Session on(model(), {.optimization = rt::OptLevel::kExtended, .threads = 1});
  EXPECT_TRUE(fused(on));
  rt::Session off(
      model(),
      {.optimization = rt::OptLevel::kExtended, .threads = 1, .disabled_rules = {"fuse_conv_activation"}});
  EXPECT_FALSE(fused(off));
  rt::Tensor x = rt::Tensor::zeros(DataType::kFloat, {1, 2, 5, 5});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(static_cast<float>(i));
  auto a = on.run({{"x", rt::Value(x)}})[0].tensor();
  auto b = off.run({{"x", rt::Value(x)}})[0].tensor();
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-5f);
}

// ONNX Runtime's I/O binding: an input already in the device's memory is fed without a copy, and outputs
// the device computed stay there when asked (to_host() brings them back); host outputs stay host tensors.
TEST_F(Placement, InputsFedFromTheDeviceAndOutputsLeftThereSkipTheirCopies) {
  rt::Session s(mixed_model(64), {.optimization = rt::OptLevel::kNone,
                                  .threads = 1,
                                  .backend = "sim",
                                  .precision = tessera::passes::Precision::kFp32});
  rt::Tensor x = ramp(64, -8.0f);
  rt::Value dx = s.to_device(rt::Value(x));
  ASSERT_EQ(dx.tensor().device().kind, rt::DeviceKind::kSimulated);
  EXPECT_EQ(counters_.to_device, 2u) << "W when compiled, x now";
  auto want = expected_y(x);
  for (int run = 0; run < 2; ++run) {
    auto outs = s.run({{"x", dx}}, {}, {.outputs_on_device = true});
    ASSERT_EQ(outs[0].tensor().device().kind, rt::DeviceKind::kSimulated) << "relu2 ran on the device";
    ASSERT_EQ(outs[1].tensor().device().kind, rt::DeviceKind::kCpu) << "neg ran on the host";
    rt::Tensor y = s.to_host(outs[0]).tensor();
    ASSERT_EQ(y.device().kind, rt::DeviceKind::kCpu);
    for (int64_t i = 0; i < 64; ++i) {
      EXPECT_NEAR(y.data<float>()[i], want[static_cast<size_t>(i)], 1e-6f);
      EXPECT_FLOAT_EQ(outs[1].tensor().data<float>()[i], -std::max(0.0f, x.data<float>()[i]));
    }
  }
  // Per run: sigmoid's output to the device and relu's to the host; x and relu2's output not at all.
  EXPECT_EQ(counters_.to_device, 2u + 2u);
  EXPECT_EQ(counters_.to_host, 2u + 2u) << "one per run, and the two to_host() calls";
  EXPECT_FALSE(counters_.foreign_pointer);
  // Without the option the same device feed gives host outputs.
  auto outs = s.run({{"x", dx}});
  EXPECT_EQ(outs[0].tensor().device().kind, rt::DeviceKind::kCpu);
}

// The same in a float16 session: the input's first reader is the Cast the lowering put at the boundary.
TEST_F(Placement, DeviceFeedsReachTheLoweringsBoundaryCast) {
  rt::Session s(mixed_model(64), {.optimization = rt::OptLevel::kNone, .threads = 1, .backend = "sim"});
  rt::Tensor x = ramp(64, -8.0f);
  rt::Value dx = s.to_device(rt::Value(x));
  auto want = expected_y(x);
  for (int run = 0; run < 4; ++run) {
    auto outs = s.run({{"x", dx}}, {}, {.outputs_on_device = true});
    rt::Tensor y = s.to_host(outs[0]).tensor();
    for (int64_t i = 0; i < 64; ++i)
      EXPECT_NEAR(y.data<float>()[i], want[static_cast<size_t>(i)],
                  2e-3f * std::abs(want[static_cast<size_t>(i)]));
  }
}

// Relu -> Relu on 32 floats: wholly on the simulated device.
ir::Model relu_chain() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(32)}));
  auto r = b.node("Relu", {x}, {}, "relu");
  b.output(b.node("Relu", {r}, {}, "relu2"), Type::tensor(DataType::kFloat));
  return m;
}

// A model wholly on the device is captured on its second run; where the capture fails, the run starts
// again from its feeds (the attempt had released the values its nodes read last), and the session
// never tries again, saying why.
TEST_F(Placement, AFailedDeviceCaptureRunsTheNodesAgainFromTheirInputs) {
  rt::Session s(relu_chain(), {.optimization = rt::OptLevel::kNone,
                               .threads = 1,
                               .backend = "sim",
                               .precision = tessera::passes::Precision::kFp32});
  rt::Tensor x_in = ramp(32, -8.0f);
  for (int run = 0; run < 3; ++run) {
    auto outs = s.run({{"x", rt::Value(x_in)}});
    for (int64_t i = 0; i < 32; ++i)
      EXPECT_FLOAT_EQ(outs[0].tensor().data<float>()[i], std::max(0.0f, x_in.data<float>()[i])) << run;
  }
  EXPECT_EQ(counters_.capture_attempts, 1u) << "tried on the second run only";
  EXPECT_EQ(s.last_stats().device_graph_replays, 0u);
  EXPECT_NE(s.last_stats().device_graph_note.find("did not finish the capture"), std::string::npos)
      << s.last_stats().device_graph_note;
}

// The capture run hands out the same planned memory as the run that recorded the plan: nothing held
// on the side (a copy of the frame's values for a second try, the caller's references to the last
// run's device outputs) may keep a planned block busy, or the capture allocates and fails.
TEST_F(Placement, ACaptureAllocatesNothingWhileTheCallerHoldsTheLastDeviceOutputs) {
  counters_.captures_succeed = true;
  rt::Session s(relu_chain(), {.optimization = rt::OptLevel::kNone,
                               .threads = 1,
                               .backend = "sim",
                               .precision = tessera::passes::Precision::kFp32});
  rt::Tensor x_in = ramp(32, -8.0f);
  rt::Value dx = s.to_device(rt::Value(x_in));
  std::vector<rt::Value> last;
  for (int run = 0; run < 4; ++run) {
    auto outs = s.run({{"x", dx}}, {}, {.outputs_on_device = true});
    rt::Tensor y = s.to_host(outs[0]).tensor();
    for (int64_t i = 0; i < 32; ++i)
      EXPECT_FLOAT_EQ(y.data<float>()[i], std::max(0.0f, x_in.data<float>()[i])) << run;
    last = std::move(outs);  // held while the next run runs, as a caller does
  }
  EXPECT_EQ(counters_.capture_attempts, 1u);
  EXPECT_EQ(counters_.allocated_while_capturing, 0u);
  EXPECT_EQ(s.last_stats().device_graph_replays, 2u) << s.last_stats().device_graph_note;
  EXPECT_EQ(counters_.replays, 3u) << "the captured graph launched once, then replayed twice";
}

// An output fed back as the next run's input (a decoder's state) keeps its memory while that run reads
// it, even though the session hands device outputs out as aliases: in y = Relu(Relu(x)) + x the plan
// puts the first Relu's output where y was, so without that the first node would overwrite x.
TEST_F(Placement, ADeviceOutputFedBackIsNotOverwrittenWhileRead) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(32)}));
  auto r1 = b.node("Relu", {x}, {}, "relu");
  auto r2 = b.node("Relu", {r1}, {}, "relu2");
  b.output(b.node("Add", {r2, x}, {}, "add"), Type::tensor(DataType::kFloat));
  rt::Session s(std::move(m), {.optimization = rt::OptLevel::kNone,
                               .threads = 1,
                               .backend = "sim",
                               .precision = tessera::passes::Precision::kFp32,
                               .device_graphs = false});
  rt::Tensor x_in = ramp(32, -4.0f);
  rt::Value v = s.to_device(rt::Value(x_in));
  for (int run = 0; run < 4; ++run) v = s.run({{"x", v}}, {}, {.outputs_on_device = true})[0];
  rt::Tensor y = s.to_host(v).tensor();
  for (int64_t i = 0; i < 32; ++i) {
    float x0 = x_in.data<float>()[i];
    EXPECT_FLOAT_EQ(y.data<float>()[i], x0 > 0 ? 16 * x0 : x0) << i;  // x -> relu(x) + x, four times
  }
}

// A second input read only late in the graph (BERT's attention mask, token types) is copied in with the
// first, before any device node: the model stays one device segment and is captured and replayed.
TEST_F(Placement, EveryInputIsCopiedInBeforeTheDeviceNodesSoTheGraphIsCaptured) {
  counters_.captures_succeed = true;
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(32)}));
  auto y = b.input("y", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(32)}));
  auto r = b.node("Relu", {x}, {}, "relu");
  b.output(b.node("Add", {r, y}, {}, "add"), Type::tensor(DataType::kFloat));
  rt::Session s(std::move(m), {.optimization = rt::OptLevel::kNone,
                               .threads = 1,
                               .backend = "sim",
                               .precision = tessera::passes::Precision::kFp32});
  rt::Tensor x_in = ramp(32, -4.0f), y_in = ramp(32, 1.0f);
  for (int run = 0; run < 4; ++run) {
    auto outs = s.run({{"x", rt::Value(x_in)}, {"y", rt::Value(y_in)}});
    if (run >= 2) continue;  // the simulated device's replays compute nothing: their results are stale
    for (int64_t i = 0; i < 32; ++i)
      EXPECT_FLOAT_EQ(outs[0].tensor().data<float>()[i],
                      std::max(0.0f, x_in.data<float>()[i]) + y_in.data<float>()[i]);
  }
  EXPECT_EQ(s.last_stats().device_graph_replays, 2u) << s.last_stats().device_graph_note;
}
