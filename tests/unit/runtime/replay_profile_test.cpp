// Profiled runs of a model that is replayed as one device graph, without a GPU: a simulated device that
// captures, replays and traces as the CUDA backend does (each kernel a record with a device time, the
// replay's records carrying the captured graph node's key or not). The profiled run replays the graph,
// its layers come from the replay's records through the capture's layout, and a replay whose records do
// not match the capture is profiled again node by node, saying why.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <utility>

#include "ir/builder.h"
#include "runtime/backend.h"
#include "runtime/backend_loader.h"
#include "runtime/session.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;
using ir::Type;

namespace {

// The simulated device's clock, captures and trace. Each kernel "launch" is a piece of work of a known
// duration: run now (a record under the pushed id when tracing) or, under capture, added to the graph.
struct Tsim {
  std::mutex mu;
  double clock_us = 1000;
  bool capturing = false, tracing = false;
  bool keyed = true;      // a replay's records carry the captured node's key
  bool lose_one = false;  // a replay loses its first record (as when CUPTI drops one)
  uint64_t next_key = 1, pushed = 0;
  struct Work {
    uint64_t key;
    std::string name;
    rt::WorkKind kind;
    double us;
  };
  std::vector<Work> graph;  // the capture's work, in order
  std::vector<std::vector<rt::CapturedWork>> layout;
  size_t marked = 0;  // graph entries already given to a node
  std::vector<rt::TraceRecord> records;
  size_t replays = 0;

  void run(const std::string& name, rt::WorkKind kind, double us, uint64_t id, uint64_t key) {
    if (tracing) records.push_back({id, clock_us, us, name, kind, key});
    clock_us += us + 0.5;  // half a microsecond between pieces of work: the launch gap
  }
  void launch(const std::string& name, rt::WorkKind kind, double us) {
    std::lock_guard lock(mu);
    if (capturing) {
      graph.push_back({next_key++, name, kind, us});
      return;
    }
    run(name, kind, us, pushed, 0);
  }
};

Tsim* g_tsim = nullptr;

// Relu: one kernel; Add: a memset then a kernel (a node with several pieces of work).
class TsimRelu : public rt::OpKernel {
 public:
  explicit TsimRelu(const rt::KernelInfo&) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    rt::Tensor& y = ctx.output_uninitialized(0, DataType::kFloat, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = std::max(0.0f, x.data<float>()[i]);
    g_tsim->launch("relu_kernel", rt::WorkKind::kKernel, 10);
  }
};

class TsimAdd : public rt::OpKernel {
 public:
  explicit TsimAdd(const rt::KernelInfo&) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& a = ctx.input(0);
    const rt::Tensor& b = ctx.input(1);
    rt::Tensor& y = ctx.output_uninitialized(0, DataType::kFloat, a.shape());
    for (int64_t i = 0; i < a.numel(); ++i) y.data<float>()[i] = a.data<float>()[i] + b.data<float>()[i];
    g_tsim->launch("Memset", rt::WorkKind::kMemset, 2);
    g_tsim->launch("add_kernel", rt::WorkKind::kKernel, 20);
  }
};

class TsimStream : public rt::Stream {
 public:
  void synchronize() override {}
};

class TsimEvent : public rt::Event {
 public:
  void record(rt::Stream&) override {}
  void synchronize() override {}
  double elapsed_ms(const rt::Event&) const override { return 0.5; }  // not a device time
};

