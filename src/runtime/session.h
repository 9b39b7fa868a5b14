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
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/model.h"
#include "passes/target.h"
#include "runtime/memory_planner.h"
#include "runtime/precision.h"
#include "runtime/value.h"

namespace tessera::rt {

class ExecGraph;
class Backend;
struct BoundaryTimes;
class ThreadPool;

// The graph optimisation levels (src/passes/pipeline.h); each includes the ones before it. `layout`
// (ONNX Runtime's "all") adds the backend's activation layout (the CPU's blocked one), which ties the
// model to this kind of machine: the default for running, not for saving.
using passes::opt_level_from_name;
using passes::opt_level_name;
using passes::OptLevel;

struct SessionOptions {
  OptLevel optimization = OptLevel::kLayout;
  int threads = 0;                 // 0: one per hardware thread
  std::string backend = "cpu";     // "cpu", "cuda", "auto" (a device backend where one is present)
  int device = 0;                  // which device of the backend's kind
  bool profile = false;            // time every node of every run
  bool reference_kernels = false;  // only the reference kernels: the oracle the fast ones are tested against
  std::vector<std::string> disabled_rules = {};  // rewrite rules switched off (passes::list_rules names)
  // What the session computes in; unset: the backend's default (float16 with float32 accumulation on a
  // GPU, float32 on the CPU). runtime/precision.h.
  std::optional<passes::Precision> precision = std::nullopt;
  // The activation layout of convolution chains; unset: the backend's best (NHWC on a GPU, the CPU's
  // channel-blocked layout). Applies from the `layout` optimisation level on.
  std::optional<passes::Layout> layout = std::nullopt;
  // Replay a model that runs wholly on the GPU as one captured device graph (CUDA graphs) from its
  // second run with the same input shapes on (re-captured when they change). executor.h.
  bool device_graphs = true;
  // A flag of the caller's (a studio job's Cancel; only read here): once set, the session's building
  // stops between its steps and kernels, and no run starts (RunError "... cancelled"). A run in
  // progress is stopped by cancel(); set the flag first, then call cancel(), and a run that was about
  // to start cannot miss it.
  const std::atomic<bool>* cancel = nullptr;
};

using passes::kFusedFromKey;

// One executed node of one run, tied to the ONNX node(s) it came from by node id, never by time.
// Copies the session inserted between devices appear as nodes of op type MemcpyToDevice/MemcpyToHost.
struct NodeEvent {
  std::string graph_path;  // "main", or the subgraph's path
  uint64_t node_id = 0;
  std::string node_name, op_type, kernel;
  std::string backend;  // "cpu", "cuda"
  std::string device;   // "cpu:0", "cuda:0"
  std::string path;     // which of its paths the kernel took ("own gemm", "reference fallback"), or empty
  double start_us = 0, duration_us = 0;  // from the start of the run
  std::vector<Shape> output_shapes;
  std::vector<std::string> fused_from;  // names of the ONNX nodes a fused node replaced
  // The device kernels, copies and memsets the node ran, by name, in launch order without repeats, when
  // the run was traced (Backend::trace_begin); duration_us is then their summed device time.
  std::vector<std::string> device_kernels;
  // Traced runs: the device time (microseconds, the trace's clock) of the node's first piece of work,
  // -1 where it ran none; its span is from there to the next node's first start (the last node's ends
  // with its last work), so that spans show launch gaps and sum to the run's device time.
  double device_start_us = -1, span_us = 0;
};

// The memory of one backend's device in the last run.
struct DeviceMemoryStats {
  std::string backend, device;
  MemoryStats memory;
  size_t weight_bytes = 0;  // weights copied to this device (0 for the host, whose weights are the model's)
};

struct DeviceReplay;  // executor.h
struct RunContext;    // executor.h

struct RunStats {
  double total_us = 0;
  // Runs so far that replayed the captured device graph instead of running the nodes one by one.
  size_t device_graph_replays = 0;
  // Why the main graph is not captured and replayed (empty while it is, or before it was tried).
  std::string device_graph_note;
  std::vector<NodeEvent> events;  // when profiling
  // Traced runs: from the first device work's start to the last one's end (0 where none was traced);
  // and whether the device nodes' times came from a traced replay of the captured device graph (else
  // from the nodes run one by one, each launched from the host).
  double device_us = 0;
  bool layers_from_replay = false;
  // Runs that replayed the device graph timed (profiled, or RunOptions::time_device): the graph's device
  // time between events queued after a gate that opens once it is submitted (Backend::time_replays);
  // 0 otherwise.
  double replay_device_us = 0;
  std::string replay_trace_method;  // how: "graph node ids" or "launch order" (runtime/replay_trace.h)
  // Why a profiled run of a replayed model could not take its layers from a traced replay (empty when
  // it did, or when it was not tried).
  std::string replay_trace_note;
  // A stamped run (RunOptions::stamp_repeats): each replayed node's span from the stamped replays
  // (runtime/replay_trace.h, stamped_spans), in run order, with what the replays measured; empty, with
  // the reason in stamp_note, where the run did not replay or the device could not stamp.
  struct StampedSpan {
    std::string graph_path, node_name;
    uint64_t node_id = 0;
    double span_us = 0;
  };
  std::vector<StampedSpan> stamped;
  double stamped_device_us = 0;  // median device time of a stamped replay (one stamp kernel more)
  int stamped_replays = 0;
  std::string stamp_note;
  MemoryStats memory;                      // the host's
  std::vector<DeviceMemoryStats> devices;  // every backend of the session, the host last
  size_t weight_bytes = 0;
  // The kernels' own copies of weights, reordered or packed into their layouts (OpKernel::
  // prepared_bytes), after the last run: memory the process holds on top of weight_bytes.
  size_t prepared_weight_bytes = 0;
  // Weights whose original the session let go because every kernel reading it keeps its own layout
  // (OpKernel::prepare); not counted in weight_bytes.
  size_t released_weight_bytes = 0;
};

// Where a session runs, for reports.
struct BackendInfo {
  std::string name, device, device_name;
  size_t nodes = 0;  // nodes placed on it (main graph and subgraphs, inserted copies excluded)
  std::map<std::string, size_t> ops;  // the same by operator type ("Conv": 53)
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

// How one run hands its values over.
struct RunOptions {
  // Leave each output in the memory of the device that computed it instead of copying it to the host
  // (ONNX Runtime's I/O binding, trtexec's --noDataTransfers): the value stays valid until the next run
  // of the session; to_host() copies it back. Outputs computed on the host are host tensors as usual.
  bool outputs_on_device = false;
  // Time every node of this run (SessionOptions::profile does it for every run).
  bool profile = false;
  // Time a replayed device graph with device events (RunStats::replay_device_us), as profiled runs do,
  // so that the profiler compares untraced and traced runs by the same measure.
  bool time_device = false;
  // Where the run replays the captured device graph: first time the boundaries between its nodes by
  // this many stamped replays each (Backend::stamp_boundaries), into RunStats::stamped. 0: none.
  int stamp_repeats = 0;
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
  std::vector<Value> run(const std::vector<std::pair<std::string, Value>>& feeds,
                         const std::vector<std::string>& fetch, const RunOptions& ro);
  // A copy of a host tensor in the memory of the session's first backend (the GPU of a GPU session; the
  // value itself on a host-only one). Fed to run(), it skips the input's host-to-device copy; an input
  // some host kernel reads (a shape, say) is copied back for that kernel. A non-tensor comes back as is.
  Value to_device(const Value& v);
  // A host copy of a value on one of the session's devices (the value itself when on the host).
  Value to_host(const Value& v);
  // Asks a run in progress to stop after its current node (from another thread).
  void cancel() { cancel_ = true; }
  const RunStats& last_stats() const { return stats_; }
  // The backends in order of preference (the CPU last) and what runs on each.
  std::vector<BackendInfo> backends() const;
  // The rewrites the optimiser made, in order.
  const std::vector<std::pair<std::string, std::string>>& rewrites() const { return rewrites_; }
  // The precision the session computes in, and what the lowering to it kept in float32.
  const PrecisionResult& precision() const { return precision_; }

