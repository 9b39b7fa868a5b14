#include "transforms/function_create.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "transforms/observer.h"

namespace tessera::transforms {

namespace {

struct Group {
  std::string label;          // the prefix, or "the --nodes group"
  std::vector<size_t> nodes;  // indices in the main graph, in order
  std::vector<std::string> inputs, outputs;
};

std::string node_name(const ir::Node& n) {
  return n.name.empty() ? fmt::format("#{} ({})", n.id, n.op_type) : "'" + n.name + "'";
}

// Names the nodes read directly or from their subgraphs.
std::vector<std::string> reads_of(const ir::Node& n) {
  std::vector<std::string> r;
  for (const auto& in : n.inputs)
    if (!in.empty()) r.push_back(in);
  for (const auto& a : n.attributes)
    for (const auto& sub : a.graphs)
      for (const auto& v : outer_values(*sub)) r.push_back(v);
  return r;
}

void find_interface(const ir::Graph& g, Group& grp) {
  grp.inputs.clear();
  grp.outputs.clear();
  std::unordered_set<size_t> in(grp.nodes.begin(), grp.nodes.end());
  std::unordered_set<std::string> produced, seen_in, seen_out;
  for (size_t i : grp.nodes)
    for (const auto& o : g.nodes[i].outputs) produced.insert(o);
  for (size_t i : grp.nodes)
    for (const auto& v : reads_of(g.nodes[i]))
      if (!produced.count(v) && seen_in.insert(v).second) grp.inputs.push_back(v);
  std::unordered_set<std::string> read_outside;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!in.count(i))
      for (const auto& v : reads_of(g.nodes[i])) read_outside.insert(v);
  for (const auto& o : g.outputs) read_outside.insert(o.name);
  for (size_t i : grp.nodes)
    for (const auto& o : g.nodes[i].outputs)
      if (!o.empty() && read_outside.count(o) && seen_out.insert(o).second) grp.outputs.push_back(o);
  if (grp.outputs.empty())
    throw TransformError(fmt::format("{}: nothing outside the group reads its results", grp.label));
}

// A node outside the group that depends on the group's outputs and feeds the group would make the call
// depend on itself.
void require_block(const ir::Graph& g, const Group& grp) {
  std::unordered_set<size_t> in(grp.nodes.begin(), grp.nodes.end());
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& o : g.nodes[i].outputs) producer[o] = i;
  // Nodes outside downstream of the group, in order (a node reads only earlier values).
  std::vector<bool> tainted(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    bool from_group = false;
    for (const auto& v : reads_of(g.nodes[i])) {
      auto p = producer.find(v);
      if (p == producer.end()) continue;
      if (in.count(p->second) ? !in.count(i) : tainted[p->second]) from_group = true;
    }
    if (in.count(i)) {
      for (const auto& v : reads_of(g.nodes[i])) {
        auto p = producer.find(v);
        if (p != producer.end() && !in.count(p->second) && tainted[p->second]) {
          throw TransformError(
              fmt::format("{} is not one block: node {} outside it reads from it and feeds node {}",
                          grp.label, node_name(g.nodes[p->second]), node_name(g.nodes[i])));
        }
      }
    } else {
      tainted[i] = from_group;
    }
  }
}

