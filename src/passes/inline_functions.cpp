#include "passes/inline_functions.h"

#include <fmt/format.h>

#include <stdexcept>
#include <unordered_map>

namespace tessera::passes {

namespace {

constexpr int kMaxDepth = 64;

// Attribute references inside the body ("ref_attr_name") take the caller's value, or the function's
// default; a reference to an attribute given by neither drops the attribute (the op's default applies).
bool bind_attribute(ir::Attribute& a, const ir::Node& call, const ir::Function& fn) {
  if (!a.is_reference()) return true;
  std::string name = a.name;
  const ir::Attribute* given = call.attr(a.ref_attr_name);
  if (!given)
    for (const auto& d : fn.attribute_defaults)
      if (d.name == a.ref_attr_name) given = &d;
  if (!given) return false;
  a = *given;
  a.name = std::move(name);
  return true;
}

struct Inliner {
  ir::Model& model;
  int count = 0;
  int serial = 0;

  void graph(ir::Graph& g, int depth) {
    if (depth > kMaxDepth) throw std::runtime_error("model-local functions call each other recursively");
    std::vector<ir::Node> out;
    out.reserve(g.nodes.size());
    bool changed = false;
    for (auto& n : g.nodes) {
      for (auto& a : n.attributes)
        for (auto& sub : a.graphs) graph(*sub, depth);
      const ir::Function* fn = model.find_function(n.domain, n.op_type, n.overload);
      if (!fn) {
        out.push_back(std::move(n));
        continue;
      }
      changed = true;
      ++count;
      expand(n, *fn, out, depth);
    }
    if (!changed) {
      g.nodes = std::move(out);
      return;
    }
    // Re-add through add_node so every inlined node gets a fresh id of this graph.
    g.nodes.clear();
    for (auto& n : out) {
      ir::NodeId keep = n.id;
      if (keep != 0 && !g.find_node(keep)) {
        g.nodes.push_back(std::move(n));
        continue;
      }
      g.add_node(std::move(n));
    }
  }

  void expand(const ir::Node& call, const ir::Function& fn, std::vector<ir::Node>& out, int depth) {
    // Formal names map to the caller's actual values; body-internal names get a unique prefix.
    std::unordered_map<std::string, std::string> rename;
    for (size_t i = 0; i < fn.body.inputs.size(); ++i)
      rename[fn.body.inputs[i].name] = i < call.inputs.size() ? call.inputs[i] : std::string();
    for (size_t i = 0; i < fn.body.outputs.size(); ++i)
      rename[fn.body.outputs[i].name] = i < call.outputs.size() ? call.outputs[i] : std::string();
    std::string prefix =
        fmt::format("{}__{}_{}/", call.name.empty() ? fn.name : call.name, fn.name, serial++);
    auto map_name = [&](const std::string& s) -> std::string {
      if (s.empty()) return s;
      auto it = rename.find(s);
      if (it != rename.end()) return it->second;
      return rename[s] = prefix + s;
    };
    ir::Graph body;
    for (const auto& bn : fn.body.nodes) {
      ir::Node n = bn;
      n.id = 0;
      n.name = prefix + (bn.name.empty() ? bn.op_type : bn.name);
      for (auto& in : n.inputs) in = map_name(in);
      for (auto& o : n.outputs) o = map_name(o);
      std::vector<ir::Attribute> attrs;
      for (auto& a : n.attributes)
        if (bind_attribute(a, call, fn)) attrs.push_back(std::move(a));
      n.attributes = std::move(attrs);
      body.nodes.push_back(std::move(n));
    }
    graph(body, depth + 1);  // calls inside the body
    for (auto& n : body.nodes) {
      n.id = 0;
      out.push_back(std::move(n));
    }
  }
};

}  // namespace

int inline_functions(ir::Model& model) {
  if (model.functions.empty()) return 0;
  // Body nodes resolve their versions through the model's imports, so the functions' imports join them.
  for (const auto& fn : model.functions)
    for (const auto& imp : fn.opset_imports)
      if (!model.opset_version(imp.domain)) model.opset_imports.push_back(imp);
  Inliner in{model};
  in.graph(model.graph, 0);
  return in.count;
}

}  // namespace tessera::passes
