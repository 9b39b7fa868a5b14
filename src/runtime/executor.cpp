#include "runtime/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "runtime/backend.h"
#include "runtime/fused_from.h"

namespace tessera::rt {

namespace {

using Clock = std::chrono::steady_clock;

class FrameHost : public ExecutionHost {
 public:
  FrameHost(RunContext& rc, const Frame& f) : rc_(rc), frame_(f) {}
  // The node about to run: its allocations come from its backend's planner, on its stream.
  void set_node(const ExecNode& en) {
    backend_ = en.backend;
    planner_ = rc_.planner;
    for (const auto& [b, p] : rc_.device_planners)
      if (b == en.backend) planner_ = p;
  }
  Tensor allocate(DataType dtype, Shape shape) override {
    return planner_ ? planner_->allocate(dtype, std::move(shape)) : Tensor::zeros(dtype, std::move(shape));
  }
  Tensor allocate_uninitialized(DataType dtype, Shape shape) override {
    return planner_ ? planner_->allocate(dtype, std::move(shape), false)
                    : Tensor::zeros(dtype, std::move(shape));
  }
  Stream& stream() override { return backend_ ? backend_->stream() : host_stream(); }
  std::vector<Value> run_subgraph(const ExecGraph& g, std::span<const Value> inputs) override {
    return run_graph(g, inputs, &frame_, rc_);
  }
  ThreadPool& threads() override { return *rc_.pool; }
  bool cancelled() const override { return rc_.cancel && rc_.cancel->load(); }

