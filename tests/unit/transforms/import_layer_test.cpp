// import-layer as a library: the imported model runs as a layer with the same results, undo, refusals.
#include "transforms/import_layer.h"

#include <gtest/gtest.h>

#include "check/checker.h"
#include "ir/builder.h"
#include "ir/commands/commands.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

ir::Type F(std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(ir::Dim::of(d));
  return ir::Type::tensor(ir::DataType::kFloat, s);
}

// x [2,8] -> MatMul(w) -> Add(b) -> Tanh -> y [2,4]
ir::Model layer_model() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  m.graph.name = "layer";
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({2, 8}));
  std::string mm = b.node("MatMul", {x, b.random_normal("w", {8, 4}, 0.5f)}, {}, "mm");
  std::string add = b.node("Add", {mm, b.random_normal("b", {4}, 0.5f)}, {}, "add");
  b.output(b.node("Tanh", {add}, {}, "tanh"), F({2, 4}));
  return m;
}

// input [2,8] -> Relu -> r (output)
ir::Model host_model() {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string in = b.input("input", F({2, 8}));
  b.output(b.node("Relu", {in}, {}, "relu"), F({2, 8}));
  return m;
}

TEST(ImportLayer, ImportedModelRunsAsALayer) {
  ir::Model m = host_model();
  ir::Model original = m;
  ir::History h(m);
  Report r = import_layer(h, layer_model(), {"Dense", "local"});
  EXPECT_EQ(r.get("initializers carried as constants"), 2);
  ASSERT_NE(m.find_function("local", "Dense"), nullptr);
  EXPECT_EQ(m.opset_version("local"), 1);
  // Use it: input -> Dense -> z.
  ir::Node call;
  call.name = "dense";
  call.op_type = "Dense";
  call.domain = "local";
  call.inputs = {"input"};
  call.outputs = {"z"};
  h.execute(std::make_unique<ir::AddNode>(ir::GraphPath::main_graph(), call));
  h.execute(std::make_unique<ir::AddGraphOutput>(ir::GraphPath::main_graph(),
                                                 ir::ValueInfo{"z", F({2, 4}), {}, {}}));
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  auto feeds = test::feeds_for(m, 3);
  ir::Model layer = layer_model();
  std::vector<std::pair<std::string, rt::Value>> layer_feeds = {{"x", feeds[0].second}};
  EXPECT_EQ(test::run_model(m, feeds)[1], test::run_model(layer, layer_feeds)[0]);
  h.undo();
  h.undo();
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(ImportLayer, Refusals) {
  ir::Model m = host_model();
  ir::History h(m);
  import_layer(h, layer_model(), {"Dense", "local"});
  try {
    import_layer(h, layer_model(), {"Dense", "local"});
    FAIL();
  } catch (const TransformError& e) {
    EXPECT_EQ(std::string(e.what()), "the model already has a function 'local:Dense'");
  }
  ir::Model old = host_model();
  old.ir_version = 7;
  ir::History h7(old);
  EXPECT_THROW(import_layer(h7, layer_model(), {"Dense", "local"}), TransformError);
  EXPECT_EQ(h7.undo_count(), 0u);
}

}  // namespace
}  // namespace tessera::transforms
