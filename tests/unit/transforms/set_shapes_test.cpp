// tessera set-shapes as a library.
#include "transforms/set_shapes.h"

#include <gtest/gtest.h>

#include "check/checker.h"
#include "ir/builder.h"
#include "ir/commands/history.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

using ir::DataType;
using ir::Dim;

// x [?, 3, ?, ?] -> Conv (3 -> 2 channels, 1x1) -> Relu -> GlobalAveragePool -> Flatten -> y
ir::Model image_model() {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", ir::Type::tensor(DataType::kFloat, ir::Shape{Dim::unknown(), Dim::of(3),
                                                                            Dim::unknown(), Dim::unknown()}));
  std::string w = b.random_normal("w", {2, 3, 1, 1}, 1.0f);
  std::string conv = b.node("Conv", {x, w}, {}, "conv");
  std::string r = b.node("Relu", {conv}, {}, "relu");
  std::string p = b.node("GlobalAveragePool", {r}, {}, "pool");
  b.output(b.node("Flatten", {p}, {}, "flat"), ir::Type::tensor(DataType::kFloat));
  return m;
}

TEST(SetShapes, StoresEveryIntermediateType) {
  ir::Model m = image_model();
  ir::Model original = m;
  ir::History h(m);
  SetShapesOptions o;
  o.shapes = {{"x", *parse_shape("1x3x224x224")}};
  o.dim_params = {{"x", 0, "batch"}};
  Report r = set_shapes(h, o);
  EXPECT_EQ(m.graph.inputs[0].type.to_string(), "tensor(float)[batch,3,224,224]");
  ASSERT_EQ(m.graph.value_info.size(), 3u);
  EXPECT_EQ(m.graph.value_info[0].type.to_string(), "tensor(float)[batch,2,224,224]");
  EXPECT_EQ(m.graph.value_info[1].type.to_string(), "tensor(float)[batch,2,224,224]");
  EXPECT_EQ(m.graph.value_info[2].type.to_string(), "tensor(float)[batch,2,1,1]");
  EXPECT_EQ(m.graph.outputs[0].type.to_string(), "tensor(float)[batch,2]");
  EXPECT_EQ(r.get("value types stored"), 3);
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(SetShapes, ParsesShapes) {
  EXPECT_EQ(ir::shape_to_string(*parse_shape("batchx3x224x224")), "[batch,3,224,224]");
  EXPECT_EQ(ir::shape_to_string(*parse_shape("max_len,8")), "[max_len,8]");
  EXPECT_TRUE(parse_shape("")->empty());
  EXPECT_FALSE(parse_shape("1xx3"));
  EXPECT_FALSE(parse_shape("-1x3"));
}

TEST(SetShapes, Refusals) {
  ir::Model m = image_model();
  ir::Model original = m;
  ir::History h(m);
  auto refuse = [&](SetShapesOptions o, const std::string& msg) {
    try {
      set_shapes(h, o);
      ADD_FAILURE() << "expected: " << msg;
    } catch (const TransformError& e) {
      EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << e.what();
    }
    EXPECT_TRUE(m == original);
  };
  refuse({{{"image", *parse_shape("1x3x8x8")}}, {}},
         "--shape names 'image', which is not an input of the model (inputs: x)");
  refuse({{}, {{"x", 4, "batch"}}}, "--dim-param: axis 4 is out of range for input 'x' of rank 4");
  refuse({{{"x", *parse_shape("1x4x8x8")}}, {}}, "with these input shapes the model does not type-check");
}

}  // namespace
}  // namespace tessera::transforms