class TsimDevice : public rt::Backend {
 public:
  TsimDevice() {
    auto add = [&](const char* op, rt::KernelFactory f) {
      rt::KernelDef d;
      d.op_type = op;
      d.name = "tsim";
      d.supports = [](const rt::KernelInfo& i) { return i.input_dtype(0) == DataType::kFloat; };
      d.create = std::move(f);
      registry_.add(std::move(d));
    };
    add("Relu", [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<TsimRelu>(i); });
    add("Add", [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<TsimAdd>(i); });
  }
  std::string_view name() const override { return "tsim"; }
  rt::Device device() const override { return {rt::DeviceKind::kSimulated, 0}; }
  std::string device_name() const override { return "simulated traced device"; }
  const rt::KernelRegistry& kernels() const override { return registry_; }
  std::shared_ptr<void> allocate(size_t bytes) override {
    return {std::malloc(std::max<size_t>(bytes, 1)), [](void* p) { std::free(p); }};
  }
  void fill_zero(void* p, size_t bytes, rt::Stream&) override { std::memset(p, 0, bytes); }
  void copy_to_host(const rt::Tensor& src, void* dst, rt::Stream&) override {
    std::memcpy(dst, src.raw(), src.nbytes());
    g_tsim->launch("Memcpy DtoH", rt::WorkKind::kMemcpy, 3);
  }
  void copy_from_host(const void* src, rt::Tensor& dst, rt::Stream&) override {
    std::memcpy(dst.raw(), src, dst.nbytes());
    g_tsim->launch("Memcpy HtoD", rt::WorkKind::kMemcpy, 3);
  }
  rt::Stream& stream() override { return stream_; }
  std::unique_ptr<rt::Stream> create_stream() override { return std::make_unique<TsimStream>(); }
  std::unique_ptr<rt::Event> create_event() override { return std::make_unique<TsimEvent>(); }
  bool begin_capture() override {
    std::lock_guard lock(g_tsim->mu);
    g_tsim->capturing = true;
    g_tsim->graph.clear();
    g_tsim->layout.clear();
    g_tsim->marked = 0;
    return true;
  }
  std::shared_ptr<void> end_capture() override {
    std::lock_guard lock(g_tsim->mu);
    g_tsim->capturing = false;
    return std::make_shared<int>(0);
  }
  std::vector<std::vector<rt::CapturedWork>> capture_layout() override { return g_tsim->layout; }
  // The node's work under capture: what the graph gained since the last node.
  void node_end() override {
    std::lock_guard lock(g_tsim->mu);
    if (!g_tsim->capturing) return;
    auto& node = g_tsim->layout.emplace_back();
    for (; g_tsim->marked < g_tsim->graph.size(); ++g_tsim->marked)
      node.push_back({g_tsim->graph[g_tsim->marked].key, g_tsim->graph[g_tsim->marked].kind});
  }
  void replay(const std::shared_ptr<void>&) override {
    std::lock_guard lock(g_tsim->mu);
    g_tsim->replays++;
    bool lose = g_tsim->lose_one;
    for (const auto& w : g_tsim->graph) {
      if (std::exchange(lose, false)) continue;
      g_tsim->run(w.name, w.kind, w.us, g_tsim->pushed, g_tsim->keyed ? w.key : 0);
    }
  }
  bool trace_begin() override {
    std::lock_guard lock(g_tsim->mu);
    g_tsim->tracing = true;
    g_tsim->records.clear();
    return true;
  }
  void trace_push(uint64_t id) override { g_tsim->pushed = id; }
  void trace_pop() override { g_tsim->pushed = 0; }
  std::vector<rt::TraceRecord> trace_end() override {
    std::lock_guard lock(g_tsim->mu);
    g_tsim->tracing = false;
    return std::move(g_tsim->records);
  }

 private:
  rt::KernelRegistry registry_;
  TsimStream stream_;
};

// y = Relu(Add(Relu(x), x)): copy in, three device nodes, copy out.
ir::Model chain() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(8)}));
  auto r = b.node("Relu", {x}, {}, "relu");
  auto a = b.node("Add", {r, x}, {}, "add");
  b.output(b.node("Relu", {a}, {}, "relu2"), Type::tensor(DataType::kFloat));
  return m;
}

class ReplayProfile : public ::testing::Test {
 protected:
  void SetUp() override {
    g_tsim = &sim_;
    rt::register_backend("tsim", [](const rt::BackendOptions&) { return std::make_unique<TsimDevice>(); });
  }
  void TearDown() override {
    rt::unregister_backend("tsim");
    g_tsim = nullptr;
  }
  // A session run until its graph is captured and replayed once, then one profiled run.
  const rt::RunStats& profile(rt::Session& s) {
    std::vector<float> xv{-2, -1, 0, 1, 2, 3, -4, 5};
    rt::Value x(rt::Tensor::from_vector<float>(DataType::kFloat, {8}, xv));
    for (int run = 0; run < 3; ++run) s.run({{"x", x}});
    EXPECT_EQ(s.last_stats().device_graph_replays, 1u) << s.last_stats().device_graph_note;
    // The simulated replay computes nothing (its outputs are stale): only the node-by-node runs are checked.
    auto outs = s.run({{"x", x}}, {}, {.profile = true});
    if (!s.last_stats().layers_from_replay) {
      for (size_t i = 0; i < xv.size(); ++i) {
        EXPECT_FLOAT_EQ(outs[0].tensor().data<float>()[i], std::max(0.0f, std::max(0.0f, xv[i]) + xv[i]));
      }
    }
    return s.last_stats();
  }
  static rt::Session session() {
    return rt::Session(chain(), {.optimization = rt::OptLevel::kNone,
                                 .threads = 1,
                                 .backend = "tsim",
                                 .precision = tessera::passes::Precision::kFp32});
  }
  Tsim sim_;
};

