#include "runtime/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "backends/cpu/run_hooks.h"
#include "check/checker.h"
#include "onnx/onnx_io.h"
#include "passes/inline_functions.h"
#include "passes/pipeline.h"
#include "runtime/backend.h"
#include "runtime/backend_loader.h"
#include "runtime/exec_graph.h"
#include "runtime/executor.h"
#include "runtime/pass_target.h"
#include "runtime/replay_trace.h"
#include "runtime/thread_pool.h"
#include "util/mapped_file.h"

namespace tessera::rt {

namespace {

std::string first_errors(const check::Diagnostics& d) {
  std::string msg;
  int shown = 0;
  for (const auto& x : d.items) {
    if (x.severity != check::Severity::kError) continue;
    if (shown++ == 3) {
      msg += fmt::format("\n  ... and {} more", d.count(check::Severity::kError) - 3);
      break;
    }
    msg += "\n  " + x.to_string();
  }
  return msg;
}

// What the optimiser aims at: the backend the session prefers (a device where there is one), with the
// layout and precision that backend runs best. Only the CPU's kernels read the blocked layout.
passes::Target session_target(const SessionOptions& o, const Backend& primary,
                              const passes::KernelOracle& kernels, const passes::NodeEvaluator& evaluator) {
  passes::Target t;
  t.backend = std::string(primary.name());
  t.level = o.optimization;
  t.layout = o.layout.value_or(primary.is_host() ? passes::Layout::kBlocked : passes::Layout::kNhwc);
  t.precision = o.precision.value_or(primary.is_host() ? passes::Precision::kFp32 : passes::Precision::kFp16);
  t.disabled_rules = o.disabled_rules;
  t.kernels = &kernels;
  t.evaluator = &evaluator;
  return t;
}

// The constant inputs of one node, as its kernel's prepare() sees them.
class NodePrepare : public PrepareContext {
 public:
  NodePrepare(const ExecGraph& g, const ExecNode& en) : g_(g), en_(en) {}
  const Tensor* constant(size_t i) const override {
    if (i >= en_.node->inputs.size() || en_.inputs[i] < 0) return nullptr;
    for (const auto& [s, v] : g_.constants())
      if (s == en_.inputs[i] && v.is_tensor()) return &v.tensor();
    return nullptr;
  }
  void release(size_t i) override {
    if (constant(i)) released.push_back(en_.inputs[i]);
  }
  Stream& stream() override { return en_.backend->stream(); }
  std::vector<int> released;

