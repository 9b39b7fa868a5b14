// tessera convert fp16/bf16 as a library: what is converted where, the Casts it adds, numerical
// agreement with float32, undo, and the refusals.
#include "transforms/float16.h"

#include <gtest/gtest.h>

#include <cmath>

#include "check/checker.h"
#include "ir/builder.h"
#include "ir/commands/history.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

using ir::DataType;
using test::control_flow_model;

const ir::Node* node(const ir::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

const ir::Graph& sub(const ir::Graph& g, const std::string& node_name, const std::string& attr) {
  return *node(g, node_name)->attr(attr)->graphs[0];
}

TEST(Float16, ConvertsEveryScopeAndStillChecks) {
  ir::Model m = control_flow_model();
  Report r;
  ir::Model out = convert_float_copy(m, {}, r);
  EXPECT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  EXPECT_EQ(out.graph.find_initializer("w")->dtype, DataType::kFloat16);
  EXPECT_EQ(node(out.graph, "c")->attr("value")->tensors[0].dtype, DataType::kFloat16);
  EXPECT_EQ(sub(out.graph, "if", "else_branch").initializers[0].dtype, DataType::kFloat16);
  EXPECT_EQ(node(sub(out.graph, "loop", "body"), "half")->attr("value")->tensors[0].dtype,
            DataType::kFloat16);
  EXPECT_EQ(sub(out.graph, "loop", "body").inputs[2].type.elem, DataType::kFloat16);
  EXPECT_EQ(node(out.functions[0].body, "two")->attr("value")->tensors[0].dtype, DataType::kFloat16);
  EXPECT_EQ(out.graph.inputs[0].type.elem, DataType::kFloat16);
  EXPECT_EQ(out.graph.outputs[0].type.elem, DataType::kFloat16);
  // The model's Cast to float would now be float16 -> float16 when it writes a graph output: it is kept
  // and retargeted (a graph output keeps its producer).
  EXPECT_EQ(node(out.graph, "cast")->attr("to")->i, static_cast<int64_t>(DataType::kFloat16));
  EXPECT_EQ(r.get("Casts added"), 0);
  EXPECT_EQ(r.get("nodes kept float32"), 0);
  EXPECT_TRUE(test::no_cast_pairs(out));
}

double tolerance_ok(const std::vector<std::vector<double>>& ref, const std::vector<std::vector<double>>& got,
                    double rtol, double atol) {
  double worst = 0;
  for (size_t k = 0; k < ref.size(); ++k)
    for (size_t i = 0; i < ref[k].size(); ++i) {
      double err = std::fabs(ref[k][i] - got[k][i]) - rtol * std::fabs(ref[k][i]);
      worst = std::max(worst, err / atol);
    }
  return worst;  // <= 1 when every element is within atol + rtol * |ref|
}

// float16 keeps 11 significant bits: unit roundoff 2^-11 = 4.9e-4. The model rounds the weights and
// inputs once, accumulates 4 products, and then runs 6 more elementwise steps, so each output carries
// about 12 roundings: 12 * 4.9e-4 = 5.9e-3 relative. We allow 1e-2 relative plus 1e-3 absolute (for
// softmax outputs near zero).
TEST(Float16, KeepIoTypesMatchesFloat32WithinTolerance) {
  ir::Model m = control_flow_model();
  Report r;
  FloatConvertOptions o;
  o.keep_io_types = true;
  ir::Model out = convert_float_copy(m, o, r);
  EXPECT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  EXPECT_EQ(out.graph.inputs[0].type.elem, DataType::kFloat);
  EXPECT_EQ(out.graph.outputs[0].type.elem, DataType::kFloat);
  // One Cast on the way in; the model's own Cast writes the float32 output.
  EXPECT_EQ(r.get("Casts added"), 1);
  EXPECT_EQ(node(out.graph, "cast")->attr("to")->i, static_cast<int64_t>(DataType::kFloat));
  EXPECT_TRUE(test::no_cast_pairs(out));
  for (unsigned seed : {1u, 2u, 3u}) {
    auto feeds = test::feeds_for(m, seed);
    EXPECT_LE(tolerance_ok(test::run_model(m, feeds), test::run_model(out, feeds), 1e-2, 1e-3), 1.0) << seed;
  }
}

// bfloat16 keeps 8 significant bits: unit roundoff 2^-8 = 3.9e-3, 12 roundings = 4.7e-2; allowed
// 6e-2 relative plus 1e-2 absolute.
TEST(Float16, Bfloat16WithinTolerance) {
  ir::Model m = control_flow_model();
  Report r;
  FloatConvertOptions o;
  o.to = DataType::kBFloat16;
  o.keep_io_types = true;
  ir::Model out = convert_float_copy(m, o, r);
  ASSERT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_EQ(out.graph.find_initializer("w")->dtype, DataType::kBFloat16);
  auto feeds = test::feeds_for(m, 7);
  EXPECT_LE(tolerance_ok(test::run_model(m, feeds), test::run_model(out, feeds), 6e-2, 1e-2), 1.0);
}

TEST(Float16, BlockedNodesShareOneCastPerEdge) {
  ir::Model m = control_flow_model();
  Report r;
  FloatConvertOptions o;
  o.keep_io_types = true;
  o.node_block_list = {"add", "softmax"};  // a float32 island between MatMul and If
  ir::Model out = convert_float_copy(m, o, r);
  ASSERT_FALSE(check::check_model(out).diagnostics.has_errors()) << r.details.size();
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  EXPECT_TRUE(test::no_cast_pairs(out));
  EXPECT_EQ(r.get("nodes kept float32"), 2);
  // In: x -> float16 for MatMul; MatMul's output back to float32 for 'add'. The Constant 'c' read only
  // by 'add' stays float32 (no Cast). Out: softmax -> float16 in each branch of If that reads it (only
  // one branch runs, so converting there costs no more than converting before the If).
  EXPECT_EQ(r.get("Casts added"), 4);
  EXPECT_EQ(node(out.graph, "c")->attr("value")->tensors[0].dtype, DataType::kFloat);
  auto feeds = test::feeds_for(m, 5);
  auto ref = test::run_model(m, feeds);
  auto got = test::run_model(out, feeds);
  EXPECT_LE(tolerance_ok(ref, got, 1e-2, 1e-3), 1.0);
}

TEST(Float16, OpBlockListInsideSubgraphs) {
  ir::Model m = control_flow_model();
  Report r;
  FloatConvertOptions o;
  o.op_block_list = {"Relu"};  // inside If's then branch; reads the outer softmax
  ir::Model out = convert_float_copy(m, o, r);
  ASSERT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  EXPECT_TRUE(test::no_cast_pairs(out));
  const ir::Graph& then = sub(out.graph, "if", "then_branch");
  EXPECT_EQ(test::count_op(out, "Cast"), 3);  // the model's, and into and out of Relu in the branch
  EXPECT_EQ(then.nodes.size(), 3u);
  EXPECT_EQ(then.outputs[0].type.elem, DataType::kFloat16);
}

// x [batch, 1000]: n = Cast(Shape(x)[0]) to float * 1000 (100,000 for a batch of 100: beyond float16's
// 65,504), Cast back to int64, the reshape target [n, -1]; and a scale 1 / sqrt(Cast(Shape(x)[1])) that
// multiplies the data. The first computes integers in float and must stay float32; the second is data.
ir::Model float_shape_model() {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  auto X = ir::Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::symbol("batch"), ir::Dim::of(1000)});
  std::string x = b.input("x", X);
  auto scalar = [&](const std::string& name, float v) {
    return b.initializer(ir::make_tensor<float>(name, DataType::kFloat, {}, {v}));
  };
  auto to = [](DataType t) { return ir::Attribute::of_int("to", static_cast<int64_t>(t)); };
  std::string s = b.node("Shape", {x}, {}, "shape");
  std::string n = b.node("Gather", {s, b.constant_ints("i0", {0})}, {}, "batch");
  std::string nf = b.node("Cast", {n}, {to(DataType::kFloat)}, "batch_float");
  std::string big = b.node("Mul", {nf, scalar("k1000", 1000.f)}, {}, "times_1000");
  std::string back = b.node("Cast", {big}, {to(DataType::kInt64)}, "back_to_int");
  std::string target =
      b.node("Concat", {back, b.constant_ints("minus1", {-1})}, {ir::Attribute::of_int("axis", 0)}, "target");
  std::string r = b.node("Reshape", {x, target}, {}, "reshape");
  std::string w = b.node("Gather", {s, b.constant_ints("i1", {1})}, {}, "width");
  std::string wf = b.node("Cast", {w}, {to(DataType::kFloat)}, "width_float");
  std::string scale = b.node("Div", {scalar("one", 1.f), b.node("Sqrt", {wf}, {}, "sqrt")}, {}, "scale");
  b.output(b.node("Mul", {r, scale}, {}, "y"),
           ir::Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::symbol("n"), ir::Dim::symbol("m")}));
  return m;
}

