// Incremental diagnostics for edits of the main graph's values and of the model's functions
// (check/incremental.h): graph inputs, initializers, graph outputs, value_info, local functions added,
// removed or replaced. After every edit of a random series mixing them with node edits, the result
// equals a fresh full check's, and most edits take the shortcut.
#include <gtest/gtest.h>

#include <random>

#include "check/incremental.h"
#include "ir/builder.h"
#include "ir/commands/commands.h"

namespace tessera::check {
namespace {

using namespace tessera::ir;

std::vector<std::string> lines(const CheckResult& r) {
  std::vector<std::string> out;
  for (const Diagnostic& d : r.diagnostics.items)
    out.push_back(d.to_string() + " @" + std::to_string(d.node_index));
  return out;
}

Type floats(std::vector<int64_t> dims) {
  Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return Type::tensor(DataType::kFloat, s);
}

Tensor filled(const std::string& name, std::vector<int64_t> dims, float v) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return make_tensor<float>(name, DataType::kFloat, std::move(dims), std::vector<float>(n, v));
}

Function scale_function() {
  Function f;
  f.domain = "custom";
  f.name = "Scale";
  f.opset_imports = {{"", 17}};
  f.body.name = "Scale";
  f.body.inputs = {ValueInfo{"X", {}, {}, {}}};
  f.body.outputs = {ValueInfo{"Y", {}, {}, {}}};
  Node sq;
  sq.name = "sq";
  sq.op_type = "Mul";
  sq.inputs = {"X", "X"};
  sq.outputs = {"Y"};
  f.body.add_node(sq);
  return f;
}

// x [4, 8] -> blocks of MatMul(W), Add(B), Relu and a call of custom.Scale; value_info for each Relu.
Model values_model(int blocks) {
  Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}, {"custom", 1}};
  m.functions.push_back(scale_function());
  GraphBuilder b(m.graph);
  std::string v = b.input("x", floats({4, 8}));
  b.initializer(filled("W", {8, 8}, 0.5f));
  b.initializer(filled("B", {8}, 1.0f));
  for (int i = 0; i < blocks; ++i) {
    std::string s = std::to_string(i);
    v = b.node("MatMul", {v, "W"}, {}, "mm" + s);
    v = b.node("Add", {v, "B"}, {}, "add" + s);
    v = b.node("Relu", {v}, {}, "relu" + s);
    m.graph.value_info.push_back(ValueInfo{v, floats({4, 8}), {}, {}});
    v = b.nodes("Scale", {v}, {}, "call" + s, 1, "custom")[0];
  }
  b.output(v, floats({4, 8}));
  return m;
}

class RandomValueEdits {
 public:
  RandomValueEdits(History& h, uint32_t seed) : h_(h), rng_(seed) {}