 private:
  const ExecGraph& g_;
  const ExecNode& en_;
};

// What the kernels of `g` and of its subgraphs hold as prepared weights.
size_t prepared_bytes(const ExecGraph& g) {
  size_t n = 0;
  for (const auto& en : g.nodes()) {
    n += en.kernel->prepared_bytes();
    for (const auto& sub : en.subgraphs) n += prepared_bytes(*sub);
  }
  return n;
}

std::string label_of(const ir::Node& n) {
  return n.name.empty() ? fmt::format("{} node", n.op_type)
                        : fmt::format("node '{}' ({})", n.name, n.op_type);
}

// The caller's cancel flag (SessionOptions::cancel), checked between the steps of building a session.
void stop_if_cancelled(const SessionOptions& o) {
  if (o.cancel && o.cancel->load()) throw RunError("session build cancelled");
}

}  // namespace

Session::Session(ir::Model model, SessionOptions opts) : model_(std::move(model)), opts_(std::move(opts)) {
  stop_if_cancelled(opts_);
  auto checked = check::check_model(model_);
  if (checked.diagnostics.has_errors())
    throw RunError("the model does not type-check:" + first_errors(checked.diagnostics));
  try {
    passes::inline_functions(model_);
  } catch (const std::runtime_error& e) {  // functions calling each other recursively
    throw RunError(fmt::format("cannot inline the model's functions: {}", e.what()));
  }
  stop_if_cancelled(opts_);
  open_backends();
  std::vector<const Backend*> kernels_of;
  for (auto& b : backends_) kernels_of.push_back(b.get());
  BackendKernelOracle oracle(std::move(kernels_of));
  CpuNodeEvaluator evaluator;
  passes::Target target = session_target(opts_, *backends_.front(), oracle, evaluator);
  for (auto& r : passes::optimize(model_, target))
    rewrites_.emplace_back(std::move(r.rule), std::move(r.node));
  precision_ = lower_precision(model_, target.precision, *backends_.front());
  stop_if_cancelled(opts_);

  pool_ = std::make_unique<ThreadPool>(opts_.threads);
  pool_->set_cancel_flag(&cancel_);
  // Kernels choose their paths from the types of the optimised graph.
  auto typed = check::check_model(model_);
  CompileOptions co;
  co.model = &model_;
  co.types = &typed.value_types;
  co.cancel = opts_.cancel;
  for (auto& b : backends_) co.backends.push_back(b.get());
  try {
    graph_ = ExecGraph::compile(model_.graph, co);
  } catch (const CompileError& e) {
    throw RunError(e.what());
  } catch (const OutOfMemory& e) {
    throw RunError(fmt::format("copying the weights to the device: {}", e.what()));
  }
  stop_if_cancelled(opts_);
  prepare_kernels();
  stats_.prepared_weight_bytes = prepared_bytes(*graph_);
  for (const auto& in : model_.graph.inputs)
    if (!model_.graph.find_initializer(in.name)) inputs_.push_back(in);
  for (const auto& t : model_.graph.initializers) stats_.weight_bytes += t.bytes().size();
}

void Session::open_backends() {
  const std::string& name = opts_.backend;
  BackendOptions bo{.device = opts_.device, .precision = opts_.precision.value_or(passes::Precision::kFp16)};
  if (name != "cpu") {
    // auto: a device where one is present, the CPU alone where none is.
    std::string wanted = name == "auto" ? "cuda" : name;
    try {
      backends_.push_back(load_backend(wanted, bo));
    } catch (const BackendUnavailable& e) {
      if (name != "auto") throw RunError(e.what());
    }
  }
  backends_.push_back(make_cpu_backend(opts_.reference_kernels));
  for (auto& b : backends_) planners_.push_back(std::make_unique<MemoryPlanner>(b.get()));
}

namespace {

// TESSERA_PREPARE_TIMES=1: the time kernels take to prepare at session build (cuDNN algorithm and plan
// choices, cuBLASLt heuristics, NVRTC compiles, weight layouts), by operator, printed to stderr when the
// session is built: where `session_build_ms` (tessera profile's report) goes.
struct PrepareTimes {
  bool on = std::getenv("TESSERA_PREPARE_TIMES") != nullptr;
  std::map<std::string, std::pair<int, double>> by_op;  // op type -> (nodes, ms)
  template <class F>
  void time(const std::string& op, F&& f) {
    if (!on) return f();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    auto& e = by_op[op];
    e.first++;
    e.second += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  ~PrepareTimes() {
    for (const auto& [op, e] : by_op)
      fmt::print(stderr, "prepare {:<24} {:4} nodes {:9.1f} ms\n", op, e.first, e.second);
  }
};

}  // namespace

// Lets every kernel prepare its weights now; a weight whose every reader keeps its own layout of it (or
// that nothing on the host reads, having been copied to a device) is dropped: from the compiled graph,
// and from the model, whose memory-mapped pages go back to the operating system. A weight goes as soon
// as its last reader has prepared, so that building the session never holds every weight twice.
void Session::prepare_kernels() {
  PrepareTimes times;
  std::function<void(ExecGraph&, bool)> prepare = [&](ExecGraph& g, bool is_main) {
    std::set<int> keep(g.output_slots().begin(), g.output_slots().end());
    keep.insert(g.input_slots().begin(), g.input_slots().end());
    std::map<int, int> unreleased;  // constant slot -> readers that still read it
    for (const auto& [s, v] : g.constants())
      if (!keep.count(s) && v.is_tensor()) unreleased[s] = 0;
    for (const auto& en : g.nodes())
      for (int s : en.inputs)
        if (auto it = unreleased.find(s); it != unreleased.end()) it->second++;
    auto drop = [&](int s) {
      g.drop_constant(s);
      if (!is_main) return;
      ir::Tensor* t = model_.graph.find_initializer(g.slot_name(s));
      if (!t || !t->data) return;
      auto bytes = t->data->bytes();
      stats_.released_weight_bytes += bytes.size();
      // A weight read from a mapped file gives its pages back now (anyone else holding the tensor reads
      // them from the file again; heap memory is left alone).
      util::discard_mapped(bytes.data(), bytes.size());
      t->data.reset();
    };
    for (const auto& [s, readers] : unreleased)
      if (readers == 0) drop(s);  // read on a device only, through its copy
    for (auto& en : g.mutable_nodes()) {
      stop_if_cancelled(opts_);
      NodePrepare ctx(g, en);
      try {
        times.time(en.node->op_type, [&] { en.kernel->prepare(ctx); });
      } catch (const KernelError& e) {
        throw RunError(fmt::format("{}: {}: {}", g.path(), label_of(*en.node), e.what()));
      } catch (const OutOfMemory& e) {
        throw RunError(
            fmt::format("{}: {}: preparing its weights: {}", g.path(), label_of(*en.node), e.what()));
      }
      for (int s : ctx.released)
        if (auto it = unreleased.find(s); it != unreleased.end() && --it->second == 0) drop(s);
      for (auto& sub : en.subgraphs) prepare(*sub, false);
    }
  };
  prepare(*graph_, true);
}

std::vector<BackendInfo> Session::backends() const {
  std::vector<BackendInfo> out;
  std::map<const Backend*, std::map<std::string, size_t>> ops;
  std::function<void(const ExecGraph&)> count = [&](const ExecGraph& g) {
    for (const auto& en : g.nodes()) {
      if (!en.own_node) ops[en.backend][en.node->op_type]++;
      for (const auto& sub : en.subgraphs) count(*sub);
    }
  };
  count(*graph_);
  for (const auto& b : backends_) {
    BackendInfo info{std::string(b->name()), fmt::format("{}:{}", b->name(), b->device().index),
                     b->device_name(), 0, ops[b.get()]};
    for (const auto& [op, n] : info.ops) info.nodes += n;
    out.push_back(std::move(info));
  }
  return out;
}

Session::~Session() = default;

std::unique_ptr<Session> Session::load(const std::filesystem::path& file, SessionOptions opts) {
  return std::make_unique<Session>(onnx::load_model(file), std::move(opts));
}

const std::vector<ir::ValueInfo>& Session::inputs() const {
  return inputs_;
}
const std::vector<ir::ValueInfo>& Session::outputs() const {
  return model_.graph.outputs;
}

void Session::check_feed(const ir::ValueInfo& vi, const Value& v) const {
  const ir::Type& t = vi.type;
  if (!t.is_tensor()) return;
  if (!v.is_tensor())
    throw RunError(fmt::format("input '{}' expects {}, got {}", vi.name, t.to_string(), v.describe()));
  const Tensor& x = v.tensor();
  if (t.elem != DataType::kUndefined && x.dtype() != t.elem)
    throw RunError(fmt::format("input '{}' expects element type {}, got {}", vi.name, ir::dtype_name(t.elem),
                               ir::dtype_name(x.dtype())));
  if (!t.shape) return;
  const auto& dims = *t.shape;
  if (dims.size() != x.shape().size())
    throw RunError(fmt::format("input '{}' expects rank {} {}, got shape {}", vi.name, dims.size(),
                               ir::shape_to_string(dims), shape_str(x.shape())));
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].is_static() && dims[i].value != x.shape()[i])
      throw RunError(fmt::format("input '{}' dimension {} must be {}, got shape {}", vi.name, i,
                                 dims[i].value, shape_str(x.shape())));
}

