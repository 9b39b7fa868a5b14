// The history's name index (ir/commands/name_index.h): kept exact by the change events of every edit,
// undo and redo, and used by add_node and rename_node to refuse a name in use without a scan.
#include "ir/commands/name_index.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "ir/builder.h"
#include "ir/commands/commands.h"

namespace tessera::ir {
namespace {

const GraphPath kMain = GraphPath::main_graph();

Model small_chain(int nodes) {
  Model m;
  m.ir_version = 8;
  m.opset_imports.push_back({"", 17});
  GraphBuilder b(m.graph);
  std::string v = b.input("x", Type::tensor(DataType::kFloat, Shape{Dim::of(4)}));
  for (int i = 0; i < nodes; ++i) v = b.node("Relu", {v}, {}, "r" + std::to_string(i));
  b.output(v);
  return m;
}

// Whether `index` says what a freshly built one says about every name and id of the model, and about
// names it does not hold.
void expect_same_as_rebuilt(const NameIndex& index, const Model& m, const std::string& after) {
  NameIndex fresh;
  fresh.rebuild(m);
  std::vector<std::string> probes = {"x", "nothing", "n0", "v0", "renamed0"};
  for (const Node& n : m.graph.nodes) {
    probes.push_back(n.name);
    probes.insert(probes.end(), n.outputs.begin(), n.outputs.end());
    ASSERT_TRUE(index.has_node_id(n.id)) << after;
  }
  for (int k = 0; k < 60; ++k) {
    probes.push_back("n" + std::to_string(k));
    probes.push_back("v" + std::to_string(k));
    probes.push_back("renamed" + std::to_string(k));
  }
  for (const std::string& p : probes) {
    ASSERT_EQ(index.has_node_name(p), fresh.has_node_name(p)) << after << ": node name " << p;
    ASSERT_EQ(index.has_value(p), fresh.has_value(p)) << after << ": value " << p;
  }
}

TEST(NameIndex, StaysExactThroughARandomSeriesOfEditsUndosAndRedos) {
  Model m = small_chain(8);
  History h(m);
  NameIndex index;
  index.rebuild(m);
  h.set_listener([&](const std::vector<Change>& c) { index.update(m, c); });
  NameIndex::Active active(index, m);  // once: an index that drifted would not be rebuilt
  std::mt19937 rng(11);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  for (int i = 0; i < 400; ++i) {
    Graph& g = m.graph;
    int what = pick(8);
    try {
      NodeId id =
          g.nodes.empty() ? 0 : g.nodes[static_cast<size_t>(pick(static_cast<int>(g.nodes.size())))].id;
      std::string k = std::to_string(pick(60));
      if (what == 0) {
        Node n;
        n.op_type = "Relu";
        n.name = "n" + k;
        n.inputs = {"x"};
        n.outputs = {"v" + k};
        h.execute(std::make_unique<AddNode>(kMain, n));
      } else if (what == 1 && id) {
        h.execute(std::make_unique<RenameNode>(kMain, id, "renamed" + k));
      } else if (what == 2 && id) {
        h.execute(std::make_unique<RemoveNode>(kMain, id));
      } else if (what == 3 && h.can_undo()) {
        h.undo();
      } else if (what == 4 && h.can_redo()) {
        h.redo();
      } else if (what == 5 && id) {
        h.execute(std::make_unique<SetNodeOutput>(kMain, id, 0, "v" + k));
      } else if (what == 6) {
        h.execute(std::make_unique<AddGraphInput>(
            kMain, ValueInfo{"v" + k, Type::tensor(DataType::kFloat, Shape{Dim::of(4)}), {}, {}}));
      } else if (id) {
        // A batch: its steps are checked without the index, which hears of them at its end.
        std::vector<std::unique_ptr<Command>> steps;
        Node n;
        n.op_type = "Neg";
        n.name = "n" + k;
        n.inputs = {"x"};
        n.outputs = {"v" + k};
        steps.push_back(std::make_unique<AddNode>(kMain, n));
        steps.push_back(std::make_unique<RenameNode>(kMain, id, "n" + k));  // clashes with the step before
        auto batch = std::make_unique<BatchCommand>("two");
        for (auto& s : steps) batch->add(std::move(s));
        h.execute(std::move(batch));
      }
    } catch (const CommandError&) {
    }
    expect_same_as_rebuilt(index, m, "edit " + std::to_string(i));
    // Node names stay unique: a taken name was refused, with or without a scan.
    std::set<std::string> names;
    for (const Node& n : m.graph.nodes) {
      if (!n.name.empty()) {
        ASSERT_TRUE(names.insert(n.name).second) << "edit " << i << ": " << n.name;
      }
    }
  }
}

TEST(NameIndex, RefusesANameInUseWithTheScanningChecksMessage) {
  Model m = small_chain(3);
  History h(m);
  NameIndex index;
  index.rebuild(m);
  h.set_listener([&](const std::vector<Change>& c) { index.update(m, c); });
  NameIndex::Active active(index, m);
  Node n;
  n.op_type = "Relu";
  n.name = "r1";
  n.inputs = {"x"};
  n.outputs = {"fresh"};
  try {
    h.execute(std::make_unique<AddNode>(kMain, n));
    FAIL() << "a second node named r1 was added";
  } catch (const CommandError& e) {
    EXPECT_NE(std::string(e.what()).find("a node named 'r1' already exists"), std::string::npos) << e.what();
  }
  n.name = "new";
  n.outputs = {m.graph.nodes[0].outputs[0]};
  EXPECT_THROW(h.execute(std::make_unique<AddNode>(kMain, n)), CommandError);  // a value in use
  n.outputs = {"fresh"};
  h.execute(std::make_unique<AddNode>(kMain, n));
  EXPECT_TRUE(index.has_node_name("new"));
  EXPECT_TRUE(index.has_value("fresh"));
  EXPECT_THROW(h.execute(std::make_unique<RenameNode>(kMain, "r0", "new")), CommandError);
  h.execute(std::make_unique<RenameNode>(kMain, "new", "newer"));
  EXPECT_FALSE(index.has_node_name("new"));
  h.undo();
  EXPECT_TRUE(index.has_node_name("new"));
  EXPECT_FALSE(index.has_node_name("newer"));
}

}  // namespace
}  // namespace tessera::ir