TEST(Float16, IntegerValuesComputedInFloatStayFloat32) {
  ir::Model m = float_shape_model();
  Report r;
  FloatConvertOptions o;
  o.keep_io_types = true;
  ir::Model out = convert_float_copy(m, o, r);
  EXPECT_EQ(r.get("shape arithmetic kept float32"), 3);  // batch_float, times_1000, back_to_int
  EXPECT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  auto cast_to = [&](const std::string& name) { return node(out.graph, name)->attr("to")->i; };
  EXPECT_EQ(cast_to("batch_float"), static_cast<int64_t>(DataType::kFloat));
  EXPECT_EQ(cast_to("width_float"), static_cast<int64_t>(DataType::kFloat16));  // the scale is data
  EXPECT_EQ(out.graph.find_initializer("k1000")->dtype, DataType::kFloat);
  // A batch of 100: 100,000 overflows float16; the float32 island keeps it, the output is [100000, 1].
  std::vector<std::pair<std::string, rt::Value>> feeds = {
      {"x", rt::Tensor::from_vector<float>(DataType::kFloat, {100, 1000}, std::vector<float>(100000, 0.5f))}};
  auto want = test::run_model(m, feeds), got = test::run_model(out, feeds);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].size(), want[0].size());
  for (size_t i = 0; i < want[0].size(); ++i)
    ASSERT_NEAR(got[0][i], want[0][i], 1e-3 * std::fabs(want[0][i]));
}