std::vector<Value> Session::run(const std::vector<std::pair<std::string, Value>>& feeds,
                                const std::vector<std::string>& fetch) {
  return run(feeds, fetch, RunOptions{});
}

namespace {

// Each traced node's device time: the summed time of the work it launched, named in launch order. It
// replaces a host node's event time too (a copy to the host waits for the device: the copy is the time).
void add_trace(const std::vector<TraceRecord>& records, std::vector<NodeEvent>& events) {
  std::vector<bool> seen(events.size(), false);
  for (const auto& r : records) {
    if (r.id >= events.size()) continue;
    NodeEvent& ev = events[r.id];
    if (!seen[r.id]) ev.duration_us = 0;
    seen[r.id] = true;
    ev.duration_us += r.duration_us;
    if (ev.device_start_us < 0 || r.start_us < ev.device_start_us) ev.device_start_us = r.start_us;
    if (std::find(ev.device_kernels.begin(), ev.device_kernels.end(), r.name) == ev.device_kernels.end())
      ev.device_kernels.push_back(r.name);
  }
}

// The replayed nodes' device times from the traced replay's records; false (with the reason in `why`)
// where they do not match the capture.
bool add_replay_trace(const DeviceReplay& r, size_t first, std::vector<TraceRecord> records,
                      std::vector<NodeEvent>& events, std::string& why, std::string& method) {
  if (first + r.layout.size() > events.size()) {
    why = "the replayed nodes' events are missing";
    return false;
  }
  ReplayAttribution a = attribute_replay(r.layout, std::move(records));
  method = a.method;
  if (!a.ok) {
    why = a.problem;
    return false;
  }
  for (size_t k = 0; k < a.nodes.size(); ++k) {
    NodeEvent& ev = events[first + k];
    ev.duration_us = a.nodes[k].busy_us;
    ev.device_start_us = a.nodes[k].first_start_us;
    ev.device_kernels = std::move(a.nodes[k].kernels);
  }
  return true;
}

}  // namespace

