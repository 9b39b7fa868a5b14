// tessera convert tensors as a library: selection by expression, lossy changes reported, exact undo.
#include "transforms/convert_tensors.h"

#include <gtest/gtest.h>

#include "check/checker.h"
#include "ir/builder.h"
#include "ir/commands/history.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

using ir::Attribute;
using ir::DataType;

// y = Add(x, Cast(w64, to=float)) with w64 a double initializer; Clip's bounds from double Constants.
ir::Model double_weights_model() {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", ir::Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(4)}));
  std::string w =
      b.initializer(ir::make_tensor<double>("w64", DataType::kDouble, {4}, {0.1, 0.2, 1.0 / 3, 4}));
  std::string c = b.node("Cast", {w}, {Attribute::of_int("to", 1)}, "cast");
  std::string k =
      b.node("Constant", {},
             {Attribute::of_tensor("value", ir::make_tensor<double>("", DataType::kDouble, {}, {0.5}))}, "k");
  std::string kc = b.node("Cast", {k}, {Attribute::of_int("to", 1)}, "kcast");
  std::string y = b.node("Add", {x, c}, {}, "add");
  b.output(b.node("Mul", {y, kc}, {}, "mul"), ir::Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(4)}));
  return m;
}

TEST(ConvertTensors, ConvertsSelectedInitializersAndReportsLoss) {
  ir::Model m = double_weights_model();
  ir::Model original = m;
  ir::History h(m);
  TensorConvertOptions o;
  o.from = DataType::kDouble;
  o.to = DataType::kFloat;
  o.initializers = "^w";
  Report r = convert_tensors(h, o);
  EXPECT_EQ(m.graph.find_initializer("w64")->dtype, DataType::kFloat);
  EXPECT_EQ(r.get("tensors converted"), 1);
  EXPECT_EQ(r.get("elements changed"), 3);  // 0.1, 0.2 and 1/3 are not floats; 4 is
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("main: initializer 'w64': 3 of 4 elements changed, largest change"),
            std::string::npos);
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  // The Constant was not selected.
  EXPECT_EQ(m.graph.nodes[1].attr("value")->tensors[0].dtype, DataType::kDouble);
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(ConvertTensors, AttributesByNodeAndName) {
  ir::Model m = double_weights_model();
  ir::History h(m);
  TensorConvertOptions o;
  o.from = DataType::kDouble;
  o.to = DataType::kFloat;
  o.attributes = "^k\\.value$";
  Report r = convert_tensors(h, o);
  EXPECT_EQ(r.get("tensors converted"), 1);
  EXPECT_EQ(r.get("elements changed"), 0);  // 0.5 is exact
  EXPECT_EQ(m.graph.nodes[1].attr("value")->tensors[0].dtype, DataType::kFloat);
  EXPECT_EQ(m.graph.find_initializer("w64")->dtype, DataType::kDouble);  // not selected
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
}

TEST(ConvertTensors, ListAttributesBetweenFloatsAndInts) {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  b.node("Constant", {}, {Attribute::of_floats("value_floats", {1.0f, 2.5f})}, "c");
  ir::History h(m);
  TensorConvertOptions o;
  o.from = DataType::kFloat;
  o.to = DataType::kInt64;
  o.attributes = "value_floats";
  Report r = convert_tensors(h, o);
  const ir::Attribute& a = m.graph.nodes[0].attributes[0];
  EXPECT_EQ(a.type, ir::AttrType::kInts);
  EXPECT_EQ(a.ints, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r.get("elements changed"), 1);
  h.undo();
  EXPECT_EQ(m.graph.nodes[0].attributes[0].floats, (std::vector<float>{1.0f, 2.5f}));
}

TEST(ConvertTensors, BadExpressionIsAnErrorAndChangesNothing) {
  ir::Model m = double_weights_model();
  ir::Model original = m;
  ir::History h(m);
  TensorConvertOptions o;
  o.from = DataType::kDouble;
  o.to = DataType::kFloat;
  o.initializers = "([";
  try {
    convert_tensors(h, o);
    FAIL();
  } catch (const TransformError& e) {
    EXPECT_NE(std::string(e.what()).find("--initializers '([' is not a valid regular expression"),
              std::string::npos);
  }
  EXPECT_TRUE(m == original);
  EXPECT_EQ(h.undo_count(), 0u);
}

}  // namespace
}  // namespace tessera::transforms
