#include "runtime/exec_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "ops/registry.h"
#include "runtime/backend.h"

namespace tessera::rt {

int ExecGraph::find_slot(const std::string& name) const {
  auto it = slots_.find(name);
  return it == slots_.end() ? -1 : it->second;
}

void ExecGraph::drop_constant(int slot) {
  std::erase_if(constants_, [slot](const auto& c) { return c.first == slot; });
}

int ExecGraph::outer_slot(const std::string& name) const {
  auto it = host_copies_.find(name);
  return it == host_copies_.end() ? find_slot(name) : it->second;
}

bool ExecGraph::resolves(const std::string& name) const {
  return find_slot(name) >= 0 || (enclosing_ && enclosing_->resolves(name));
}

namespace {

std::string node_label(const ir::Node& n) {
  return n.name.empty() ? fmt::format("{} node", n.op_type)
                        : fmt::format("node '{}' ({})", n.name, n.op_type);
}

int opset_of(const ir::Model& m, std::string_view domain) {
  auto v = m.opset_version(domain);
  return v ? static_cast<int>(*v) : 0;
}

NodeTypes node_types(const ir::Node& n, const std::unordered_map<std::string, ir::Type>* types) {
  NodeTypes t;
  auto lookup = [&](const std::string& name) {
    if (!types || name.empty()) return ir::Type{};
    auto it = types->find(name);
    return it == types->end() ? ir::Type{} : it->second;
  };
  for (const auto& in : n.inputs) t.inputs.push_back(lookup(in));
  for (const auto& out : n.outputs) t.outputs.push_back(lookup(out));
  return t;
}

std::unique_ptr<KernelInfo> make_info(const ir::Node& n, const ir::Model& model,
                                      const std::unordered_map<std::string, ir::Type>* types,
                                      std::vector<std::pair<std::string, const ExecGraph*>> subs) {
  int opset = opset_of(model, n.domain);
  const ops::OpSchema* schema = ops::OpRegistry::global().find(n.domain, n.op_type, opset);
  int since = schema ? schema->since_version() : opset;
  return std::make_unique<KernelInfo>(n, schema, since, std::move(subs), node_types(n, types));
}

}  // namespace

std::unique_ptr<KernelInfo> make_kernel_info(const ir::Node& n, const ir::Model& model,
                                             const std::unordered_map<std::string, ir::Type>* types) {
  return make_info(n, model, types, {});
}

namespace {

// Copies a value between two backends' memories; placed on the destination's backend, so that its
// output is allocated there.
class CopyKernel : public OpKernel {
 public:
  CopyKernel(Backend* from, Backend* to) : from_(from), to_(to) {}
  void compute(KernelContext& ctx) const override {
    const Value& v = ctx.value(0);
    if (v.is_none()) return ctx.set_output(0, v);
    if (!v.is_tensor()) ctx.fail(fmt::format("only tensors move between devices, got {}", v.describe()));
    const Tensor& src = v.tensor();
    if (!to_->is_host() && src.device() == to_->device()) return ctx.set_output(0, v);  // fed on the device
    Tensor& dst = ctx.output_uninitialized(0, src.dtype(), src.shape());
    if (src.nbytes() == 0) return;
    if (to_->is_host()) return from_->copy_to_host(src, dst.raw(), from_->stream());
    if (from_->is_host()) return to_->copy_from_host(src.raw(), dst, to_->stream());
    Tensor staged = to_host(*from_, src);  // between two devices: through the host
    to_->copy_from_host(staged.raw(), dst, to_->stream());
    to_->stream().synchronize();
  }

