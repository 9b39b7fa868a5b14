// NVTX ranges named after the layers, checked as a timeline tool would receive them. Nsight Systems does
// not run on the GPU test machine, so the test runs itself again in a child process with
// NVTX_INJECTION64_PATH naming our own injection library (tests/cuda/nvtx_recorder/recorder.cpp), which
// logs every range push and pop; the child runs a small model node by node, then with CUDA graphs
// (the run that captures, replays, a profiled replay as `tessera profile --backend cuda` makes them) and
// checks, after each run, the outermost ranges against the layers the run's profile names:
//   - a run node by node and the run that captures: one range a layer, named after the ONNX node (a fused
//     node after the node it replaced), in execution order, each closed before the next opens;
//   - the capture then launches the graph: one more range, "tessera: CUDA graph replay";
//   - a replay (plain or profiled): that one range and nothing else. NVTX ranges are host-side: a
//     replayed graph launches no node from the host, so a timeline shows the replay's kernels (with
//     --cuda-graph-trace=node) under that one range, and the layers' names under the capture's ranges.
//     Nsight Systems shows ranges opened during a capture at capture time, not at the replays;
//   - with TESSERA_CUDA_GRAPHS=off (no capture): every run one range a layer again.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "cuda_test_util.h"
#include "ir/builder.h"
#include "runtime/session.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;
using ir::Type;

namespace {

constexpr const char* kReplayRange = "tessera: CUDA graph replay";
constexpr int64_t kRows = 256, kCols = 384;

std::vector<float> wave(size_t n, float f, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(f * static_cast<float>(i % 997) + 0.1f);
  return v;
}

// MatMul + bias + Relu, a second MatMul, LayerNormalization, Softmax and a residual Mul, every node named.
ir::Model layers() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(kRows), ir::Dim::of(kCols)}));
  auto w1 = b.initializer(
      ir::make_tensor<float>("W1", DataType::kFloat, {kCols, kCols}, wave(kCols * kCols, 0.37f, 0.05f)));
  auto b1 = b.initializer(ir::make_tensor<float>("B1", DataType::kFloat, {kCols}, wave(kCols, 0.11f, 0.1f)));
  auto w2 = b.initializer(
      ir::make_tensor<float>("W2", DataType::kFloat, {kCols, kCols}, wave(kCols * kCols, 0.53f, 0.05f)));
  auto g = b.initializer(ir::make_tensor<float>("G", DataType::kFloat, {kCols}, wave(kCols, 0.7f, 1.0f)));
  auto h =
      b.node("Relu", {b.node("Add", {b.node("MatMul", {x, w1}, {}, "layer1_matmul"), b1}, {}, "layer1_bias")},
             {}, "layer1_relu");
  auto n = b.node("LayerNormalization", {b.node("MatMul", {h, w2}, {}, "layer2_matmul"), g},
                  {ir::Attribute::of_int("axis", -1)}, "layer2_norm");
  auto sm = b.node("Softmax", {n}, {ir::Attribute::of_int("axis", -1)}, "layer3_softmax");
  b.output(b.node("Mul", {sm, x}, {}, "layer4_residual"), Type::tensor(DataType::kFloat));
  return m;
}

// The injection library: beside the test binary (build tree) or in ../lib (the bundle).
std::string recorder_path() {
  if (const char* p = std::getenv("TESSERA_NVTX_RECORDER")) return p;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (const auto& p :
       {exe / "libtessera_nvtx_recorder.so", exe / ".." / "lib" / "libtessera_nvtx_recorder.so"})
    if (std::filesystem::exists(p)) return std::filesystem::canonical(p).string();
  return "";
}

// The outermost ranges of a log, in the order they opened, less the host/device copies' (they run node
// by node around a replay too); `error` says what is unbalanced.
struct Ranges {
  std::vector<std::string> top;
  std::string error;
};

Ranges outermost(const std::string& log) {
  Ranges r;
  std::map<long, int> depth;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string kind;
    long tid = 0;
    f >> kind >> tid;
    std::string message;
    std::getline(f, message);
    if (!message.empty() && message[0] == ' ') message.erase(0, 1);
    if (kind == "push") {
      if (depth[tid]++ == 0 && message.rfind("Memcpy", 0) != 0) r.top.push_back(message);
    } else if (kind == "pop") {
      if (--depth[tid] < 0 && r.error.empty())
        r.error = "a pop without a range open on thread " + std::to_string(tid);
    }
  }
  for (const auto& [tid, d] : depth)
    if (d > 0 && r.error.empty())
      r.error = std::to_string(d) + " ranges left open on thread " + std::to_string(tid);
  return r;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return "[" + s + "]";
}

// What the executor names a node's range after: the node's name, or its operator where it has none
// (copies left out).
std::vector<std::string> layer_names(const rt::RunStats& st) {
  std::vector<std::string> out;
  for (const auto& ev : st.events)
    if (ev.backend == "cuda" && ev.op_type.rfind("Memcpy", 0) != 0)
      out.push_back(ev.node_name.empty() ? ev.op_type : ev.node_name);
  return out;
}

class CudaNvtx : public cuda_test::CudaBackendTest {};
class CudaNvtxChild : public cuda_test::CudaBackendTest {};

// The recorder's log functions, found once the first NVTX call has loaded it.
struct Recorder {
  const char* (*log)() = nullptr;
  void (*clear)() = nullptr;
  std::string take() {
    std::string s = log();
    clear();
    return s;
  }
};

Recorder open_recorder() {
  Recorder r;
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  void* h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  if (!h) return r;
  r.log = reinterpret_cast<const char* (*)()>(dlsym(h, "tessera_nvtx_log"));
  r.clear = reinterpret_cast<void (*)()>(dlsym(h, "tessera_nvtx_clear"));
  return r;
}

}  // namespace

