#include "runtime/session.h"

#include <fmt/format.h>

#include "check/checker.h"
#include "onnx/onnx_io.h"
#include "passes/inline_functions.h"
#include "passes/pipeline.h"
#include "runtime/backend.h"
#include "runtime/exec_graph.h"
#include "runtime/executor.h"
#include "runtime/thread_pool.h"

namespace tessera::rt {

std::string_view opt_level_name(OptLevel l) {
  switch (l) {
    case OptLevel::kNone:
      return "none";
    case OptLevel::kBasic:
      return "basic";
    case OptLevel::kExtended:
      return "extended";
    case OptLevel::kLayout:
      return "layout";
  }
  return "?";
}

std::optional<OptLevel> opt_level_from_name(std::string_view s) {
  if (s == "none") return OptLevel::kNone;
  if (s == "basic") return OptLevel::kBasic;
  if (s == "extended") return OptLevel::kExtended;
  if (s == "layout") return OptLevel::kLayout;
  return std::nullopt;
}

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

}  // namespace

Session::Session(ir::Model model, SessionOptions opts) : model_(std::move(model)), opts_(std::move(opts)) {
  auto checked = check::check_model(model_);
  if (checked.diagnostics.has_errors())
    throw RunError("the model does not type-check:" + first_errors(checked.diagnostics));
  try {
    passes::inline_functions(model_);
  } catch (const std::runtime_error& e) {  // functions calling each other recursively
    throw RunError(fmt::format("cannot inline the model's functions: {}", e.what()));
  }
  // The blocked layout is the CPU kernels' layout: other backends get the graph before it.
  OptLevel level = opts_.optimization;
  if (level == OptLevel::kLayout && opts_.backend != "cpu" && opts_.backend != "auto")
    level = OptLevel::kExtended;
  passes::optimize(model_, level);

  if (opts_.backend != "cpu" && opts_.backend != "auto")
    throw RunError(fmt::format("backend '{}' is not available in this build (have: cpu)", opts_.backend));
  backends_.push_back(make_cpu_backend(opts_.reference_kernels));
  pool_ = std::make_unique<ThreadPool>(opts_.threads);
  pool_->set_cancel_flag(&cancel_);
  CompileOptions co;
  co.model = &model_;
  for (auto& b : backends_) co.backends.push_back(b.get());
  try {
    graph_ = ExecGraph::compile(model_.graph, co);
  } catch (const CompileError& e) {
    throw RunError(e.what());
  }
  for (const auto& in : model_.graph.inputs)
    if (!model_.graph.find_initializer(in.name)) inputs_.push_back(in);
  for (const auto& t : model_.graph.initializers) stats_.weight_bytes += t.bytes().size();
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

namespace {

// What the kernels of `g` and of its subgraphs hold as prepared weights.
size_t prepared_bytes(const ExecGraph& g) {
  size_t n = 0;
  for (const auto& en : g.nodes()) {
    n += en.kernel->prepared_bytes();
    for (const auto& sub : en.subgraphs) n += prepared_bytes(*sub);
  }
  return n;
}

}  // namespace

std::vector<Value> Session::run(const std::vector<std::pair<std::string, Value>>& feeds,
                                const std::vector<std::string>& fetch) {
  std::lock_guard lock(run_mu_);
  cancel_ = false;
  const auto& g = model_.graph;
  std::vector<Value> ins(g.inputs.size());
  std::vector<bool> given(g.inputs.size(), false);
  for (const auto& [name, v] : feeds) {
    size_t i = 0;
    while (i < g.inputs.size() && g.inputs[i].name != name) ++i;
    if (i == g.inputs.size()) throw RunError(fmt::format("the model has no input named '{}'", name));
    check_feed(g.inputs[i], v);
    ins[i] = v;
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
  bool replan = shapes != plan_shapes_ || !planner_.has_plan();
  planner_.begin_run(replan);
  RunContext rc;
  rc.planner = &planner_;
  rc.pool = pool_.get();
  rc.cancel = &cancel_;
  stats_.events.clear();
  if (opts_.profile) rc.events = &stats_.events;
  rc.start = std::chrono::steady_clock::now();
  std::vector<Value> outs;
  try {
    outs = run_graph(*graph_, ins, nullptr, rc);
  } catch (...) {
    planner_.abort_run();
    plan_shapes_.clear();  // a failed recording is no plan to keep
    throw;
  }
  stats_.total_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - rc.start).count();
  planner_.end_run();
  stats_.memory = planner_.stats();
  stats_.prepared_weight_bytes = prepared_bytes(*graph_);
  plan_shapes_ = std::move(shapes);
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