 private:
  Backend* from_;
  Backend* to_;
};

std::string device_label(const Backend& b) {
  return fmt::format("{}:{}", b.name(), b.device().index);
}

}  // namespace

std::unique_ptr<ExecGraph> ExecGraph::compile(const ir::Graph& g, const CompileOptions& opts,
                                              const ExecGraph* enclosing) {
  auto eg = std::make_unique<ExecGraph>();
  eg->graph_ = &g;
  eg->enclosing_ = enclosing;
  eg->path_ = opts.graph_path.empty() ? std::string("main") : opts.graph_path;
  auto slot = [&](const std::string& name) {
    auto [it, fresh] = eg->slots_.emplace(name, static_cast<int>(eg->names_.size()));
    if (fresh) eg->names_.push_back(name);
    return it->second;
  };
  std::set<int> defined;  // slots given a value so far, in node order
  for (const auto& in : g.inputs) {
    int s = slot(in.name);
    eg->inputs_.push_back(s);
    defined.insert(s);
  }
  for (const auto& init : g.initializers) {
    if (opts.cancel && opts.cancel->load()) throw CompileError("session build cancelled");
    int s = slot(init.name);
    eg->constants_.emplace_back(s, Value(Tensor::from_ir(init)));
    defined.insert(s);
  }
  // Outer-scope names: anything a node (or a nested subgraph) reads that this graph does not define.
  auto use = [&](const std::string& name) -> int {
    if (name.empty()) return -1;
    int s = eg->find_slot(name);
    if (s >= 0 && defined.count(s)) return s;
    if (s >= 0) return s;  // defined later: reported below as a use before definition
    if (enclosing && enclosing->resolves(name)) {
      s = slot(name);
      eg->outer_.emplace_back(s, name);
      defined.insert(s);
      return s;
    }
    throw CompileError(fmt::format("{}: value '{}' is used but never defined", eg->path_, name));
  };
  for (const auto& n : g.nodes) {
    ExecNode en;
    en.node = &n;
    for (const auto& in : n.inputs) {
      int s = use(in);
      if (s >= 0 && !defined.count(s))
        throw CompileError(
            fmt::format("{}: {} reads '{}' before any node produces it (graph not in "
                        "topological order?)",
                        eg->path_, node_label(n), in));
      en.inputs.push_back(s);
    }
    for (const auto& out : n.outputs) {
      if (out.empty()) {
        en.outputs.push_back(-1);
        continue;
      }
      int s = slot(out);
      defined.insert(s);
      en.outputs.push_back(s);
    }
    eg->nodes_.push_back(std::move(en));
  }
  for (const auto& out : g.outputs) eg->outputs_.push_back(use(out.name));

  // Subgraphs compile with this graph as their enclosing scope; the names they take from it count as
  // inputs of the node that owns them, for liveness (and they are read on the host).
  for (auto& en : eg->nodes_) {
    const ir::Node& n = *en.node;
    std::vector<std::pair<std::string, const ExecGraph*>> subs;
    for (const auto& a : n.attributes) {
      if (a.type != ir::AttrType::kGraph || a.graphs.empty()) continue;
      CompileOptions sub_opts = opts;
      sub_opts.graph_path = fmt::format("{}/{}:{}", eg->path_, n.name.empty() ? n.op_type : n.name, a.name);
      auto sub = compile(*a.graphs[0], sub_opts, eg.get());
      for (const auto& [s, name] : sub->outer_) en.inputs.push_back(use(name));
      subs.emplace_back(a.name, sub.get());
      en.subgraphs.push_back(std::move(sub));
    }
    en.info = make_info(n, *opts.model, opts.types, std::move(subs));
  }
  eg->place_and_create_kernels(opts);
  eg->insert_copies(opts.backends.back());
  eg->compute_liveness();
  return eg;
}

}  // namespace tessera::rt

namespace tessera::rt {

void ExecGraph::place_and_create_kernels(const CompileOptions& opts) {
  std::vector<Backend*> placed(nodes_.size(), nullptr);
  // Devices first, in order of preference; the host backend (last) takes every node left.
  for (size_t b = 0; b + 1 < opts.backends.size(); ++b) {
    std::vector<size_t> open;
    std::vector<const KernelInfo*> infos;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (placed[i] || !nodes_[i].subgraphs.empty()) continue;  // control flow runs on the host
      open.push_back(i);
      infos.push_back(nodes_[i].info.get());
    }
    std::vector<bool> taken = opts.backends[b]->claim(infos);
    for (size_t k = 0; k < open.size() && k < taken.size(); ++k)
      if (taken[k]) placed[open[k]] = opts.backends[b];
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    ExecNode& en = nodes_[i];
    const ir::Node& n = *en.node;
    Backend* b = placed[i] ? placed[i] : opts.backends.back();
    try {
      auto [k, name] = b->create_kernel(*en.info);
      en.kernel = std::move(k);
      en.kernel_name = std::move(name);
    } catch (const KernelError& e) {
      throw CompileError(fmt::format("{}: {}: {}", path_, node_label(n), e.what()));
    }
    en.backend = b;
    if (en.kernel) continue;
    std::string domain = n.domain.empty() ? "ai.onnx" : n.domain;
    throw CompileError(fmt::format("{}: {}: no kernel for {} version {} of domain {}", path_, node_label(n),
                                   n.op_type, en.info->since_version(), domain));
  }
}

// A copy of `slot` from backend `from` to backend `to`: a weight is copied now, once; any other value
// gets a copy node appended to `out`, which runs before the node that needs it.
int ExecGraph::copy_slot(int slot, Backend* from, Backend* to, std::vector<ExecNode>& out) {
  std::string name = names_[static_cast<size_t>(slot)];
  int copy = static_cast<int>(names_.size());
  names_.push_back(fmt::format("{}@{}", name, device_label(*to)));
  for (size_t c = 0; c < constants_.size(); ++c) {
    const auto& [s, v] = constants_[c];
    if (s != slot || !v.is_tensor() || !from->is_host()) continue;
    Value moved(to_device(*to, v.tensor()));
    constants_.emplace_back(copy, std::move(moved));
    return copy;
  }
  ExecNode en;
  en.own_node = std::make_unique<ir::Node>();
  ir::Node& n = *en.own_node;
  n.op_type = to->is_host() ? "MemcpyToHost" : "MemcpyToDevice";
  n.domain = "com.tessera";
  n.name = fmt::format("{}({})", n.op_type, name);
  n.inputs = {name};
  n.outputs = {names_.back()};
  en.node = &n;
  en.info = std::make_unique<KernelInfo>(n, nullptr, 1);
  en.kernel = std::make_unique<CopyKernel>(from, to);
  en.kernel_name = fmt::format("copy {} -> {}", device_label(*from), device_label(*to));
  en.backend = to;
  en.inputs = {slot};
  en.outputs = {copy};
  out.push_back(std::move(en));
  copies_++;
  if (to->is_host()) host_copies_[name] = copy;
  return copy;
}