// Same operators in the same order, wired the same way inside; attributes may differ.
void require_same_structure(const ir::Graph& g, const Group& a, const Group& b) {
  auto fail = [&](const std::string& why) {
    throw TransformError(fmt::format("{} and {} differ: {}", a.label, b.label, why));
  };
  if (a.nodes.size() != b.nodes.size()) fail(fmt::format("{} vs {} nodes", a.nodes.size(), b.nodes.size()));
  if (a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size())
    fail("different inputs or outputs");
  std::unordered_map<std::string, std::string> map;  // a's value -> b's value
  for (size_t k = 0; k < a.inputs.size(); ++k) map[a.inputs[k]] = b.inputs[k];
  for (size_t k = 0; k < a.nodes.size(); ++k) {
    const ir::Node& x = g.nodes[a.nodes[k]];
    const ir::Node& y = g.nodes[b.nodes[k]];
    if (x.op_type != y.op_type || x.domain != y.domain || x.inputs.size() != y.inputs.size() ||
        x.outputs.size() != y.outputs.size())
      fail(fmt::format("node {} is {}, node {} is {}", node_name(x), x.op_type, node_name(y), y.op_type));
    for (size_t i = 0; i < x.inputs.size(); ++i) {
      auto it = map.find(x.inputs[i]);
      if (x.inputs[i].empty() != y.inputs[i].empty() || (it != map.end() && it->second != y.inputs[i]))
        fail(fmt::format("input {} of {} and {} is wired differently", i, node_name(x), node_name(y)));
    }
    for (size_t i = 0; i < x.outputs.size(); ++i) map[x.outputs[i]] = y.outputs[i];
    if (x.attributes.size() != y.attributes.size())
      fail(fmt::format("{} and {} have different attributes", node_name(x), node_name(y)));
    for (size_t i = 0; i < x.attributes.size(); ++i)
      if (x.attributes[i].name != y.attributes[i].name || x.attributes[i].type != y.attributes[i].type)
        fail(fmt::format("{} and {} have different attributes", node_name(x), node_name(y)));
  }
  for (size_t k = 0; k < a.outputs.size(); ++k)
    if (map[a.outputs[k]] != b.outputs[k]) fail("their outputs are wired differently");
}

// Kahn's order, keeping the file order wherever the dependencies allow.
void topological_sort(ir::Graph& g) {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& o : g.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
  std::vector<std::vector<size_t>> users(g.nodes.size());
  std::vector<size_t> missing(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::unordered_set<size_t> deps;
    for (const auto& v : reads_of(g.nodes[i])) {
      auto p = producer.find(v);
      if (p != producer.end() && p->second != i && deps.insert(p->second).second)
        users[p->second].push_back(i);
    }
    missing[i] = deps.size();
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (missing[i] == 0) ready.insert(i);
  std::vector<ir::Node> out;
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    out.push_back(std::move(g.nodes[i]));
    for (size_t u : users[i])
      if (--missing[u] == 0) ready.insert(u);
  }
  g.nodes = std::move(out);
}

// One group per distinct text `scope` matches at the start of node names, in the order of their first
// nodes.
std::vector<Group> scope_groups(const ir::Graph& g, const std::string& scope) {
  std::regex re;
  try {
    re = std::regex(scope, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw TransformError(fmt::format("--scope '{}' is not a valid expression: {}", scope, e.what()));
  }
  std::vector<Group> groups;
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::smatch match;
    const std::string& name = g.nodes[i].name;
    if (name.empty() || !std::regex_search(name, match, re, std::regex_constants::match_continuous)) continue;
    auto [it, fresh] = index.emplace(match.str(0), groups.size());
    if (fresh) groups.push_back({fmt::format("the nodes named '{}...'", match.str(0)), {}, {}, {}});
    groups[it->second].nodes.push_back(i);
  }
  if (groups.empty()) throw TransformError(fmt::format("--scope '{}' matches no node name's start", scope));
  return groups;
}

struct Repeat {
  size_t start, length, count;
  size_t slack;  // the run's nodes beyond count blocks: the blocks may start up to this much later
};

// Runs of contiguous blocks with the same operators in file order, by the nodes they cover (most first;
// then shorter blocks, i.e. more calls). For each block length L, a maximal run of positions i with
// op(i) == op(i + L) of length r is r + L nodes of period L: (r + L) / L blocks. Linear per length;
// lengths up to 4,096 nodes.
std::vector<Repeat> repeats(const ir::Graph& g) {
  std::vector<size_t> op(g.nodes.size());
  std::unordered_map<std::string, size_t> ids;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    std::string key = fmt::format("{}:{}/{}/{}", n.domain, n.op_type, n.inputs.size(), n.outputs.size());
    for (const auto& a : n.attributes) key += "/" + a.name;  // the structure check wants the same names
    op[i] = ids.emplace(std::move(key), ids.size()).first->second;
  }
  std::vector<Repeat> found;
  const size_t n = op.size();
  for (size_t len = 2; len <= std::min<size_t>(n / 2, 4096); ++len) {
    size_t run = 0;
    for (size_t i = 0; i + len <= n; ++i) {
      bool same = i + len < n && op[i] == op[i + len];
      if (same) {
        ++run;
        continue;
      }
      if (run >= len) found.push_back({i - run, len, (run + len) / len, (run + len) % len});
      run = 0;
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Repeat& a, const Repeat& b) {
    if (a.length * a.count != b.length * b.count) return a.length * a.count > b.length * b.count;
    return a.length < b.length;
  });
  return found;
}