// The traced run's records into its events: nodes launched one by one by their trace ids, a traced
// replay's work through the capture's layout; then each event's span and the run's device time. False
// when the replay's records do not match the capture (the replay is then not traced again).
bool Session::collect_trace(RunContext& rc) {
  std::vector<TraceRecord> nodes, replayed;
  double end = 0;
  for (Backend* b : rc.tracers)
    for (TraceRecord& r : b->trace_end()) {
      end = std::max(end, r.start_us + r.duration_us);
      (r.id == kReplayTraceId ? replayed : nodes).push_back(std::move(r));
    }
  stats_.layers_from_replay = false;
  stats_.replay_trace_method.clear();
  add_trace(nodes, stats_.events);
  if (rc.replay_events != SIZE_MAX) {
    std::string why;
    if (!add_replay_trace(*replay_, rc.replay_events, std::move(replayed), stats_.events, why,
                          stats_.replay_trace_method)) {
      replay_->trace_disabled = true;
      replay_->trace_note = "a traced replay did not match the capture: " + why;
      return false;
    }
    stats_.layers_from_replay = true;
  }
  stats_.device_us = assign_spans(stats_.events, end);
  return true;
}

// A stamped run's boundary times as spans of the replayed nodes (RunStats::stamped).
void Session::collect_stamps(const BoundaryTimes* b) {
  if (!b || !replay_ || replay_->replays == 0) {
    stats_.stamp_note = "the run did not replay a captured device graph";
    if (replay_ && replay_->disabled) stats_.stamp_note += ": " + replay_->why_not;
    return;
  }
  if (!b->note.empty() || b->replays == 0 || b->start_us.size() != replay_->profile_nodes.size()) {
    stats_.stamp_note = b->note.empty() ? "the stamped replays did not run" : b->note;
    return;
  }
  stats_.stamp_note.clear();
  const std::vector<double> spans = stamped_spans(*b);
  for (size_t k = 0; k < spans.size(); ++k) {
    const NodeEvent& ev = replay_->profile_nodes[k];
    stats_.stamped.push_back({ev.graph_path, ev.node_name, ev.node_id, spans[k]});
  }
  stats_.stamped_device_us = b->stamped_device_us;
  stats_.stamped_replays = b->replays;
}

// Waits for every backend's queued work. A device error surfacing here (an illegal address in a kernel
// that was launched, not yet checked) belongs to work queued after the last check.
void Session::finish_streams() {
  for (auto& b : backends_) {
    try {
      b->stream().synchronize();
    } catch (const std::exception& e) {
      throw RunError(
          fmt::format("main: {}:{}: the device failed running the model's queued work: {} (set "
                      "CUDA_LAUNCH_BLOCKING=1 to have it named with the node that failed)",
                      b->name(), b->device().index, e.what()));
    }
  }
}