TEST(Float16, UndoRestoresTheModel) {
  ir::Model m = control_flow_model();
  ir::Model original = m;
  ir::History h(m);
  FloatConvertOptions o;
  o.keep_io_types = true;
  o.node_block_list = {"softmax"};
  Report r = convert_float(h, o);
  EXPECT_FALSE(m == original);
  EXPECT_EQ(h.undo_count(), 1u);
  EXPECT_EQ(h.undo_description(), "Convert to float16");
  h.undo();
  EXPECT_TRUE(m == original);
  h.redo();
  EXPECT_EQ(m.graph.find_initializer("w")->dtype, DataType::kFloat16);
}

TEST(Float16, MissingBlockedNodeIsAnErrorAndChangesNothing) {
  ir::Model m = control_flow_model();
  ir::Model original = m;
  ir::History h(m);
  FloatConvertOptions o;
  o.node_block_list = {"softmax", "no_such_node"};
  try {
    convert_float(h, o);
    FAIL() << "expected an error";
  } catch (const TransformError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--node-block-list names node 'no_such_node', which is not in the model");
  }
  EXPECT_TRUE(m == original);
  EXPECT_EQ(h.undo_count(), 0u);
}

TEST(Float16, ANodeInsideALocalFunctionCanStayFloat32) {
  // The body of custom.Scale (Y = Mul(X, Constant 2)) is typed from its call: the Mul stays float32
  // behind Casts inside the body, every call still passes and gets float16.
  ir::Model m = control_flow_model();
  Report r;
  FloatConvertOptions o;
  o.keep_io_types = true;
  o.node_block_list = {"Y"};
  ir::Model out = convert_float_copy(m, o, r);
  EXPECT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  const ir::Function& f = out.functions.at(0);
  const ir::Node* mul = nullptr;
  int casts = 0;
  for (const auto& n : f.body.nodes) {
    if (n.name == "Y") mul = &n;
    casts += n.op_type == "Cast";
  }
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(casts, 2);  // float16 X in, float32 product out
  const ir::Node* two = nullptr;
  for (const auto& n : f.body.nodes)
    if (n.name == "two") two = &n;
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->attr("value")->tensors.at(0).dtype, DataType::kFloat);  // read only in float32: stays
  auto feeds = test::feeds_for(m, 3);
  EXPECT_LE(tolerance_ok(test::run_model(m, feeds), test::run_model(out, feeds), 1e-2, 1e-3), 1.0);
}