 private:
  RunContext& rc_;
  const Frame& frame_;
  Backend* backend_ = nullptr;
  MemoryPlanner* planner_ = nullptr;
};

std::string label(const ir::Node& n) {
  return n.name.empty() ? fmt::format("{} node", n.op_type)
                        : fmt::format("node '{}' ({})", n.name, n.op_type);
}

bool is_copy(const ExecNode& en, std::string_view op);
const std::vector<Backend*> kNoTracers;

// A copy of main-graph outputs to the host that the run was asked to leave out (outputs_on_device).
bool skipped_output_copy(const ExecNode& en, const Frame& f, const RunContext& rc) {
  if (!rc.outputs_on_device || f.parent || !is_copy(en, "MemcpyToHost")) return false;
  const auto& outs = f.graph->output_slots();
  return std::all_of(en.outputs.begin(), en.outputs.end(),
                     [&](int s) { return s < 0 || std::find(outs.begin(), outs.end(), s) != outs.end(); });
}

// A node's event as far as the node itself tells: who it is, what ran it, its output shapes.
NodeEvent make_event(const ExecNode& en, const Frame& f, const KernelContext& ctx,
                     const std::vector<Value>& outs) {
  NodeEvent ev;
  ev.graph_path = f.graph->path();
  ev.node_id = en.node->id;
  ev.node_name = en.node->name;
  ev.op_type = en.node->op_type;
  ev.kernel = en.kernel_name;
  ev.backend = std::string(en.backend->name());
  ev.device = fmt::format("{}:{}", en.backend->name(), en.backend->device().index);
  ev.path = ctx.path();
  for (const auto& o : outs) ev.output_shapes.push_back(o.is_tensor() ? o.tensor().shape() : Shape{});
  ev.fused_from = fused_from(*en.node);
  return ev;
}

void run_node(const ExecNode& en, Frame& f, FrameHost& host, RunContext& rc) {
  if (skipped_output_copy(en, f, rc)) return;
  // Inputs point into the frame; subgraph-only inputs (appended after the node's own) are not passed.
  size_t own = en.node->inputs.size();
  std::vector<const Value*> ins(own, nullptr);
  for (size_t i = 0; i < own; ++i)
    if (en.inputs[i] >= 0) ins[i] = &f.slots[static_cast<size_t>(en.inputs[i])];
  std::vector<Value> outs(en.outputs.size());
  host.set_node(en);
  KernelContext ctx(*en.info, ins, outs, host, en.last_use);
  Clock::time_point t0;
  std::unique_ptr<Event> e0, e1;
  const bool traced = std::find(rc.tracers.begin(), rc.tracers.end(), en.backend) != rc.tracers.end();
  if (rc.events) {
    t0 = Clock::now();
    if (!traced) {
      e0 = en.backend->create_event();
      e1 = en.backend->create_event();
      e0->record(en.backend->stream());
    }
  }
  struct TraceScope {  // the node's id around its work on every tracing backend (a copy runs on two)
    const std::vector<Backend*>& tracers;
    TraceScope(const std::vector<Backend*>& t, uint64_t id) : tracers(t) {
      for (Backend* b : tracers) b->trace_push(id);
    }
    ~TraceScope() {
      for (Backend* b : tracers) b->trace_pop();
    }
  } trace(rc.events ? rc.tracers : kNoTracers, rc.events ? rc.events->size() : 0);
  struct NodeRange {  // the backend's begin/end around the kernel, on every way out
    Backend& b;
    NodeRange(Backend& backend, const KernelInfo& info) : b(backend) { b.node_begin(info); }
    ~NodeRange() { b.node_end(); }
  };
  try {
    NodeRange range(*en.backend, *en.info);
    en.kernel->compute(ctx);
  } catch (const RunError&) {
    throw;
  } catch (const KernelError& e) {
    throw RunError(fmt::format("{}: {}: {}", f.graph->path(), label(*en.node), e.what()));
  } catch (const OutOfMemory& e) {
    throw RunError(fmt::format("{}: {}: {}", f.graph->path(), label(*en.node), e.what()));
  } catch (const std::bad_alloc&) {
    throw RunError(fmt::format("{}: {}: out of memory", f.graph->path(), label(*en.node)));
  } catch (const std::exception& e) {
    throw InternalError(
        fmt::format("{}: {}: internal error: {}", f.graph->path(), label(*en.node), e.what()));
  }
  if (rc.events) {
    if (e1) e1->record(en.backend->stream());
    NodeEvent ev = make_event(en, f, ctx, outs);
    ev.start_us = std::chrono::duration<double, std::micro>(t0 - rc.start).count();
    rc.events->push_back(std::move(ev));
    // Device time: the events are read once the run has finished (Session::run).
    rc.timings.push_back({std::move(e0), std::move(e1)});
  } else if (rc.capture_events) {
    rc.capture_events->push_back(make_event(en, f, ctx, outs));
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    int s = en.outputs[i];
    if (s < 0) continue;
    if (outs[i].is_none() && outs[i].none_type().is_none() && !en.node->outputs[i].empty()) {
      // A kernel that leaves a wanted output unset is a kernel bug; say so instead of passing nothing on.
      throw RunError(fmt::format("{}: {}: kernel produced no value for output {} ('{}')", f.graph->path(),
                                 label(*en.node), i, en.node->outputs[i]));
    }
    f.slots[static_cast<size_t>(s)] = std::move(outs[i]);
  }
  for (int s : en.release) f.slots[static_cast<size_t>(s)] = Value();
}

bool is_copy(const ExecNode& en, std::string_view op) {
  return en.own_node && en.node->op_type == op;
}

// [begin, end) of the device nodes when the graph is copies to one device, nodes on it, copies back.
std::optional<std::pair<size_t, size_t>> device_segment(const ExecGraph& g) {
  const auto& nodes = g.nodes();
  size_t i0 = 0;
  while (i0 < nodes.size() && is_copy(nodes[i0], "MemcpyToDevice")) ++i0;
  if (i0 == nodes.size() || nodes[i0].backend->is_host()) return std::nullopt;
  const Backend* d = nodes[i0].backend;
  size_t i1 = i0;
  for (; i1 < nodes.size() && !nodes[i1].own_node; ++i1)
    if (nodes[i1].backend != d || !nodes[i1].subgraphs.empty()) return std::nullopt;
  for (size_t i = i1; i < nodes.size(); ++i)
    if (!is_copy(nodes[i], "MemcpyToHost")) return std::nullopt;
  return std::make_pair(i0, i1);
}

class Replayer {
 public:
  Replayer(const ExecGraph& g, Frame& f, FrameHost& host, RunContext& rc)
      : nodes_(g.nodes()), f_(f), host_(host), rc_(rc), r_(*rc.replay) {}