Backend* Session::backend_of(const Value& v) const {
  if (!v.is_tensor()) return nullptr;
  for (const auto& b : backends_)
    if (!b->is_host() && b->device() == v.tensor().device()) return b.get();
  return nullptr;
}

Value Session::to_device(const Value& v) {
  if (!v.is_tensor() || backends_.front()->is_host() || backend_of(v)) return v;
  Backend& b = *backends_.front();
  return Value(rt::to_device(b, v.tensor()));  // synchronised
}

// A device output is handed to the caller as an alias of its memory while the session keeps the owning
// value until the next run. The caller's reference must not count as a use of the memory plan's
// block: it would push the next run's allocations off the plan, and a device-graph capture that
// allocates fails.
void Session::hold_device_outputs(std::vector<Value>& outs) {
  for (Value& v : outs) {
    if (!v.is_tensor() || !backend_of(v)) continue;
    const Tensor& t = v.tensor();
    held_outputs_.push_back(v);
    v = Value(Tensor(t.dtype(), t.shape(), std::shared_ptr<void>(const_cast<void*>(t.raw()), [](void*) {}),
                     t.device()));
  }
}

// The held outputs of the last run are let go, except those whose memory a feed of this run reads.
std::vector<Value> Session::take_held_outputs(const std::vector<Value>& feeds) {
  std::vector<Value> kept;
  for (Value& h : held_outputs_)
    for (const Value& f : feeds)
      if (f.is_tensor() && f.tensor().raw() == h.tensor().raw()) {
        kept.push_back(std::move(h));
        break;
      }
  held_outputs_.clear();
  return kept;
}

Value Session::to_host(const Value& v) {
  Backend* b = backend_of(v);
  if (!b) return v;
  return Value(rt::to_host(*b, v.tensor()));
}

