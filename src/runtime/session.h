// The inference session: load -> optimise -> plan -> run, with named inputs and outputs.
//
//   rt::Session s(model, {.threads = 4});
//   auto outs = s.run({{"input", rt::Value(x)}});
//
// A session runs one request at a time (run() takes a lock); the memory plan is learned on the first
// run and learned again whenever the input shapes change.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ir/model.h"
#include "runtime/memory_planner.h"
#include "runtime/value.h"

namespace tessera::rt {

class ExecGraph;
class Backend;
class ThreadPool;

// The graph optimisation levels (src/passes/pipeline.h); each includes the ones before it. `layout`
// (ONNX Runtime's "all") adds the CPU's blocked activation layout, which ties the model to this kind
// of CPU: the default for running, not for saving.
enum class OptLevel { kNone, kBasic, kExtended, kLayout };
std::string_view opt_level_name(OptLevel l);
std::optional<OptLevel> opt_level_from_name(std::string_view s);

struct SessionOptions {
  OptLevel optimization = OptLevel::kLayout;
  int threads = 0;                 // 0: one per hardware thread
  std::string backend = "cpu";     // "cpu", "cuda", "auto"
  bool profile = false;            // time every node of every run
  bool reference_kernels = false;  // only the reference kernels: the oracle the fast ones are tested against
};

// Node metadata key where fusion rules list the names of the ONNX nodes a fused node replaced
// ("conv_1,relu_1"); the profiler reports them with the fused node's time.
inline constexpr const char* kFusedFromKey = "tessera.fused_from";

// One executed node of one run, tied to the ONNX node(s) it came from by node id, never by time.
struct NodeEvent {
  std::string graph_path;  // "main", or the subgraph's path
  uint64_t node_id = 0;
  std::string node_name, op_type, kernel;
  std::string path;  // which of its paths the kernel took ("own gemm", "reference fallback"), or empty
  double start_us = 0, duration_us = 0;  // from the start of the run
  std::vector<Shape> output_shapes;
  std::vector<std::string> fused_from;  // names of the ONNX nodes a fused node replaced
};

struct RunStats {
  double total_us = 0;
  std::vector<NodeEvent> events;  // when profiling
  MemoryStats memory;
  size_t weight_bytes = 0;
  // The kernels' own copies of weights, reordered or packed into their layouts (OpKernel::
  // prepared_bytes), after the last run: memory the process holds on top of weight_bytes.
  size_t prepared_weight_bytes = 0;
};

class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A RunError for a kernel that failed with something other than a KernelError (std::out_of_range,
// std::length_error, std::logic_error...): kernels report bad input as KernelError, so this is a
// Tessera bug. Callers can treat it as any RunError; the fuzzers count it as a finding.
class InternalError : public RunError {
 public:
  using RunError::RunError;
};

class Session {
 public:
  explicit Session(ir::Model model, SessionOptions opts = {});
  static std::unique_ptr<Session> load(const std::filesystem::path& file, SessionOptions opts = {});
  ~Session();

  const ir::Model& model() const { return model_; }  // after optimisation
  const SessionOptions& options() const { return opts_; }
  const std::vector<ir::ValueInfo>& inputs() const;  // graph inputs that are not initializers
  const std::vector<ir::ValueInfo>& outputs() const;

  // Runs with the given inputs (by name) and returns the requested outputs (all, in graph order, when
  // `fetch` is empty). Throws RunError naming the input, node or output at fault.
  std::vector<Value> run(const std::vector<std::pair<std::string, Value>>& feeds,
                         const std::vector<std::string>& fetch = {});
  // Asks a run in progress to stop after its current node (from another thread).
  void cancel() { cancel_ = true; }
  const RunStats& last_stats() const { return stats_; }

 private:
  void check_feed(const ir::ValueInfo& vi, const Value& v) const;

  ir::Model model_;
  SessionOptions opts_;
  std::vector<ir::ValueInfo> inputs_;
  std::vector<std::unique_ptr<Backend>> backends_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<ExecGraph> graph_;
  MemoryPlanner planner_;
  std::vector<std::vector<int64_t>> plan_shapes_;  // input shapes the plan was learned with
  std::mutex run_mu_;
  std::atomic<bool> cancel_{false};
  RunStats stats_;
};

}  // namespace tessera::rt
