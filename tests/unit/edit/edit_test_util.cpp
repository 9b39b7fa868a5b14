#include "edit_test_util.h"

#include <fmt/format.h>

namespace tessera::ir::test {

namespace {

Node make_node(std::string name, std::string op, std::vector<std::string> in, std::vector<std::string> out) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

ValueInfo value(std::string name, DataType t = DataType::kFloat) {
  return ValueInfo{std::move(name), Type::tensor(t, Shape{Dim::of(1), Dim::of(4)}), {}, {}};
}

Graph one_node_graph(std::string name, Node n, std::string out) {
  Graph g;
  g.name = std::move(name);
  g.add_node(std::move(n));
  g.outputs.push_back(value(std::move(out)));
  return g;
}

std::string diff_ids(const Graph& a, const Graph& b, const std::string& where) {
  if (a.next_node_id != b.next_node_id) {
    return fmt::format("{}: next_node_id {} vs {}", where, a.next_node_id, b.next_node_id);
  }
  if (a.nodes.size() != b.nodes.size()) return where + ": node counts differ";
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node& na = a.nodes[i];
    const Node& nb = b.nodes[i];
    if (na.id != nb.id) return fmt::format("{}: node {} has id {} vs {}", where, i, na.id, nb.id);
    for (size_t k = 0; k < na.attributes.size() && k < nb.attributes.size(); ++k) {
      const Attribute& x = na.attributes[k];
      const Attribute& y = nb.attributes[k];
      for (size_t j = 0; j < x.graphs.size() && j < y.graphs.size(); ++j) {
        std::string d =
            diff_ids(*x.graphs[j], *y.graphs[j], fmt::format("{}/{}.{}[{}]", where, na.id, x.name, j));
        if (!d.empty()) return d;
      }
    }
  }
  return {};
}

}  // namespace

Model small_model() {
  Model m;
  m.ir_version = 10;
  m.producer_name = "tessera-test";
  m.opset_imports = {{"", 17}, {"custom", 1}};
  Graph& g = m.graph;
  g.name = "main";
  g.inputs = {value("x"), value("cond", DataType::kBool)};
  g.initializers.push_back(make_tensor<float>("w", DataType::kFloat, {1, 4}, {1, 2, 3, 4}));
  g.add_node(make_node("add", "Add", {"x", "w"}, {"a"}));
  g.add_node(make_node("relu", "Relu", {"a"}, {"r"}));

  Node if_node = make_node("if", "If", {"cond"}, {"y"});
  if_node.attributes.push_back(Attribute::of_graph(
      "then_branch", one_node_graph("then", make_node("ident", "Identity", {"r"}, {"t"}), "t")));
  if_node.attributes.push_back(
      Attribute::of_graph("else_branch", one_node_graph("else", make_node("neg", "Neg", {"a"}, {"e"}), "e")));
  g.add_node(std::move(if_node));

  Node multi = make_node("multi", "Multi", {"r"}, {"z"});
  multi.domain = "custom";
  Attribute branches;
  branches.name = "branches";
  branches.type = AttrType::kGraphs;
  branches.graphs.emplace_back(one_node_graph("b0", make_node("", "Sigmoid", {"r"}, {"s0"}), "s0"));
  branches.graphs.emplace_back(one_node_graph("b1", make_node("x1", "Sigmoid", {"a"}, {"s1"}), "s1"));
  multi.attributes.push_back(std::move(branches));
  g.add_node(std::move(multi));

  g.outputs = {value("y"), value("z")};
  g.value_info = {value("a")};

  Function f;
  f.domain = "custom";
  f.name = "Square";
  f.opset_imports = {{"", 17}};
  f.body.name = "Square";
  f.body.inputs = {ValueInfo{"X", {}, {}, {}}};
  f.body.outputs = {ValueInfo{"Y", {}, {}, {}}};
  f.body.add_node(make_node("sq", "Mul", {"X", "X"}, {"Y"}));
  m.functions.push_back(std::move(f));
  return m;
}

NodeId id_of(const Graph& g, const std::string& node_name) {
  for (const Node& n : g.nodes) {
    if (n.name == node_name) return n.id;
  }
  ADD_FAILURE() << "no node " << node_name;
  return 0;
}

const Node* node_named(const Graph& g, const std::string& node_name) {
  for (const Node& n : g.nodes) {
    if (n.name == node_name) return &n;
  }
  return nullptr;
}

GraphPath then_path(const Model& m) {
  return GraphPath::main_graph().sub(id_of(m.graph, "if"), "then_branch");
}
GraphPath b1_path(const Model& m) {
  return GraphPath::main_graph().sub(id_of(m.graph, "multi"), "branches", 1);
}

::testing::AssertionResult identical(const Model& a, const Model& b) {
  if (!(a == b)) return ::testing::AssertionFailure() << "models differ in content";
  std::string d = diff_ids(a.graph, b.graph, "main");
  for (size_t i = 0; d.empty() && i < a.functions.size(); ++i) {
    d = diff_ids(a.functions[i].body, b.functions[i].body, "function " + a.functions[i].name);
  }
  if (!d.empty()) return ::testing::AssertionFailure() << d;
  return ::testing::AssertionSuccess();
}

void expect_round_trip(Model& m, Command& c, const std::function<void(const Model&)>& check) {
  Model before = m;
  ASSERT_NO_THROW(c.apply(m)) << c.description();
  Model after = m;
  EXPECT_FALSE(identical(m, before)) << c.description() << " changed nothing";
  if (check) check(m);
  c.undo(m);
  EXPECT_TRUE(identical(m, before)) << "undo of " << c.description();
  c.apply(m);
  EXPECT_TRUE(identical(m, after)) << "redo of " << c.description();
}

void expect_refused(Model& m, Command& c, const std::string& message) {
  Model before = m;
  try {
    c.apply(m);
    ADD_FAILURE() << "expected '" << message << "' from " << c.description();
  } catch (const CommandError& e) {
    EXPECT_EQ(e.what(), message);
  }
  EXPECT_TRUE(identical(m, before));
}

}  // namespace tessera::ir::test
