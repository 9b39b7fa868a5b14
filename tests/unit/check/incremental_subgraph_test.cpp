// Incremental diagnostics for edits inside subgraphs (If branches, Loop bodies) and local function
// bodies (check/incremental.h): after every edit of a random series anywhere in the model, the result
// equals a fresh full check's, and edits inside bodies take the shortcut.
#include <gtest/gtest.h>

#include <random>

#include "check/incremental.h"
#include "ir/builder.h"
#include "ir/commands/commands.h"

namespace tessera::check {
namespace {

using namespace tessera::ir;

Node make(std::string name, std::string op, std::vector<std::string> in, std::vector<std::string> out,
          std::string domain = {}) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.domain = std::move(domain);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

ValueInfo value(std::string name, Type t = {}) {
  return ValueInfo{std::move(name), std::move(t), {}, {}};
}

// An If whose branches read the outer value `v` (and the outer initializer B).
Node if_node(const std::string& s, const std::string& v) {
  Graph then_g, else_g;
  then_g.name = "then" + s;
  then_g.add_node(make("t_add" + s, "Add", {v, "B"}, {"t_sum" + s}));
  then_g.add_node(make("t_relu" + s, "Relu", {"t_sum" + s}, {"t_out" + s}));
  then_g.outputs = {value("t_out" + s)};
  else_g.name = "else" + s;
  else_g.add_node(make("e_neg" + s, "Neg", {v}, {"e_out" + s}));
  else_g.outputs = {value("e_out" + s)};
  Node n = make("if" + s, "If", {"cond"}, {"if_out" + s});
  n.attributes.push_back(Attribute::of_graph("then_branch", std::move(then_g)));
  n.attributes.push_back(Attribute::of_graph("else_branch", std::move(else_g)));
  return n;
}

// A Loop carrying `v` through a body that adds the outer initializer B and draws a fresh symbol
// (Shape + Reshape of an unknown batch), so symbol numbering inside bodies is exercised too.
Node loop_node(const std::string& s, const std::string& v) {
  Graph body;
  body.name = "body" + s;
  body.inputs = {value("iter" + s, Type::tensor(DataType::kInt64, Shape{})),
                 value("c_in" + s, Type::tensor(DataType::kBool, Shape{})), value("carried" + s)};
  body.add_node(make("l_cond" + s, "Identity", {"c_in" + s}, {"c_out" + s}));
  body.add_node(make("l_add" + s, "Add", {"carried" + s, "B"}, {"l_sum" + s}));
  body.add_node(make("l_shape" + s, "Shape", {"l_sum" + s}, {"l_shp" + s}));
  body.add_node(make("l_reshape" + s, "Reshape", {"l_sum" + s, "l_shp" + s}, {"l_next" + s}));
  body.outputs = {value("c_out" + s), value("l_next" + s)};
  Node n = make("loop" + s, "Loop", {"trips", "cond", v}, {"loop_out" + s});
  n.attributes.push_back(Attribute::of_graph("body", std::move(body)));
  return n;
}

// x [?, 8] -> blocks of MatMul, a call of the local function custom.Scale, an If and a Loop. The Loop
// bodies draw fresh symbols (Shape + Reshape of an unknown batch): an edit that changes how many a node
// draws renumbers every later one, so it is checked in full; the function body draws none.
Model nested_model(int blocks) {
  Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}, {"custom", 1}};
  Function f;
  f.domain = "custom";
  f.name = "Scale";
  f.opset_imports = {{"", 17}};
  f.body.name = "Scale";
  f.body.inputs = {value("X")};
  f.body.outputs = {value("Y")};
  f.body.add_node(make("sq", "Mul", {"X", "X"}, {"sq_out"}));
  f.body.add_node(make("act", "Relu", {"sq_out"}, {"Y"}));
  m.functions.push_back(std::move(f));

  GraphBuilder b(m.graph);
  std::string v = b.input("x", Type::tensor(DataType::kFloat, Shape{Dim::unknown(), Dim::of(8)}));
  b.initializer(make_tensor<float>("W", DataType::kFloat, {8, 8}, std::vector<float>(64, 0.5f)));
  b.initializer(make_tensor<float>("B", DataType::kFloat, {8}, std::vector<float>(8, 1)));
  b.initializer(make_tensor<uint8_t>("cond", DataType::kBool, {}, std::vector<uint8_t>{1}));
  b.initializer(make_tensor<int64_t>("trips", DataType::kInt64, {}, std::vector<int64_t>{2}));
  Graph& g = m.graph;
  for (int i = 0; i < blocks; ++i) {
    std::string s = std::to_string(i);
    g.add_node(make("mm" + s, "MatMul", {v, "W"}, {"mm_out" + s}));
    g.add_node(make("call" + s, "Scale", {"mm_out" + s}, {"call_out" + s}, "custom"));
    g.add_node(if_node(s, "call_out" + s));
    g.add_node(loop_node(s, "if_out" + s));
    v = "loop_out" + s;
  }
  b.output(v);
  return m;
}

