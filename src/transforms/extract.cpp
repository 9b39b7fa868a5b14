#include "transforms/extract.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "check/checker.h"
#include "transforms/observer.h"
#include "transforms/standalone.h"

namespace tessera::transforms {

namespace {

using TypeMap = std::unordered_map<std::string, ir::Type>;

TypeMap main_types(const ir::Model& m) {
  auto types = check::check_model(m).value_types;
  for (const auto& vi : m.graph.inputs)
    if (!vi.type.is_none()) types.emplace(vi.name, vi.type);
  for (const auto& t : m.graph.initializers)
    types.emplace(t.name, ir::Type::tensor(t.dtype, [&] {
                    ir::Shape s;
                    for (int64_t d : t.dims) s.push_back(ir::Dim::of(d));
                    return s;
                  }()));
  return types;
}

std::string first_error(const check::Diagnostics& d) {
  for (const auto& item : d.items)
    if (item.severity == check::Severity::kError) return item.to_string();
  return {};
}

void require_checks(const ir::Model& out, const std::string& what) {
  report_progress(0.8, "type-checking the result");
  auto checked = check::check_model(out);
  if (checked.diagnostics.has_errors())
    throw TransformError(
        fmt::format("the extracted {} does not type-check: {}", what, first_error(checked.diagnostics)));
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

std::string graph_attr_names(const ir::Node& n) {
  std::string s;
  for (const auto& a : n.attributes)
    if (a.type == ir::AttrType::kGraph || a.type == ir::AttrType::kGraphs)
      s += (s.empty() ? "" : ", ") + a.name;
  return s.empty() ? "none" : s;
}

// One step "NODE:ATTR" or "NODE:ATTR[k]" of a subgraph path, from graph `g`.
const ir::Graph& step(const ir::Graph& g, const std::string& where, const std::string& text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw TransformError(fmt::format("--subgraph step '{}' is not NODE:ATTRIBUTE", text));
  std::string node = text.substr(0, colon), attr = text.substr(colon + 1);
  size_t index = 0;
  if (auto lb = attr.find('['); lb != std::string::npos && attr.back() == ']') {
    try {
      index = std::stoul(attr.substr(lb + 1, attr.size() - lb - 2));
    } catch (const std::exception&) {
      throw TransformError(fmt::format("--subgraph step '{}': '{}' is not an index", text, attr.substr(lb)));
    }
    attr.resize(lb);
  }
  auto it = std::find_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.name == node; });
  if (it == g.nodes.end()) throw TransformError(fmt::format("graph {} has no node named '{}'", where, node));
  const ir::Attribute* a = it->attr(attr);
  if (!a || a->graphs.empty()) {
    throw TransformError(fmt::format("node '{}' ({}) has no graph attribute '{}' (its graph attributes: {})",
                                     node, it->op_type, attr, graph_attr_names(*it)));
  }
  if (index >= a->graphs.size()) {
    throw TransformError(fmt::format("attribute '{}' of node '{}' holds {} graphs; there is no [{}]", attr,
                                     node, a->graphs.size(), index));
  }
  return *a->graphs[index];
}

ir::Model extract_subgraph(const ir::Model& m, const std::string& path, Report& report) {
  std::vector<const ir::Graph*> chain{&m.graph};
  std::vector<TypeMap> types{main_types(m)};
  auto lookup = [&](const std::string& v) -> std::optional<ir::Type> {
    for (size_t i = types.size(); i-- > 0;) {
      auto it = types[i].find(v);
      if (it != types[i].end()) return it->second;
    }
    return std::nullopt;
  };
  std::string where = "main";
  auto steps = split(path, '/');
  for (size_t k = 0; k < steps.size(); ++k) {
    const ir::Graph& sub = step(*chain.back(), where, steps[k]);
    where += "/" + steps[k];
    chain.push_back(&sub);
    if (k + 1 < steps.size()) types.push_back(graph_value_types(m, sub, lookup));
  }
  ir::Model out = standalone_model(m, *chain.back(), lookup);
  // Outer values that are initializers of an enclosing graph stay constants: their tensors come along.
  size_t own = chain.back()->inputs.size();
  std::vector<ir::ValueInfo> inputs(out.graph.inputs.begin(),
                                    out.graph.inputs.begin() + static_cast<ptrdiff_t>(own));
  for (size_t i = own; i < out.graph.inputs.size(); ++i) {
    const ir::ValueInfo& vi = out.graph.inputs[i];
    const ir::Tensor* t = nullptr;
    for (size_t c = chain.size() - 1; c-- > 0 && !t;) {
      if (chain[c]->find_input(vi.name)) break;
      t = chain[c]->find_initializer(vi.name);
    }
    if (t) {
      out.graph.initializers.push_back(*t);
      report.add("outer initializers carried");
    } else {
      inputs.push_back(vi);
      report.add("outer values made inputs");
      report.details.push_back(fmt::format("input '{}': {}", vi.name, vi.type.to_string()));
    }
  }
  out.graph.inputs = std::move(inputs);
  require_checks(out, "subgraph");
  return out;
}

ir::Model extract_function(const ir::Model& m, const std::string& key, Report& report) {
  size_t colon = key.rfind(':');
  std::string domain = colon == std::string::npos ? "" : key.substr(0, colon);
  std::string name = colon == std::string::npos ? key : key.substr(colon + 1);
  const ir::Function* f = nullptr;
  for (const auto& fn : m.functions)
    if (fn.name == name && ir::canonical_domain(fn.domain) == ir::canonical_domain(domain)) f = &fn;
  if (!f) {
    std::string have;
    for (const auto& fn : m.functions) have += (have.empty() ? "" : ", ") + fn.domain + ":" + fn.name;
    throw TransformError(
        fmt::format("the model has no local function '{}' (it has: {})", key, have.empty() ? "none" : have));
  }
  const ir::Node* call = find_call(m.graph, *f);
  if (!call) {
    throw TransformError(
        fmt::format("function '{}' is not called from the main graph, so its inputs have no "
                    "types to extract it with",
                    key));
  }
  report_progress(0.4, "typing the cut's inputs and outputs");
  TypeMap types = main_types(m);
  ir::Model out;
  out.ir_version = m.ir_version;
  out.opset_imports = f->opset_imports.empty() ? m.opset_imports : f->opset_imports;
  for (const auto& o : m.opset_imports)
    if (!out.opset_version(o.domain)) out.opset_imports.push_back(o);
  out.functions = m.functions;
  out.base_dir = m.base_dir;
  out.graph = f->body;
  out.graph.name = f->name;
  bind_references(out.graph, call, *f);
  for (size_t i = 0; i < out.graph.inputs.size(); ++i) {
    if (i < call->inputs.size() && types.count(call->inputs[i]))
      out.graph.inputs[i].type = types[call->inputs[i]];
  }
  for (size_t i = 0; i < out.graph.outputs.size(); ++i) {
    if (i < call->outputs.size() && types.count(call->outputs[i]))
      out.graph.outputs[i].type = types[call->outputs[i]];
  }
  report.add("function nodes", static_cast<int64_t>(out.graph.nodes.size()));
  report.details.push_back(fmt::format("types taken from the call '{}'", call->name));
  require_checks(out, "function");
  return out;
}

ir::Model extract_cut(const ir::Model& m, const ExtractOptions& o, Report& report) {
  const ir::Graph& g = m.graph;
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& v : g.nodes[i].outputs)
      if (!v.empty()) producer[v] = i;
  auto exists = [&](const std::string& v) {
    return producer.count(v) || g.find_input(v) || g.find_initializer(v);
  };
  for (const auto* list : {&o.inputs, &o.outputs}) {
    for (const auto& v : *list) {
      if (!exists(v))
        throw TransformError(fmt::format("{} names '{}', which is not a value of the main graph",
                                         list == &o.inputs ? "--inputs" : "--outputs", v));
    }
  }
  if (o.outputs.empty()) throw TransformError("give at least one value in --outputs");
  std::unordered_set<std::string> cut(o.inputs.begin(), o.inputs.end());
  std::vector<bool> keep(g.nodes.size(), false);
  std::unordered_set<std::string> inits, seen, reached;
  // Depth-first from the outputs, remembering who reads each value, for the message when a path
  // reaches a model input the cut does not list.
  std::vector<std::pair<std::string, std::string>> stack;  // value, the node that reads it
  for (const auto& v : o.outputs) stack.emplace_back(v, "");
  Steps steps("walking back from the outputs", g.nodes.size(), 0, 0.4);
  while (!stack.empty()) {
    steps.at(seen.size());
    auto [v, reader] = stack.back();
    stack.pop_back();
    if (v.empty()) continue;
    if (cut.count(v)) {
      reached.insert(v);
      continue;
    }
    if (!seen.insert(v).second) continue;
    auto p = producer.find(v);
    if (p != producer.end()) {
      size_t i = p->second;
      keep[i] = true;
      const ir::Node& n = g.nodes[i];
      std::string label = n.name.empty() ? n.op_type : n.name;
      for (const auto& in : n.inputs) stack.emplace_back(in, label);
      for (const auto& a : n.attributes)
        for (const auto& sub : a.graphs)
          for (const auto& outer : outer_values(*sub)) stack.emplace_back(outer, label);
      continue;
    }
    if (g.find_initializer(v) && !g.find_input(v)) {
      inits.insert(v);
      continue;
    }
    throw TransformError(fmt::format(
        "the cut does not separate the graph: '{}'{} depends on the model input '{}', which --inputs does "
        "not "
        "list",
        reader.empty() ? v : reader, reader.empty() ? "" : " (a node on the way to --outputs)", v));
  }
  TypeMap types = main_types(m);
  ir::Model out;
  out.ir_version = m.ir_version;
  out.opset_imports = m.opset_imports;
  out.functions = m.functions;
  out.base_dir = m.base_dir;
  out.graph.name = g.name;
  auto typed = [&](const std::string& v) {
    auto it = types.find(v);
    return ir::ValueInfo{v, it == types.end() ? ir::Type() : it->second, {}, {}};
  };
  for (const auto& v : o.inputs) out.graph.inputs.push_back(typed(v));
  for (const auto& v : o.outputs) out.graph.outputs.push_back(typed(v));
  for (const auto& t : g.initializers)
    if (inits.count(t.name)) out.graph.initializers.push_back(t);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (keep[i]) out.graph.nodes.push_back(g.nodes[i]);
  out.graph.next_node_id = g.next_node_id;
  for (const auto& vi : g.value_info)
    if (seen.count(vi.name) && !cut.count(vi.name)) out.graph.value_info.push_back(vi);
  report.add("nodes", static_cast<int64_t>(out.graph.nodes.size()));
  report.add("initializers", static_cast<int64_t>(out.graph.initializers.size()));
  for (const auto& v : o.inputs)
    if (!reached.count(v))
      report.warnings.push_back(fmt::format("--inputs value '{}' is not on any path to --outputs", v));
  require_checks(out, "cut");
  return out;
}

}  // namespace

ir::Model extract(const ir::Model& m, const ExtractOptions& o, Report& report) {
  int modes = !o.subgraph.empty() + !o.function.empty() + (!o.inputs.empty() || !o.outputs.empty());
  if (modes != 1) throw TransformError("give exactly one of --subgraph, --function, or --inputs/--outputs");
  if (!o.subgraph.empty()) return extract_subgraph(m, o.subgraph, report);
  if (!o.function.empty()) return extract_function(m, o.function, report);
  return extract_cut(m, o, report);
}

}  // namespace tessera::transforms