// Run by CudaNvtx.LayerRangesNodeByNodeAtCaptureAndOneRangeAReplay in a child process under the recorder.
TEST_F(CudaNvtxChild, RangesOfEachRun) {
  if (!std::getenv("TESSERA_NVTX_CHILD")) GTEST_SKIP() << "run by CudaNvtx.* under the NVTX recorder";
  const std::vector<float> xv = wave(kRows * kCols, 0.013f, 1.0f);
  auto feeds = [&] {
    return std::vector<std::pair<std::string, rt::Value>>{
        {"x", rt::Value(rt::Tensor::from_vector<float>(DataType::kFloat, {kRows, kCols}, xv))}};
  };

  // Node by node. Float32 (no Casts inserted): every range then names nodes of the model.
  const auto precision = tessera::passes::Precision::kFp32;
  rt::Session plain(layers(), {.backend = "cuda", .precision = precision, .device_graphs = false});
  plain.run(feeds());
  Recorder rec = open_recorder();
  ASSERT_TRUE(rec.log && rec.clear) << "no NVTX call reached the injection library";
  rec.take();
  plain.run(feeds(), {}, {.profile = true});
  const std::vector<std::string> names = layer_names(plain.last_stats());
  ASSERT_GE(names.size(), 3u);
  // Each range names a node of the model, or a fused node that replaced some (named after one of them
  // or not): every node of the model is under a range of its own or of its fused node.
  std::set<std::string> model_nodes, covered;
  for (const auto& n : layers().graph.nodes) model_nodes.insert(n.name);
  for (const auto& ev : plain.last_stats().events) {
    if (ev.backend != "cuda" || ev.op_type.rfind("Memcpy", 0) == 0) continue;
    const bool own = model_nodes.count(ev.node_name) > 0;
    if (own) covered.insert(ev.node_name);
    for (const auto& f : ev.fused_from) {
      EXPECT_EQ(model_nodes.count(f), 1u) << ev.node_name << " was fused from " << f;
      covered.insert(f);
    }
    EXPECT_TRUE(own || !ev.fused_from.empty())
        << "range " << ev.node_name << " (" << ev.op_type << ") names no node of the model";
  }
  EXPECT_EQ(covered, model_nodes) << "ranges " << joined(names);
  Ranges r = outermost(rec.take());
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.top, names) << "profiled run node by node";
  plain.run(feeds());
  r = outermost(rec.take());
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.top, names) << "run node by node";

  // CUDA graphs: the capture, then replays.
  rt::Session graphs(layers(), {.backend = "cuda", .precision = precision});
  rec.take();  // whatever its build opened (libraries' own ranges) is no run's
  std::vector<std::vector<std::string>> runs;
  for (int k = 0; k < 4; ++k) {
    graphs.run(feeds());
    r = outermost(rec.take());
    EXPECT_EQ(r.error, "") << "run " << k;
    runs.push_back(r.top);
  }
  ASSERT_GE(graphs.last_stats().device_graph_replays, 1u) << graphs.last_stats().device_graph_note;
  graphs.run(feeds(), {}, {.profile = true});
  const rt::RunStats& st = graphs.last_stats();
  r = outermost(rec.take());
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.top, std::vector<std::string>{kReplayRange}) << "profiled replay";
  std::vector<std::string> captured = layer_names(st);  // the captured nodes' events
  EXPECT_EQ(captured, names) << "the replay's layers";
  std::vector<std::string> capture_run = captured;
  capture_run.push_back(kReplayRange);
  auto at = std::find(runs.begin(), runs.end(), capture_run);
  ASSERT_NE(at, runs.end()) << "no run opened a range a layer and then the replay's; runs: "
                            << joined(runs[0]) << " " << joined(runs[1]) << " " << joined(runs[2]) << " "
                            << joined(runs[3]);
  for (auto it = runs.begin(); it != at; ++it) EXPECT_EQ(*it, names) << "a run before the capture";
  for (auto it = at + 1; it != runs.end(); ++it)
    EXPECT_EQ(*it, std::vector<std::string>{kReplayRange}) << "a replay";
  EXPECT_LT(at - runs.begin(), 3) << "the graph was captured late: nothing was replayed after it";

  // TESSERA_CUDA_GRAPHS=off: no capture, every run a range a layer (the timeline with the layers' kernels).
  setenv("TESSERA_CUDA_GRAPHS", "off", 1);
  rt::Session off(layers(), {.backend = "cuda", .precision = precision});
  rec.take();
  for (int k = 0; k < 3; ++k) {
    off.run(feeds());
    r = outermost(rec.take());
    EXPECT_EQ(r.error, "") << "TESSERA_CUDA_GRAPHS=off, run " << k;
    EXPECT_EQ(r.top, names) << "TESSERA_CUDA_GRAPHS=off, run " << k;
  }
  EXPECT_EQ(off.last_stats().device_graph_replays, 0u);
  unsetenv("TESSERA_CUDA_GRAPHS");
}

TEST_F(CudaNvtx, LayerRangesNodeByNodeAtCaptureAndOneRangeAReplay) {
  const std::string lib = recorder_path();
  ASSERT_FALSE(lib.empty()) << "libtessera_nvtx_recorder.so is neither beside the test nor in ../lib";
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  // The child runs the one test whatever sharding the parent runs under.
  const std::string cmd = "env -u GTEST_SHARD_INDEX -u GTEST_TOTAL_SHARDS NVTX_INJECTION64_PATH='" + lib +
                          "' TESSERA_NVTX_CHILD=1 '" + exe +
                          "' --gtest_filter=CudaNvtxChild.RangesOfEachRun 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
  EXPECT_EQ(out.find("[  SKIPPED ]"), std::string::npos) << out;
}