std::vector<std::string> lines(const CheckResult& r) {
  std::vector<std::string> out;
  for (const Diagnostic& d : r.diagnostics.items)
    out.push_back(d.to_string() + " @" + std::to_string(d.node_index));
  return out;
}

// Every graph of the model an edit may address: the main graph, each If branch and Loop body, the
// function body.
std::vector<GraphPath> graph_paths(const Model& m) {
  std::vector<GraphPath> out{GraphPath::main_graph(), GraphPath::function_body("custom", "Scale")};
  for (const Node& n : m.graph.nodes) {
    for (const Attribute& a : n.attributes) {
      if (!a.graphs.empty()) out.push_back(GraphPath::main_graph().sub(n.id, a.name));
    }
  }
  return out;
}

class RandomNestedEdits {
 public:
  RandomNestedEdits(History& h, uint32_t seed) : h_(h), rng_(seed) {}

  // One random edit in a random graph; refused ones (CommandError) change nothing. Returns whether
  // it addressed a subgraph or a function body.
  bool step() {
    Model& m = h_.model();
    int what = pick(8);
    if (what == 6 && h_.can_undo()) return h_.undo(), false;
    if (what == 7 && h_.can_redo()) return h_.redo(), false;
    std::vector<GraphPath> paths = graph_paths(m);
    // Mostly inside bodies: that is what this test is about.
    const GraphPath& path =
        pick(4) == 0 ? paths[0] : paths[1 + static_cast<size_t>(pick(static_cast<int>(paths.size() - 1)))];
    try {
      Graph& g = resolve_graph(m, path);
      if (g.nodes.empty()) return false;
      size_t at = static_cast<size_t>(pick(static_cast<int>(g.nodes.size())));
      Node& n = g.nodes[at];
      switch (what) {
        case 0:
          h_.execute(std::make_unique<RenameNode>(path, n.id, "n" + std::to_string(counter_++)));
          break;
        case 1:
          if (n.inputs.empty()) return false;
          h_.execute(std::make_unique<Connect>(path, n.id,
                                               static_cast<size_t>(pick(static_cast<int>(n.inputs.size()))),
                                               random_value(m, path, g, at)));
          break;
        case 2:
          h_.execute(std::make_unique<RemoveNode>(path, n.id));
          break;
        case 3: {
          Node add = make("new" + std::to_string(counter_), pick(2) ? "Relu" : "Neg",
                          {random_value(m, path, g, at)}, {"new_out" + std::to_string(counter_)});
          ++counter_;
          h_.execute(std::make_unique<AddNode>(path, add, at));
          break;
        }
        case 4:
          h_.execute(std::make_unique<SetAttribute>(path, n.id, Attribute::of_int("axis", pick(3) - 1)));
          break;
        default:
          h_.execute(std::make_unique<RenameValue>(path, n.outputs.empty() ? "none" : n.outputs[0],
                                                   "r" + std::to_string(counter_++)));
          break;
      }
    } catch (const CommandError&) {
    }
    return path != GraphPath::main_graph();
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  // A value of graph `g` (at `path`) produced before position `before`, or, inside a subgraph, one of
  // the main graph's produced before the node holding it, as someone wiring forward picks; one time in
  // twenty any value of `g`, which can put it out of order (then checked in full until repaired).
  std::string random_value(const Model& m, const GraphPath& path, const Graph& g, size_t before) {
    int r = pick(20);
    size_t range = r == 0 ? g.nodes.size() : before;
    const Graph* from = &g;
    if (r < 6 && !path.steps.empty()) {
      from = &m.graph;
      range = m.graph.node_index(path.steps.front().node);
    }
    if (range == 0 || range == SIZE_MAX) return "x";
    const Node& n = from->nodes[static_cast<size_t>(pick(static_cast<int>(range)))];
    return n.outputs.empty() ? std::string("x") : n.outputs[0];
  }
  History& h_;
  std::mt19937 rng_;
  int counter_ = 0;
};

TEST(IncrementalCheckNested, EqualsAFullCheckAfterEveryEditInSubgraphsAndFunctions) {
  Model m = nested_model(6);
  ASSERT_EQ(lines(check_model(m)), std::vector<std::string>{}) << "the model starts clean";
  History h(m);
  IncrementalChecker inc;
  inc.reset(m);
  std::vector<Change> pending;
  h.set_listener([&](const std::vector<Change>& c) { pending.insert(pending.end(), c.begin(), c.end()); });
  RandomNestedEdits edits(h, 99);
  int nested = 0, nested_shortcuts = 0;
  for (int i = 0; i < 300; ++i) {
    bool inside = edits.step();
    inc.update(m, pending);
    pending.clear();
    CheckResult full = check_model(m);
    ASSERT_EQ(lines(inc.result()), lines(full)) << "after edit " << i;
    ASSERT_EQ(inc.result().value_types, full.value_types) << "after edit " << i;
    nested += inside;
    nested_shortcuts += inside && inc.last_incremental();
  }
  // Most edits inside bodies take the shortcut (the series breaks the order now and then, and some
  // edits change the symbols a node draws: those are checked in full).
  EXPECT_GT(nested, 100);
  EXPECT_GT(nested_shortcuts, nested / 2);
}

TEST(IncrementalCheckNested, ABodyEditRechecksItsHolderAndWhatReadsItsOutput) {
  Model m = nested_model(20);
  History h(m);
  IncrementalChecker inc;
  inc.reset(m);
  std::vector<Change> pending;
  h.set_listener([&](const std::vector<Change>& c) { pending = c; });
  NodeId loop3 = 0;
  for (const Node& n : m.graph.nodes) {
    if (n.name == "loop3") loop3 = n.id;
  }
  ASSERT_NE(loop3, 0u);
  GraphPath body = GraphPath::main_graph().sub(loop3, "body");

  // A rename inside the body: the Loop is checked again, body included, and the node reading its output
  // (a changed node's consumers always are), nothing further.
  h.execute(std::make_unique<RenameNode>(body, "l_add3", "renamed"));
  inc.update(m, pending);
  EXPECT_TRUE(inc.last_incremental());
  EXPECT_EQ(inc.last_checked_nodes(), 2u);
  EXPECT_EQ(lines(inc.result()), lines(check_model(m)));

  // Adding the int64 iteration number to a float: an error inside the body, under the body's path.
  const Graph& g = resolve_graph(m, body);
  h.execute(std::make_unique<Connect>(body, g.nodes[1].id, 0, "iter3"));
  inc.update(m, pending);
  EXPECT_TRUE(inc.last_incremental());
  CheckResult full = check_model(m);
  EXPECT_EQ(lines(inc.result()), lines(full));
  ASSERT_FALSE(full.diagnostics.items.empty());
  EXPECT_EQ(full.diagnostics.items[0].graph, "main/loop3.body");
  h.undo();
  inc.update(m, pending);
  EXPECT_TRUE(inc.last_incremental());
  EXPECT_EQ(lines(inc.result()), std::vector<std::string>{});

  // Renaming a main node changes the facts of its output (their producer), which if5's branches read by
  // name (not as an input of if5): call5 and if5 are checked again, nothing else.
  h.execute(std::make_unique<RenameNode>(GraphPath::main_graph(), "call5", "called5"));
  inc.update(m, pending);
  EXPECT_TRUE(inc.last_incremental());
  EXPECT_EQ(inc.last_checked_nodes(), 2u);
  EXPECT_EQ(lines(inc.result()), lines(check_model(m)));
}

TEST(IncrementalCheckNested, AFunctionBodyEditRechecksTheBodiesAndTheCalls) {
  Model m = nested_model(20);
  History h(m);
  IncrementalChecker inc;
  inc.reset(m);
  std::vector<Change> pending;
  h.set_listener([&](const std::vector<Change>& c) { pending = c; });
  GraphPath fn = GraphPath::function_body("custom", "Scale");

  // A rename in the body: the bodies and the 20 calls are checked again, and the If reading each call's
  // output by name in its branches (their facts are compared, not assumed): 40.
  h.execute(std::make_unique<RenameNode>(fn, "sq", "square"));
  inc.update(m, pending);
  EXPECT_TRUE(inc.last_incremental());
  EXPECT_EQ(inc.last_checked_nodes(), 40u);
  EXPECT_EQ(lines(inc.result()), lines(check_model(m)));

  // An attribute Mul does not have: the error is listed under the function, as a full check lists it,
  // in the same place.
  h.execute(std::make_unique<SetAttribute>(fn, "square", Attribute::of_int("axis", 1)));
  inc.update(m, pending);
  EXPECT_TRUE(inc.last_incremental());
  CheckResult full = check_model(m);
  EXPECT_EQ(lines(inc.result()), lines(full));
  EXPECT_EQ(inc.result().value_types, full.value_types);
  ASSERT_FALSE(full.diagnostics.items.empty());
  EXPECT_EQ(full.diagnostics.items[0].graph, "function custom.Scale");

  // Changing the function itself (not its body's nodes): the bodies and the calls again, as above.
  Function replaced = m.functions[0];
  replaced.attributes.push_back("alpha");
  h.execute(std::make_unique<ReplaceFunction>(replaced));
  inc.update(m, pending);
  EXPECT_TRUE(inc.last_incremental());
  EXPECT_EQ(inc.last_checked_nodes(), 40u);
  EXPECT_EQ(lines(inc.result()), lines(check_model(m)));

  // A new opset import changes what every node means: checked in full.
  h.execute(std::make_unique<SetOpsetImport>("", 18));
  inc.update(m, pending);
  EXPECT_FALSE(inc.last_incremental());
  EXPECT_EQ(lines(inc.result()), lines(check_model(m)));
}

}  // namespace
}  // namespace tessera::check
