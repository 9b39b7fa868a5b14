#include "runtime/exec_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ops/registry.h"

namespace tessera::rt {

int ExecGraph::find_slot(const std::string& name) const {
  auto it = slots_.find(name);
  return it == slots_.end() ? -1 : it->second;
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

  // Kernels and subgraphs. Subgraphs compile with this graph as their enclosing scope; the names they
  // take from it count as inputs of the node that owns them, for liveness.
  const auto& registry = ops::OpRegistry::global();
  for (auto& en : eg->nodes_) {
    const ir::Node& n = *en.node;
    int opset = opset_of(*opts.model, n.domain);
    const ops::OpSchema* schema = registry.find(n.domain, n.op_type, opset);
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
    int since = schema ? schema->since_version() : opset;
    en.info = std::make_unique<KernelInfo>(n, schema, since, std::move(subs));
    for (Backend* b : opts.backends) {
      if (!b->supports_op(*en.info)) continue;
      try {
        auto [k, name] = b->create_kernel(*en.info);
        en.kernel = std::move(k);
        en.kernel_name = std::move(name);
      } catch (const KernelError& e) {
        throw CompileError(fmt::format("{}: {}: {}", eg->path_, node_label(n), e.what()));
      }
      en.backend = b;
      break;
    }
    if (!en.kernel) {
      std::string domain = n.domain.empty() ? "ai.onnx" : n.domain;
      throw CompileError(fmt::format("{}: {}: no kernel for {} version {} of domain {}", eg->path_,
                                     node_label(n), n.op_type, since, domain));
    }
  }

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
  return eg;
}

}  // namespace tessera::rt
