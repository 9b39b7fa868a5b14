#include "ir/commands/graph_path.h"

#include <fmt/format.h>

#include "ir/commands/command_error.h"

namespace tessera::ir {

std::string NodeRef::to_string() const {
  return id != 0 ? fmt::format("#{}", id) : fmt::format("'{}'", name);
}

std::string GraphPath::FunctionKey::to_string() const {
  std::string s = domain.empty() ? name : domain + "." + name;
  return overload.empty() ? s : s + ":" + overload;
}

GraphPath GraphPath::function_body(std::string domain, std::string name, std::string overload) {
  GraphPath p;
  p.function = FunctionKey{std::move(domain), std::move(name), std::move(overload)};
  return p;
}

GraphPath GraphPath::sub(NodeId node, std::string attribute, size_t index) const {
  GraphPath p = *this;
  p.steps.push_back(Step{node, std::move(attribute), index});
  return p;
}

std::string node_label(const Node& n) {
  return n.name.empty() ? fmt::format("#{} ({})", n.id, n.op_type) : fmt::format("'{}'", n.name);
}

std::string graph_label(const Graph& g) {
  return fmt::format("'{}'", g.name.empty() ? "<unnamed>" : g.name);
}

namespace {

Graph& function_body(Model& m, const GraphPath::FunctionKey& k) {
  for (Function& f : m.functions) {
    if (f.domain == k.domain && f.name == k.name && f.overload == k.overload) return f.body;
  }
  throw CommandError(fmt::format("function '{}' does not exist in the model", k.to_string()));
}

Graph& step_into(Graph& g, const GraphPath::Step& s) {
  Node* n = g.find_node(s.node);
  if (!n) throw CommandError(fmt::format("node #{} does not exist in graph {}", s.node, graph_label(g)));
  Attribute* a = n->attr(s.attribute);
  if (!a) throw CommandError(fmt::format("node {} has no attribute '{}'", node_label(*n), s.attribute));
  if (a->type != AttrType::kGraph && a->type != AttrType::kGraphs) {
    throw CommandError(fmt::format("attribute '{}' of node {} has type {}, not graph", s.attribute,
                                   node_label(*n), attr_type_name(a->type)));
  }
  if (s.index >= a->graphs.size()) {
    throw CommandError(fmt::format("graph index {} is out of range for attribute '{}' of node {} ({} graphs)",
                                   s.index, s.attribute, node_label(*n), a->graphs.size()));
  }
  return *a->graphs[s.index];
}

}  // namespace

std::vector<Graph*> resolve_scopes(Model& m, const GraphPath& p) {
  Graph* g = p.function ? &function_body(m, *p.function) : &m.graph;
  std::vector<Graph*> scopes{g};
  for (const GraphPath::Step& s : p.steps) {
    g = &step_into(*g, s);
    scopes.push_back(g);
  }
  return scopes;
}

Graph& resolve_graph(Model& m, const GraphPath& p) {
  return *resolve_scopes(m, p).back();
}

// Resolution never changes the model; the const overload reuses the mutable walk.
const Graph& resolve_graph(const Model& m, const GraphPath& p) {
  return resolve_graph(const_cast<Model&>(m), p);
}

std::string path_string(const Model& m, const GraphPath& p) {
  std::string s = p.function ? "function " + p.function->to_string() : "main";
  const Graph* g = nullptr;
  try {
    g = p.function ? &function_body(const_cast<Model&>(m), *p.function) : &m.graph;
  } catch (const CommandError&) {
  }
  for (const GraphPath::Step& step : p.steps) {
    const Node* n = g ? g->find_node(step.node) : nullptr;
    std::string who = n && !n->name.empty() ? n->name : fmt::format("#{}", step.node);
    s += fmt::format("/{}.{}", who, step.attribute);
    const Attribute* a = n ? n->attr(step.attribute) : nullptr;
    if (a && a->type == AttrType::kGraphs) s += fmt::format("[{}]", step.index);
    g = a && step.index < a->graphs.size() ? a->graphs[step.index].get() : nullptr;
  }
  return s;
}

}  // namespace tessera::ir