  void run() {
    auto seg = device_segment(*f_.graph);
    if (!seg) {
      disable("the graph is not one device segment (copies in, device nodes, copies out)");
      return run_range(0, nodes_.size());
    }
    auto [i0, i1] = *seg;
    run_range(0, i0);
    std::vector<std::pair<const void*, Shape>> ins;
    for (size_t i = 0; i < i0; ++i)
      for (int s : nodes_[i].outputs)
        if (s >= 0 && f_.slots[static_cast<size_t>(s)].is_tensor())
          ins.emplace_back(f_.slots[static_cast<size_t>(s)].tensor().raw(),
                           f_.slots[static_cast<size_t>(s)].tensor().shape());
    Backend& d = *nodes_[i0].backend;
    if (r_.graph && ins == r_.inputs) {
      if (rc_.events) {
        traced_replay(d);
      } else {
        if (rc_.stamps) stamp(d);
        d.replay(r_.graph);
      }
      r_.replays++;
      for (const auto& x : r_.results)
        f_.slots[static_cast<size_t>(x.slot)] =
            Value(Tensor(x.dtype, x.shape, std::shared_ptr<void>(x.data, [](void*) {}), x.device));
    } else if (rc_.may_capture && !rc_.events) {
      capture(d, i0, i1, std::move(ins));
    } else {
      run_range(i0, i1);
    }
    run_range(i1, nodes_.size());
  }

 private:
  void run_range(size_t a, size_t b) {
    for (size_t i = a; i < b; ++i) {
      if (rc_.cancel && rc_.cancel->load()) throw RunError("run cancelled");
      run_node(nodes_[i], f_, host_, rc_);
    }
  }

  // Captures the device nodes into a graph and launches it. Where the work cannot be captured (a kernel
  // synchronises or fails, memory had to be allocated), the run starts again without capturing
  // (CaptureAbandoned), and no capture is tried again. The nodes under capture release what they read
  // last and write in place as in any run: holding their inputs here for a second try would change which
  // buffers the memory plan hands out, and that alone would make the capture allocate and fail.
  void capture(Backend& d, size_t i0, size_t i1, std::vector<std::pair<const void*, Shape>> ins) {
    r_.graph.reset();
    r_.results.clear();
    if (!d.begin_capture()) {
      disable("the device cannot begin a capture");
      return run_range(i0, i1);
    }
    std::shared_ptr<void> graph;
    std::string failure = "the device did not finish the capture (a kernel synchronised or allocated)";
    r_.profile_nodes.clear();
    r_.layout.clear();
    rc_.capture_events = &r_.profile_nodes;
    try {
      run_range(i0, i1);
      graph = d.end_capture();
    } catch (const std::exception& e) {
      d.end_capture();
      failure = fmt::format("a node failed under capture: {}", e.what());
    }
    rc_.capture_events = nullptr;
    keep_layout(d, graph != nullptr);
    if (!graph) {
      disable(failure);
      throw CaptureAbandoned{};
    }
    d.replay(graph);
    r_.graph = std::move(graph);
    r_.inputs = std::move(ins);
    r_.captures++;
    for (size_t i = i1; i < nodes_.size(); ++i)
      for (int s : nodes_[i].inputs) {
        const Value& v = f_.slots[static_cast<size_t>(s)];
        if (!v.is_tensor()) continue;
        const Tensor& t = v.tensor();
        r_.results.push_back({s, t.dtype(), t.shape(), const_cast<void*>(t.raw()), t.device()});
      }
  }

  // The capture's bookkeeping for traced replays: each node's work, one list per node that ran.
  void keep_layout(Backend& d, bool captured) {
    if (!captured) return;
    r_.layout = d.capture_layout();
    r_.trace_disabled = false;
    r_.trace_note.clear();
    if (r_.layout.size() != r_.profile_nodes.size()) {
      r_.trace_disabled = true;
      r_.trace_note = fmt::format("the device kept the work of {} of the {} captured nodes", r_.layout.size(),
                                  r_.profile_nodes.size());
    }
  }