 private:
  void check_feed(const ir::ValueInfo& vi, const Value& v) const;
  Backend* backend_of(const Value& v) const;  // the device backend holding a tensor; null: the host
  void finish_streams();
  bool collect_trace(RunContext& rc);
  void collect_stamps(const BoundaryTimes* b);
  void hold_device_outputs(std::vector<Value>& outs);
  std::vector<Value> take_held_outputs(const std::vector<Value>& feeds);
  void open_backends();
  void prepare_kernels();

  ir::Model model_;
  SessionOptions opts_;
  std::vector<ir::ValueInfo> inputs_;
  std::vector<std::unique_ptr<Backend>> backends_;
  std::vector<std::unique_ptr<MemoryPlanner>> planners_;  // one per backend, same order
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<ExecGraph> graph_;
  std::vector<std::pair<std::string, std::string>> rewrites_;  // (rule, node)
  PrecisionResult precision_;
  std::unique_ptr<DeviceReplay> replay_;
  std::vector<Value> held_outputs_;  // the last run's device outputs (RunOptions::outputs_on_device)
  std::vector<std::vector<int64_t>> plan_shapes_;  // input shapes the plan was learned with
  bool planned_once_ = false;
  std::mutex run_mu_;
  std::atomic<bool> cancel_{false};
  RunStats stats_;
};

}  // namespace tessera::rt