TEST(Float16, AFunctionBodyNodeOfAFunctionNeverCalledCannotBeBlocked) {
  ir::Model m = control_flow_model();
  ir::Function unused = m.functions.at(0);
  unused.name = "Unused";
  for (auto& n : unused.body.nodes) n.name += "_unused";
  m.functions.push_back(unused);
  Report r;
  FloatConvertOptions o;
  o.node_block_list = {"Y_unused"};
  try {
    convert_float_copy(m, o, r);
    FAIL() << "expected an error";
  } catch (const TransformError& e) {
    EXPECT_NE(std::string(e.what()).find("names a node of function custom.Unused"), std::string::npos)
        << e.what();
  }
}

TEST(Float16, ControlFlowNodeCannotBeBlocked) {
  ir::Model m = control_flow_model();
  Report r;
  FloatConvertOptions o;
  o.node_block_list = {"loop"};
  try {
    convert_float_copy(m, o, r);
    FAIL() << "expected an error";
  } catch (const TransformError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'loop' (Loop) in graph main cannot stay float32"),
              std::string::npos)
        << e.what();
  }
}

TEST(Float16, OutOfRangeValuesAreClampedWithAWarning) {
  ir::Model m = control_flow_model();
  ir::Tensor& w = *m.graph.find_initializer("w");
  std::vector<float> v(16, 0.25f);
  v[3] = 1e6f;
  v[7] = -7e4f;
  v[9] = std::numeric_limits<float>::infinity();  // infinities stay infinite: they mean something
  w = ir::make_tensor("w", DataType::kFloat, {4, 4}, v);
  Report r;
  ir::Model out = convert_float_copy(m, {}, r);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "main: initializer 'w': 2 of 16 values beyond float16's range clamped to its largest value");
  auto h = out.graph.find_initializer("w")->as<uint16_t>();
  EXPECT_EQ(h[3], 0x7bff);  // 65504
  EXPECT_EQ(h[7], 0xfbff);  // -65504
  EXPECT_EQ(h[9], 0x7c00);  // +inf
}

TEST(Float16, SchemaWithoutFloat16KeepsTheNodeFloat32) {
  // DequantizeLinear-13 writes float32 only: it stays float32 and Relu after it reads a Cast.
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 13}};
  m.graph.name = "main";
  ir::GraphBuilder b(m.graph);
  std::string q = b.input("q", ir::Type::tensor(DataType::kInt8, ir::Shape{ir::Dim::of(4)}));
  std::string scale = b.initializer(ir::make_tensor<float>("scale", DataType::kFloat, {}, {0.5f}));
  std::string d = b.node("DequantizeLinear", {q, scale}, {}, "dq");
  std::string y = b.node("Relu", {d}, {}, "relu");
  b.output(y, ir::Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(4)}));
  Report r;
  ir::Model out = convert_float_copy(m, {}, r);
  EXPECT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  EXPECT_EQ(r.get("nodes kept float32"), 1);
  EXPECT_EQ(out.graph.find_initializer("scale")->dtype, DataType::kFloat);  // read only in float32
  EXPECT_EQ(r.get("Casts added"), 1);                                       // dq -> float16 for Relu
}

}  // namespace
}  // namespace tessera::transforms