// `count` blocks of `length` nodes from `start`, when they pass the checks create_function makes;
// otherwise nullopt, with the reason.
std::optional<std::vector<Group>> checked_blocks(const ir::Graph& g, size_t start, size_t length,
                                                 size_t count, std::string& reason) {
  std::vector<Group> groups;
  for (size_t j = 0; j < count; ++j) {
    size_t first = start + j * length;
    Group grp{fmt::format("block {} (nodes {} to {})", j, first, first + length - 1), {}, {}, {}};
    for (size_t k = 0; k < length; ++k) grp.nodes.push_back(first + k);
    groups.push_back(std::move(grp));
  }
  try {
    for (auto& grp : groups) {
      find_interface(g, grp);
      require_block(g, grp);
    }
    for (size_t k = 1; k < groups.size(); ++k) require_same_structure(g, groups[0], groups[k]);
    return groups;
  } catch (const TransformError& e) {
    reason = e.what();
    return std::nullopt;
  }
}

// The best run of repeated blocks whose blocks pass the checks create_function makes; throws when none.
std::vector<Group> repeated_groups(const ir::Graph& g) {
  auto found = repeats(g);
  size_t tried = 0;
  std::string last_reason = "no two contiguous blocks of 2 or more nodes have the same operators";
  for (const Repeat& r : found) {
    if (++tried > 32) break;
    for (size_t shift = 0; shift <= r.slack; ++shift) {
      if (auto groups = checked_blocks(g, r.start + shift, r.length, r.count, last_reason)) return *groups;
    }
  }
  throw TransformError("--find-repeats found no repeated structure: " + last_reason);
}

}  // namespace