const rt::NodeEvent& event(const rt::RunStats& st, const std::string& name) {
  for (const auto& ev : st.events)
    if (ev.node_name == name) return ev;
  throw std::runtime_error("no event for " + name);
}

void expect_replayed_layers(const rt::RunStats& st, const std::string& method) {
  ASSERT_TRUE(st.layers_from_replay) << st.replay_trace_note;
  EXPECT_EQ(st.replay_trace_method, method);
  EXPECT_EQ(st.device_graph_replays, 2u) << "the profiled run replayed";
  ASSERT_EQ(st.events.size(), 5u) << "copy in, relu, add, relu2, copy out";
  EXPECT_EQ(event(st, "relu").duration_us, 10);
  EXPECT_EQ(event(st, "relu").device_kernels, (std::vector<std::string>{"relu_kernel"}));
  EXPECT_EQ(event(st, "add").duration_us, 22);
  EXPECT_EQ(event(st, "add").device_kernels, (std::vector<std::string>{"Memset", "add_kernel"}));
  EXPECT_EQ(event(st, "relu2").duration_us, 10);
  // Copy in (3) gap relu (10) gap memset (2) gap add (20) gap relu2 (10) gap copy out (3): 48 us of work,
  // 5 gaps of 0.5 us; the spans hold the gaps and add up to the device time.
  double sum = 0, spans = 0;
  for (const auto& ev : st.events) {
    sum += ev.duration_us;
    spans += ev.span_us;
  }
  EXPECT_DOUBLE_EQ(sum, 48);

  EXPECT_DOUBLE_EQ(st.device_us, 50.5);
  EXPECT_DOUBLE_EQ(spans, st.device_us);
  EXPECT_DOUBLE_EQ(event(st, "add").span_us, 23);
}

}  // namespace

TEST_F(ReplayProfile, AProfiledRunReplaysTheGraphAndTiesItsRecordsToTheNodesByKey) {
  rt::Session s = session();
  expect_replayed_layers(profile(s), "graph node ids");
}

TEST_F(ReplayProfile, WithoutKeysTheRecordsAreTiedByLaunchOrder) {
  sim_.keyed = false;
  rt::Session s = session();
  expect_replayed_layers(profile(s), "launch order");
}

TEST_F(ReplayProfile, AReplayThatDoesNotMatchItsCaptureIsProfiledNodeByNode) {
  sim_.lose_one = true;
  rt::Session s = session();
  const rt::RunStats& st = profile(s);
  EXPECT_FALSE(st.layers_from_replay);
  EXPECT_NE(st.replay_trace_note.find("the replay traced 3 pieces of work, the capture recorded 4"),
            std::string::npos)
      << st.replay_trace_note;
  // The same run again, node by node: every node's own work under its own id.
  EXPECT_EQ(event(st, "add").duration_us, 22);
  EXPECT_EQ(event(st, "relu2").device_kernels, (std::vector<std::string>{"relu_kernel"}));
  EXPECT_GT(st.device_us, 0);
  // Later profiled runs do not try the replay again; unprofiled runs still replay.
  size_t replays = sim_.replays;
  std::vector<float> xv{-2, -1, 0, 1, 2, 3, -4, 5};
  rt::Value x(rt::Tensor::from_vector<float>(DataType::kFloat, {8}, xv));
  s.run({{"x", x}}, {}, {.profile = true});
  EXPECT_EQ(sim_.replays, replays);
  EXPECT_FALSE(s.last_stats().layers_from_replay);
  s.run({{"x", x}});
  EXPECT_EQ(sim_.replays, replays + 1);
}