std::vector<Value> Session::run(const std::vector<std::pair<std::string, Value>>& feeds,
                                const std::vector<std::string>& fetch, const RunOptions& ro) {
  std::lock_guard lock(run_mu_);
  cancel_ = false;
  // After the reset: a caller that sets its flag before calling cancel() is never missed.
  if (opts_.cancel && opts_.cancel->load()) throw RunError("run cancelled");
  const auto& g = model_.graph;
  std::vector<Value> ins(g.inputs.size());
  std::vector<bool> given(g.inputs.size(), false);
  for (const auto& [name, v] : feeds) {
    size_t i = 0;
    while (i < g.inputs.size() && g.inputs[i].name != name) ++i;
    if (i == g.inputs.size()) throw RunError(fmt::format("the model has no input named '{}'", name));
    check_feed(g.inputs[i], v);
    // A device value goes in as is only where every reader copies it to that device.
    Backend* b = backend_of(v);
    ins[i] = b && !graph_->input_read_only_on(i, b) ? to_host(v) : v;
    given[i] = true;
  }
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (!given[i]) {
      const ir::Tensor* init = g.find_initializer(g.inputs[i].name);
      if (!init) throw RunError(fmt::format("input '{}' is not given", g.inputs[i].name));
      ins[i] = Value(Tensor::from_ir(*init));
    }
    shapes.push_back(ins[i].is_tensor() ? ins[i].tensor().shape() : Shape{-1});
  }
  bool replan = shapes != plan_shapes_ || !planners_.back()->has_plan();
  // Device outputs of the last run that the caller may still hold (as aliases): their memory is the
  // plan's again, unless one of them is fed back in now.
  std::vector<Value> fed_back = take_held_outputs(ins);
  RunContext rc;
  std::vector<Value> outs;
  // A stamped run's spans belong to that run only.
  stats_.stamped.clear();
  stats_.stamp_note.clear();
  stats_.stamped_device_us = 0;
  stats_.stamped_replays = 0;
  for (bool retry = true; retry;) {
    retry = false;
    cpu::begin_run();  // the CPU kernels forget what they learnt of the last run's tensors
    for (auto& p : planners_) p->begin_run(replan);
    rc = RunContext{};
    rc.planner = planners_.back().get();
    for (size_t i = 0; i + 1 < backends_.size(); ++i)
      rc.device_planners.emplace_back(backends_[i].get(), planners_[i].get());
    rc.pool = pool_.get();
    rc.cancel = &cancel_;
    rc.outputs_on_device = ro.outputs_on_device;
    if (opts_.device_graphs && backends_.size() > 1) {
      if (!replay_) replay_ = std::make_unique<DeviceReplay>();
      rc.replay = replay_.get();
      rc.may_capture = !replan;
    }
    stats_.events.clear();
    if (opts_.profile || ro.profile) {
      rc.events = &stats_.events;
      for (auto& b : backends_)
        if (!b->is_host() && b->trace_begin()) rc.tracers.push_back(b.get());
      rc.trace_replay = !rc.tracers.empty() && replay_ && !replay_->trace_disabled;
    }
    BoundaryTimes stamps;
    if (ro.stamp_repeats > 0 && !rc.events && replay_) {
      rc.stamp_repeats = ro.stamp_repeats;
      rc.stamps = &stamps;
    }
    const bool time_device = opts_.profile || ro.profile || ro.time_device || ro.stamp_repeats > 0;
    for (auto& b : backends_)
      if (!b->is_host()) b->time_replays(time_device);
    rc.start = std::chrono::steady_clock::now();
    try {
      outs = run_graph(*graph_, ins, nullptr, rc);
      finish_streams();
      stats_.replay_device_us = 0;
      for (auto& b : backends_)
        if (!b->is_host()) stats_.replay_device_us += b->last_replay_device_us();
      stats_.total_us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - rc.start).count();
      // Event times first: a traced node's records replace them (a copy to the host is timed by the host).
      for (size_t i = 0; i < stats_.events.size() && i < rc.timings.size(); ++i)
        if (rc.timings[i].first)
          stats_.events[i].duration_us = rc.timings[i].second->elapsed_ms(*rc.timings[i].first) * 1000.0;
      // A traced replay that does not match its capture: this run again, node by node (and the next ones).
      if (!rc.tracers.empty() && !collect_trace(rc)) retry = true;
      if (ro.stamp_repeats > 0) collect_stamps(rc.stamps ? &stamps : nullptr);
    } catch (const CaptureAbandoned&) {
      // The capture's nodes had consumed their inputs: run again from the feeds, without capturing.
      for (Backend* b : rc.tracers) b->trace_end();
      retry = true;
    } catch (...) {
      for (Backend* b : rc.tracers) b->trace_end();
      for (auto& p : planners_) p->abort_run();
      plan_shapes_.clear();  // a failed recording is no plan to keep
      if (replay_) replay_->graph.reset();
      throw;
    }
  }
  if (rc.tracers.empty()) {
    stats_.device_us = 0;
    stats_.layers_from_replay = false;
  }
  stats_.replay_trace_note = replay_ ? replay_->trace_note : std::string();
  for (auto& p : planners_) p->end_run();
  stats_.memory = planners_.back()->stats();
  stats_.devices.clear();
  for (size_t i = 0; i < backends_.size(); ++i)
    stats_.devices.push_back({std::string(backends_[i]->name()),
                              fmt::format("{}:{}", backends_[i]->name(), backends_[i]->device().index),
                              planners_[i]->stats(), 0});
  stats_.prepared_weight_bytes = prepared_bytes(*graph_);
  stats_.device_graph_replays = replay_ ? replay_->replays : 0;
  stats_.device_graph_note = replay_ && replay_->disabled ? replay_->why_not : std::string();
  plan_shapes_ = std::move(shapes);
  if (ro.outputs_on_device) hold_device_outputs(outs);
  if (fetch.empty()) return outs;
  std::vector<Value> picked;
  for (const auto& name : fetch) {
    size_t i = 0;
    while (i < g.outputs.size() && g.outputs[i].name != name) ++i;
    if (i == g.outputs.size()) throw RunError(fmt::format("the model has no output named '{}'", name));
    picked.push_back(outs[i]);
  }
  return picked;
}

}  // namespace tessera::rt