bool ExecGraph::input_read_only_on(size_t i, const Backend* b) const {
  if (i >= inputs_.size()) return false;
  const int s = inputs_[i];
  if (std::find(outputs_.begin(), outputs_.end(), s) != outputs_.end()) return false;
  for (const auto& en : nodes_) {
    if (std::find(en.inputs.begin(), en.inputs.end(), s) == en.inputs.end()) continue;
    if (!en.own_node || en.node->op_type != "MemcpyToDevice" || en.backend != b) return false;
  }
  return true;
}

void ExecGraph::insert_copies(Backend* host) {
  std::vector<Backend*> home(names_.size(), host);  // where each slot's value lives
  for (const auto& en : nodes_)
    for (size_t k = 0; k < en.outputs.size(); ++k)
      if (en.outputs[k] >= 0)
        home[static_cast<size_t>(en.outputs[k])] =
            en.backend->output_on_host(*en.info, k) ? host : en.backend;
  std::map<std::pair<int, Backend*>, int> copies;
  std::vector<ExecNode> placed;
  placed.reserve(nodes_.size());
  auto reach = [&](int s, Backend* want) {
    if (s < 0 || home[static_cast<size_t>(s)] == want) return s;
    auto [it, fresh] = copies.emplace(std::make_pair(s, want), -1);
    if (fresh) {
      it->second = copy_slot(s, home[static_cast<size_t>(s)], want, placed);
      home.push_back(want);
    }
    return it->second;
  };
  for (auto& en : nodes_) {
    size_t own = en.node->inputs.size();
    for (size_t k = 0; k < en.inputs.size(); ++k) {  // subgraphs read outer values on the host
      bool on_host = k >= own || en.backend->input_on_host(*en.info, k);
      en.inputs[k] = reach(en.inputs[k], on_host ? host : en.backend);
    }
    placed.push_back(std::move(en));
  }
  for (int& s : outputs_) s = reach(s, host);
  // The graph inputs' copies to a device go first: they depend on nothing else, and a model wholly on
  // one device is then copies in, device nodes, copies out, which a device graph can capture (a copy
  // from the host between device nodes could not be replayed: it reads the host's memory at capture).
  std::stable_partition(placed.begin(), placed.end(), [&](const ExecNode& en) {
    return en.own_node && en.node->op_type == "MemcpyToDevice" &&
           std::find(inputs_.begin(), inputs_.end(), en.inputs[0]) != inputs_.end();
  });
  nodes_ = std::move(placed);
}

void ExecGraph::compute_liveness() {
  auto* eg = this;
  // Liveness: each slot is released right after its last reader; graph outputs never are.
  std::set<int> produced;
  for (const auto& en : eg->nodes_)
    for (int s : en.outputs)
      if (s >= 0) produced.insert(s);
  std::vector<int> last(eg->names_.size(), -1);
  for (size_t i = 0; i < eg->nodes_.size(); ++i)
    for (int s : eg->nodes_[i].inputs)
      if (s >= 0) last[static_cast<size_t>(s)] = static_cast<int>(i);
  for (int s : eg->outputs_) last[static_cast<size_t>(s)] = INT32_MAX;
  for (size_t s = 0; s < last.size(); ++s) {
    if (last[s] == INT32_MAX) continue;
    if (last[s] < 0) {
      if (!produced.count(static_cast<int>(s))) eg->unused_.push_back(static_cast<int>(s));
      continue;
    }
    eg->nodes_[static_cast<size_t>(last[s])].release.push_back(static_cast<int>(s));
  }
  for (size_t i = 0; i < eg->nodes_.size(); ++i) {
    ExecNode& en = eg->nodes_[i];
    en.last_use.assign(en.inputs.size(), 0);
    for (size_t k = 0; k < en.inputs.size(); ++k) {
      int s = en.inputs[k];
      if (s < 0 || last[static_cast<size_t>(s)] != static_cast<int>(i)) continue;
      en.last_use[k] = std::count(en.inputs.begin(), en.inputs.end(), s) == 1;
    }
  }
  // Outputs no one reads are released right after the node that makes them.
  for (auto& en : eg->nodes_)
    for (int s : en.outputs)
      if (s >= 0 && last[static_cast<size_t>(s)] < 0) en.release.push_back(s);
}

}  // namespace tessera::rt