Report create_function(ir::History& h, const FunctionCreateOptions& o) {
  const ir::Model& m = h.model();
  const ir::Graph& g = m.graph;
  if (o.name.empty()) throw TransformError("give the function a name (--name)");
  if (m.find_function(o.domain, o.name))
    throw TransformError(fmt::format("the model already has a function '{}:{}'", o.domain, o.name));
  if (m.ir_version < 8)
    throw TransformError(
        fmt::format("local functions need IR version 8 or later; the model is IR {}", m.ir_version));
  std::vector<Group> groups;
  if (!o.nodes.empty()) {
    Group grp{"the --nodes group", {}, {}, {}};
    for (const auto& name : o.nodes) {
      auto it =
          std::find_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.name == name; });
      if (it == g.nodes.end())
        throw TransformError(fmt::format("--nodes names '{}', which is not a node of the main graph", name));
      grp.nodes.push_back(static_cast<size_t>(it - g.nodes.begin()));
    }
    std::sort(grp.nodes.begin(), grp.nodes.end());
    grp.nodes.erase(std::unique(grp.nodes.begin(), grp.nodes.end()), grp.nodes.end());
    groups.push_back(std::move(grp));
  }
  for (const auto& p : o.prefixes) {
    Group grp{fmt::format("the nodes named '{}...'", p), {}, {}, {}};
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!g.nodes[i].name.empty() && g.nodes[i].name.starts_with(p)) grp.nodes.push_back(i);
    if (grp.nodes.empty())
      throw TransformError(fmt::format("--prefix '{}' matches no node of the main graph", p));
    groups.push_back(std::move(grp));
  }
  if (!o.scope.empty())
    for (auto& grp : scope_groups(g, o.scope)) groups.push_back(std::move(grp));
  report_progress(0.05, "finding the groups");
  if (o.find_repeats) {
    if (!groups.empty()) throw TransformError("--find-repeats finds the groups itself: give no other group");
    groups = repeated_groups(g);
  }
  if (groups.empty()) throw TransformError("give --nodes, --prefix, --scope or --find-repeats");
  std::unordered_set<size_t> taken;
  Steps checking("checking the groups", groups.size(), 0.2, 0.6);
  for (auto& grp : groups) {
    checking.at(static_cast<size_t>(&grp - groups.data()));
    for (size_t i : grp.nodes)
      if (!taken.insert(i).second)
        throw TransformError(fmt::format("node {} is in two groups", node_name(g.nodes[i])));
    find_interface(g, grp);
    require_block(g, grp);
  }
  for (size_t k = 1; k < groups.size(); ++k) require_same_structure(g, groups[0], groups[k]);

  // The body: the first group's nodes; an attribute that differs between the groups becomes a parameter.
  ir::Function f;
  f.name = o.name;
  f.domain = o.domain;
  f.opset_imports = m.opset_imports;
  f.body.name = o.name;
  std::vector<std::pair<std::string, std::vector<ir::Attribute>>> params;  // parameter -> value per group
  for (size_t k = 0; k < groups[0].nodes.size(); ++k) {
    ir::Node n = g.nodes[groups[0].nodes[k]];
    for (size_t a = 0; a < n.attributes.size(); ++a) {
      bool differs = false;
      for (size_t j = 1; j < groups.size(); ++j)
        differs |= !(g.nodes[groups[j].nodes[k]].attributes[a] == n.attributes[a]);
      if (!differs) continue;
      std::string param =
          fmt::format("{}_{}", n.name.empty() ? fmt::format("n{}", k) : n.name, n.attributes[a].name);
      std::replace_if(
          param.begin(), param.end(),
          [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && c != '_'; }, '_');
      std::vector<ir::Attribute> values;
      for (const auto& grp : groups) values.push_back(g.nodes[grp.nodes[k]].attributes[a]);
      params.emplace_back(param, std::move(values));
      f.attributes.push_back(param);
      ir::Attribute ref;
      ref.name = n.attributes[a].name;
      ref.type = n.attributes[a].type;
      ref.ref_attr_name = param;
      n.attributes[a] = std::move(ref);
    }
    n.id = 0;
    f.body.add_node(std::move(n));
  }
  for (const auto& v : groups[0].inputs) f.body.inputs.push_back({v, {}, {}, {}});
  for (const auto& v : groups[0].outputs) f.body.outputs.push_back({v, {}, {}, {}});

  ir::Model out = m;
  std::vector<bool> removed(g.nodes.size(), false);
  Steps replacing("replacing the groups with calls", groups.size(), 0.6, 0.9);
  for (size_t j = 0; j < groups.size(); ++j) {
    replacing.at(j);
    ir::Node call;
    call.name = NameTable(out).fresh(fmt::format("{}_{}", o.name, j));
    call.op_type = o.name;
    call.domain = o.domain;
    call.inputs = groups[j].inputs;
    call.outputs = groups[j].outputs;
    for (const auto& [param, values] : params) {
      ir::Attribute a = values[j];
      a.name = param;
      call.attributes.push_back(std::move(a));
    }
    out.graph.nodes[groups[j].nodes.back()] = std::move(call);  // in place of the group's last node
    out.graph.nodes[groups[j].nodes.back()].id = out.graph.next_node_id++;
    for (size_t k = 0; k + 1 < groups[j].nodes.size(); ++k) removed[groups[j].nodes[k]] = true;
  }
  std::vector<ir::Node> kept;
  for (size_t i = 0; i < out.graph.nodes.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(out.graph.nodes[i]));
  out.graph.nodes = std::move(kept);
  topological_sort(out.graph);
  // value_info of values now inside the function stays valid for nothing: drop it.
  std::unordered_set<std::string> visible;
  for (const auto& n : out.graph.nodes)
    for (const auto& v : n.outputs) visible.insert(v);
  std::erase_if(out.graph.value_info, [&](const ir::ValueInfo& vi) { return !visible.count(vi.name); });
  out.functions.push_back(std::move(f));
  if (!out.opset_version(o.domain)) out.opset_imports.push_back({o.domain, 1});

  Report report;
  report.add("groups replaced by calls", static_cast<int64_t>(groups.size()));
  report.add("function nodes", static_cast<int64_t>(groups[0].nodes.size()));
  report.add("attribute parameters", static_cast<int64_t>(params.size()));
  for (const auto& [p, v] : params) report.details.push_back(fmt::format("attribute parameter '{}'", p));
  report_progress(0.95, "recording the edit");
  commit(h, fmt::format("Create function '{}'", o.name), std::move(out));
  return report;
}

}  // namespace tessera::transforms