  void step() {
    Model& m = h_.model();
    Graph& g = m.graph;
    GraphPath main = GraphPath::main_graph();
    int what = pick(15);
    try {
      switch (what) {
        case 0:  // a new initializer, sometimes named like a graph input (it then gives its default)
          return h_.execute(std::make_unique<AddInitializer>(
              main, filled(pick(4) ? "i" + std::to_string(counter_++) : "x", {pick(2) ? 8 : 4, 8}, 0.25f)));
        case 1:  // new values, or a shape that no longer fits its readers
          return h_.execute(
              std::make_unique<ReplaceInitializer>(main, pick(2) ? filled("B", {pick(2) ? 8 : 3}, 2.0f)
                                                                 : filled("W", {8, pick(2) ? 8 : 5}, 0.1f)));
        case 2:
          if (g.initializers.empty()) return;
          return h_.execute(
              std::make_unique<RemoveInitializer>(main, g.initializers[pick_in(g.initializers)].name));
        case 3: {  // a graph input: new, overriding an initializer, or named like a node output (refused
                   // by the command or checked in full)
          std::string name = pick(3) == 0   ? "W"
                             : pick(5) == 0 ? random_output(g)
                                            : "in" + std::to_string(counter_++);
          return h_.execute(std::make_unique<AddGraphInput>(main, ValueInfo{name, floats({8, 8}), {}, {}}));
        }
        case 4:
          if (g.inputs.size() < 2) return;
          return h_.execute(std::make_unique<RemoveGraphInput>(main, g.inputs[pick_in(g.inputs)].name));
        case 5: {  // a declared type: of the graph input x, of a node output, right or wrong
          std::string name = pick(4) == 0 ? "x" : random_output(g);
          Type t =
              pick(3) == 0 ? Type::tensor(DataType::kInt64, Shape{Dim::of(4)}) : floats({4, pick(2) ? 8 : 2});
          return h_.execute(std::make_unique<SetValueInfo>(main, ValueInfo{name, t, {}, {}}));
        }
        case 6:
          if (g.value_info.empty()) return;
          return h_.execute(
              std::make_unique<RemoveValueInfo>(main, g.value_info[pick_in(g.value_info)].name));
        case 7:
          return h_.execute(std::make_unique<AddGraphOutput>(
              main,
              ValueInfo{pick(6) ? random_output(g) : "nowhere", pick(2) ? Type{} : floats({4, 8}), {}, {}}));
        case 8:
          if (g.outputs.size() < 2) return;
          return h_.execute(std::make_unique<RemoveGraphOutput>(main, g.outputs[pick_in(g.outputs)].name));
        case 9:  // the function the calls need: removed, added back, replaced by a different body
          if (m.functions.empty()) return h_.execute(std::make_unique<AddFunction>(scale_function()));
          if (pick(2)) return h_.execute(std::make_unique<RemoveFunction>("custom", "Scale"));
          {
            Function f = scale_function();
            f.body.nodes[0].op_type = pick(2) ? "Add" : "Transpose";
            return h_.execute(std::make_unique<ReplaceFunction>(f));
          }
        case 10: {  // a node reads a graph value
          if (g.nodes.empty()) return;
          static const char* kValues[] = {"x", "W", "B", "i0", "in1"};
          const Node& n = g.nodes[pick_in(g.nodes)];
          return h_.execute(std::make_unique<Connect>(main, n.id, pick(2), kValues[pick(5)]));
        }
        case 11: {
          if (g.nodes.empty()) return;
          const Node& n = g.nodes[pick_in(g.nodes)];
          return h_.execute(std::make_unique<RenameNode>(main, n.id, "n" + std::to_string(counter_++)));
        }
        case 12: {
          ModelMetadata md;
          md.doc_string = "edit " + std::to_string(counter_++);
          return h_.execute(std::make_unique<SetModelMetadata>(std::move(md)));
        }
        case 13:
          if (h_.can_undo()) h_.undo();
          return;
        default:
          if (h_.can_redo()) h_.redo();
          return;
      }
    } catch (const CommandError&) {
    }
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  template <class V>
  size_t pick_in(const V& v) {
    return static_cast<size_t>(pick(static_cast<int>(v.size())));
  }
  std::string random_output(const Graph& g) {
    if (g.nodes.empty()) return "x";
    const Node& n = g.nodes[pick_in(g.nodes)];
    return n.outputs.empty() || n.outputs[0].empty() ? std::string("x") : n.outputs[0];
  }
  History& h_;
  std::mt19937 rng_;
  int counter_ = 0;
};

TEST(IncrementalCheckValues, EqualsAFullCheckAfterEveryEditOfARandomSeries) {
  Model m = values_model(10);
  History h(m);
  IncrementalChecker inc;
  inc.reset(m);
  std::vector<Change> pending;
  h.set_listener([&](const std::vector<Change>& c) { pending.insert(pending.end(), c.begin(), c.end()); });
  int shortcuts = 0;
  size_t checked = 0;
  for (uint32_t seed : {7u, 2026u}) {
    RandomValueEdits edits(h, seed);
    for (int i = 0; i < 250; ++i) {
      edits.step();
      inc.update(m, pending);
      pending.clear();
      CheckResult full = check_model(m);
      ASSERT_EQ(lines(inc.result()), lines(full)) << "seed " << seed << ", after edit " << i;
      ASSERT_EQ(inc.result().value_types, full.value_types) << "seed " << seed << ", after edit " << i;
      shortcuts += inc.last_incremental();
      checked += inc.last_checked_nodes();
    }
  }
  // Some edits make the graph unusable for the shortcut (a node output named like a graph input) until
  // undone, but most re-check a part of the graph only.
  EXPECT_GT(shortcuts, 250);
  EXPECT_LT(checked, 500u * m.graph.nodes.size() / 2);
}

TEST(IncrementalCheckValues, EachKindOfEditRechecksOnlyWhatReadsOrDeclaresIt) {
  Model m = values_model(10);
  History h(m);
  IncrementalChecker inc;
  inc.reset(m);
  std::vector<Change> pending;
  h.set_listener([&](const std::vector<Change>& c) { pending = c; });
  GraphPath main = GraphPath::main_graph();
  auto update = [&](size_t expect_checked) {
    inc.update(m, pending);
    EXPECT_TRUE(inc.last_incremental());
    EXPECT_EQ(inc.last_checked_nodes(), expect_checked);
    CheckResult full = check_model(m);
    EXPECT_EQ(lines(inc.result()), lines(full));
    EXPECT_EQ(inc.result().value_types, full.value_types);
  };
  // New values of B (same type): its 10 Adds read it (a constant's facts are its bytes).
  h.execute(std::make_unique<ReplaceInitializer>(main, filled("B", {8}, 3.0f)));
  update(10);
  // An unused initializer: nothing reads it.
  h.execute(std::make_unique<AddInitializer>(main, filled("unused", {2}, 0.0f)));
  update(0);
  // B of the wrong length: the Adds report it, and everything after the first is checked again.
  h.execute(std::make_unique<ReplaceInitializer>(main, filled("B", {3}, 1.0f)));
  inc.update(m, pending);
  EXPECT_TRUE(inc.last_incremental());
  EXPECT_FALSE(inc.result().diagnostics.items.empty());
  EXPECT_EQ(lines(inc.result()), lines(check_model(m)));
  h.undo();
  inc.update(m, pending);
  EXPECT_TRUE(inc.last_incremental());
  EXPECT_EQ(lines(inc.result()), lines(check_model(m)));
  // A value_info that disagrees with relu4's output: relu4, and call4, which reads it.
  h.execute(std::make_unique<SetValueInfo>(main, ValueInfo{"relu4", floats({4, 2}), {}, {}}));
  update(2);
  EXPECT_FALSE(inc.result().diagnostics.items.empty());
  h.execute(std::make_unique<RemoveValueInfo>(main, "relu4"));
  update(2);
  // A graph output for a value in the middle: its producer (its declared type) and its reader.
  h.execute(std::make_unique<AddGraphOutput>(main, ValueInfo{"add3", floats({4, 8}), {}, {}}));
  update(2);
  // A graph input overriding W: the MatMuls read it (no longer a constant).
  h.execute(std::make_unique<AddGraphInput>(main, ValueInfo{"W", floats({8, 8}), {}, {}}));
  update(10);
  // The function removed: its 10 calls report an unknown operator, and what reads their outputs (now of
  // unknown type) is checked again; added back, the same 36 nodes.
  h.execute(std::make_unique<RemoveFunction>("custom", "Scale"));
  update(36);
  EXPECT_FALSE(inc.result().diagnostics.items.empty());
  h.undo();
  update(36);
  EXPECT_TRUE(inc.result().diagnostics.items.empty());
}

}  // namespace
}  // namespace tessera::check