  // A profiled replay: the graph launched under the replay's trace id (no per-node host work), and the
  // captured nodes' events appended, their device times filled in from the trace (Session::run).
  void traced_replay(Backend& d) {
    rc_.replay_events = rc_.events->size();
    for (Backend* b : rc_.tracers) b->trace_push(kReplayTraceId);
    try {
      d.replay(r_.graph);
    } catch (...) {
      for (Backend* b : rc_.tracers) b->trace_pop();
      throw;
    }
    for (Backend* b : rc_.tracers) b->trace_pop();
    double at = std::chrono::duration<double, std::micro>(Clock::now() - rc_.start).count();
    for (const NodeEvent& ev : r_.profile_nodes) {
      rc_.events->push_back(ev);
      rc_.events->back().start_us = at;
      rc_.timings.emplace_back();
    }
  }

  // The stamped replays of a stamped run, before its own replay (which leaves the outputs).
  void stamp(Backend& d) {
    if (r_.trace_disabled || r_.layout.size() != r_.profile_nodes.size()) {
      rc_.stamps->note = r_.trace_note.empty() ? "the capture's layout is incomplete" : r_.trace_note;
      return;
    }
    d.stamp_boundaries(r_.graph, r_.layout, rc_.stamp_repeats, *rc_.stamps);
  }

  void disable(std::string why) {
    r_.disabled = true;
    r_.why_not = std::move(why);
  }

  const std::vector<ExecNode>& nodes_;
  Frame& f_;
  FrameHost& host_;
  RunContext& rc_;
  DeviceReplay& r_;
};

}  // namespace

std::vector<Value> run_graph(const ExecGraph& g, std::span<const Value> inputs, const Frame* parent,
                             RunContext& rc) {
  Frame f;
  f.graph = &g;
  f.parent = parent;
  f.slots.resize(static_cast<size_t>(g.slot_count()));
  for (const auto& [s, v] : g.constants()) f.slots[static_cast<size_t>(s)] = v;
  const auto& in_slots = g.input_slots();
  if (inputs.size() > in_slots.size())
    throw RunError(
        fmt::format("{}: {} inputs given, the graph takes {}", g.path(), inputs.size(), in_slots.size()));
  for (size_t i = 0; i < inputs.size(); ++i) f.slots[static_cast<size_t>(in_slots[i])] = inputs[i];
  for (const auto& [s, name] : g.outer()) {
    int ps = parent ? parent->graph->outer_slot(name) : -1;
    if (ps < 0) throw RunError(fmt::format("{}: outer-scope value '{}' not found", g.path(), name));
    f.slots[static_cast<size_t>(s)] = parent->slots[static_cast<size_t>(ps)];
  }
  for (int s : g.unused()) f.slots[static_cast<size_t>(s)] = Value();
  FrameHost host(rc, f);
  if (!parent && rc.replay && !rc.replay->disabled && (!rc.events || rc.trace_replay)) {
    Replayer(g, f, host, rc).run();
  } else {
    for (const auto& en : g.nodes()) {
      if (rc.cancel && rc.cancel->load()) throw RunError("run cancelled");
      run_node(en, f, host, rc);
    }
  }
  std::vector<Value> outs;
  outs.reserve(g.output_slots().size());
  for (int s : g.output_slots()) outs.push_back(f.slots[static_cast<size_t>(s)]);
  // Outputs whose copy to the host was skipped: the device value the copy would have read.
  for (const auto& en : g.nodes()) {
    if (!skipped_output_copy(en, f, rc)) continue;
    for (size_t k = 0; k < outs.size(); ++k)
      if (g.output_slots()[k] == en.outputs[0]) outs[k] = f.slots[static_cast<size_t>(en.inputs[0])];
  }
  return outs;
}

}  // namespace tessera::rt
