// Diagnostics kept up to date edit by edit (check/incremental.h): after every edit of a random series,
// the result equals a fresh full check's, and most edits take the shortcut.
#include "check/incremental.h"

#include <gtest/gtest.h>

#include <random>

#include "ir/builder.h"
#include "ir/commands/commands.h"

namespace tessera::check {
namespace {

using namespace tessera::ir;

// x [?, 8] -> a chain of MatMul, Add, Relu, Shape+Reshape, Transpose blocks (unknown batch: Shape
// makes fresh symbols, so symbol numbering is exercised too).
Model chain_model(int blocks) {
  Model m;
  m.ir_version = 8;
  m.opset_imports.push_back({"", 17});
  GraphBuilder b(m.graph);
  std::string v = b.input("x", Type::tensor(DataType::kFloat, Shape{Dim::unknown(), Dim::of(8)}));
  std::string w =
      b.initializer(make_tensor<float>("W", DataType::kFloat, {8, 8}, std::vector<float>(64, 0.5f)));
  std::string bias = b.initializer(make_tensor<float>("B", DataType::kFloat, {8}, std::vector<float>(8, 1)));
  for (int i = 0; i < blocks; ++i) {
    std::string s = std::to_string(i);
    v = b.node("MatMul", {v, w}, {}, "mm" + s);
    v = b.node("Add", {v, bias}, {}, "add" + s);
    v = b.node("Relu", {v}, {}, "relu" + s);
    std::string shape = b.node("Shape", {v}, {}, "shape" + s);
    v = b.node("Reshape", {v, shape}, {}, "reshape" + s);
    v = b.node("Transpose", {v}, {Attribute::of_ints("perm", {0, 1})}, "tr" + s);
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

class RandomEdits {
 public:
  RandomEdits(History& h, uint32_t seed) : h_(h), rng_(seed) {}

  // One random edit; refused ones (CommandError) are part of the game and change nothing.
  void step() {
    Graph& g = h_.model().graph;
    int what = pick(8);
    try {
      if (what == 6 && h_.can_undo()) return h_.undo();
      if (what == 7 && h_.can_redo()) return h_.redo();
      if (g.nodes.empty()) return;
      size_t at = static_cast<size_t>(pick(static_cast<int>(g.nodes.size())));
      Node& n = g.nodes[at];
      GraphPath main = GraphPath::main_graph();
      switch (what) {
        case 0:
          return h_.execute(std::make_unique<RenameNode>(main, n.id, "n" + std::to_string(counter_++)));
        case 1:
          return h_.execute(std::make_unique<Connect>(main, n.id, 0, random_value(g, at)));
        case 2:
          return h_.execute(std::make_unique<RemoveNode>(main, n.id));
        case 3: {
          Node add;
          add.op_type = pick(2) ? "Relu" : "Neg";
          add.name = "new" + std::to_string(counter_++);
          add.inputs = {random_value(g, at)};
          add.outputs = {add.name + "_out"};
          return h_.execute(std::make_unique<AddNode>(main, add, at));
        }
        case 4:
          return h_.execute(std::make_unique<SetAttribute>(
              main, n.id,
              Attribute::of_ints("perm", pick(2) ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1})));
        default: {
          Node add;
          add.op_type = "Identity";
          add.inputs = {n.outputs.empty() ? "x" : n.outputs[0]};
          add.outputs = {"id" + std::to_string(counter_++)};
          NodeId id = n.id;  // `n` moves when the graph's node list grows
          BatchScope batch(h_, "two");
          h_.execute(std::make_unique<AddNode>(main, add));
          h_.execute(std::make_unique<RenameNode>(main, id, "b" + std::to_string(counter_++)));
          batch.commit();
          return;
        }
      }
    } catch (const CommandError&) {
    }
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  // A value produced before position `before`, as someone wiring a graph forward picks; one time in
  // twenty any value, which can put the graph out of order (then checked in full until repaired).
  std::string random_value(const Graph& g, size_t before) {
    size_t range = pick(20) == 0 ? g.nodes.size() : before;
    if (range == 0 || pick(10) == 0) return "x";
    const Node& n = g.nodes[static_cast<size_t>(pick(static_cast<int>(range)))];
    return n.outputs.empty() ? std::string("x") : n.outputs[0];
  }
  History& h_;
  std::mt19937 rng_;
  int counter_ = 0;
};

TEST(IncrementalCheck, EqualsAFullCheckAfterEveryEditOfARandomSeries) {
  Model m = chain_model(12);
  History h(m);
  IncrementalChecker inc;
  inc.reset(m);
  std::vector<Change> pending;
  h.set_listener([&](const std::vector<Change>& c) { pending.insert(pending.end(), c.begin(), c.end()); });
  RandomEdits edits(h, 1234);
  int shortcuts = 0;
  size_t checked = 0;
  for (int i = 0; i < 300; ++i) {
    edits.step();
    inc.update(m, pending);
    pending.clear();
    CheckResult full = check_model(m);
    ASSERT_EQ(lines(inc.result()), lines(full)) << "after edit " << i;
    ASSERT_EQ(inc.result().value_types, full.value_types) << "after edit " << i;
    shortcuts += inc.last_incremental();
    checked += inc.last_checked_nodes();
  }
  // The series breaks the graph's order now and then (a full check each time until repaired), but
  // most edits re-check a few nodes only.
  EXPECT_GT(shortcuts, 100);
  EXPECT_LT(checked, 300u * m.graph.nodes.size() / 3);
}

TEST(IncrementalCheck, AnEditRechecksTheNodeAndOnlyConsumersWhoseInputsChanged) {
  Model m = chain_model(20);
  History h(m);
  IncrementalChecker inc;
  inc.reset(m);
  EXPECT_FALSE(inc.last_incremental());
  std::vector<Change> pending;
  h.set_listener([&](const std::vector<Change>& c) { pending = c; });
  // A rename changes the producer name its consumer sees, nothing further.
  h.execute(std::make_unique<RenameNode>(GraphPath::main_graph(), "relu3", "renamed"));
  inc.update(m, pending);
  EXPECT_TRUE(inc.last_incremental());
  EXPECT_EQ(inc.last_checked_nodes(), 3u);  // relu3, and shape3 and reshape3, which read its output
  EXPECT_EQ(lines(inc.result()), lines(check_model(m)));
  // A graph input's new type is not a node edit: everything is checked again.
  h.execute(std::make_unique<SetValueInfo>(
      GraphPath::main_graph(),
      ValueInfo{"x", Type::tensor(DataType::kFloat, Shape{Dim::of(2), Dim::of(8)}), {}, {}}));
  inc.update(m, pending);
  EXPECT_FALSE(inc.last_incremental());
  EXPECT_EQ(lines(inc.result()), lines(check_model(m)));
  EXPECT_EQ(inc.result().value_types, check_model(m).value_types);
}

}  // namespace
}  // namespace tessera::check
