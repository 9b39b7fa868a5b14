// Reference kernels of control flow (If, Loop, Scan), sequences and optionals, string ops, ai.onnx.ml ops
// and the training optimizers, on what the ONNX conformance suite leaves out: outer-scope values in
// loop bodies, nested control flow, sequence round trips, element types the suite does not use and the
// error paths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/model.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace tessera {
namespace {

using ir::Attribute;
using ir::DataType;
using ir::Type;
using rt::Tensor;
using rt::Value;

ir::ValueInfo vi(std::string name, Type t = {}) {
  return {std::move(name), std::move(t), {}, {}};
}

ir::Node node(std::string op, std::vector<std::string> ins, std::vector<std::string> outs,
              std::vector<Attribute> attrs = {}, std::string domain = {}) {
  ir::Node n;
  n.op_type = std::move(op);
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  n.attributes = std::move(attrs);
  n.domain = std::move(domain);
  return n;
}

Type f32() {
  return Type::tensor(DataType::kFloat);
}
Type tensor_of(DataType dt) {
  return Type::tensor(dt);
}

// A model of one graph; `inputs` are typed graph inputs, `outputs` named (types left to inference).
struct ModelSpec {
  std::vector<ir::ValueInfo> inputs;
  std::vector<ir::Node> nodes;
  std::vector<std::string> outputs;
  int opset = 17;
  std::vector<ir::Tensor> initializers = {};
};

std::vector<Value> run_model(ModelSpec spec, const std::vector<std::pair<std::string, Value>>& feeds) {
  ir::Model m;
  m.ir_version = 10;
  m.opset_imports = {{"", spec.opset}, {"ai.onnx.ml", 5}, {"ai.onnx.preview.training", 1}};
  m.graph.name = "main";
  m.graph.inputs = std::move(spec.inputs);
  m.graph.initializers = std::move(spec.initializers);
  for (auto& n : spec.nodes) m.graph.add_node(std::move(n));
  for (auto& o : spec.outputs) m.graph.outputs.push_back(vi(o));
  rt::Session s(std::move(m), {.threads = 1});
  return s.run(feeds);
}

std::string error_of(ModelSpec spec, const std::vector<std::pair<std::string, Value>>& feeds) {
  try {
    run_model(std::move(spec), feeds);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

Tensor floats(rt::Shape shape, std::vector<float> v) {
  return Tensor::from_vector<float>(DataType::kFloat, shape, v);
}
Tensor int64s(rt::Shape shape, std::vector<int64_t> v) {
  return Tensor::from_vector<int64_t>(DataType::kInt64, shape, v);
}
Tensor strings(rt::Shape shape, std::vector<std::string> v) {
  return Tensor::from_vector<std::string>(DataType::kString, shape, v);
}
Tensor boolean(bool b) {
  return Tensor::scalar<bool>(DataType::kBool, b);
}

template <class T>
std::vector<T> values(const Tensor& t) {
  return {t.data<T>(), t.data<T>() + t.numel()};
}

// Loop body: (i, cond, v) -> (cond, v + outer `step`, v as scan output); `step` lives in the main graph.
ir::Graph add_outer_body() {
  ir::Graph g;
  g.name = "body";
  g.inputs = {vi("i", tensor_of(DataType::kInt64)), vi("c", tensor_of(DataType::kBool)), vi("v", f32())};
  g.add_node(node("Identity", {"c"}, {"c_out"}));
  g.add_node(node("Add", {"v", "step"}, {"v_out"}));
  g.add_node(node("Identity", {"v"}, {"scan"}));
  g.outputs = {vi("c_out"), vi("v_out"), vi("scan")};
  return g;
}

TEST(ControlKernels, LoopBodyReadsOuterScopeValue) {
  ModelSpec spec{.inputs = {vi("M", tensor_of(DataType::kInt64)), vi("v0", f32()), vi("step", f32())},
                 .nodes = {node("Loop", {"M", "", "v0"}, {"v_final", "scans"},
                                {Attribute::of_graph("body", add_outer_body())})},
                 .outputs = {"v_final", "scans"}};
  auto outs = run_model(spec, {{"M", Tensor::scalar<int64_t>(DataType::kInt64, 3)},
                               {"v0", floats({2}, {1, 2})},
                               {"step", floats({2}, {10, 100})}});
  EXPECT_EQ(values<float>(outs[0].tensor()), (std::vector<float>{31, 302}));
  EXPECT_EQ(outs[1].tensor().shape(), (rt::Shape{3, 2}));
  EXPECT_EQ(values<float>(outs[1].tensor()), (std::vector<float>{1, 2, 11, 102, 21, 202}));
}

TEST(ControlKernels, LoopWithZeroTripsKeepsInitialValue) {
  ModelSpec spec{.inputs = {vi("M", tensor_of(DataType::kInt64)), vi("v0", f32()), vi("step", f32())},
                 .nodes = {node("Loop", {"M", "", "v0"}, {"v_final", "scans"},
                                {Attribute::of_graph("body", add_outer_body())})},
                 .outputs = {"v_final", "scans"}};
  auto outs = run_model(spec, {{"M", Tensor::scalar<int64_t>(DataType::kInt64, 0)},
                               {"v0", floats({2}, {1, 2})},
                               {"step", floats({2}, {10, 100})}});
  EXPECT_EQ(values<float>(outs[0].tensor()), (std::vector<float>{1, 2}));
  EXPECT_EQ(outs[1].tensor().dim(0), 0);
}

TEST(ControlKernels, NestedIfInsideLoop) {
  // Body: v_out = flag ? v + step : v - step, with `flag` and `step` from the main graph.
  ir::Graph then_g, else_g, body;
  then_g.name = "then";
  then_g.add_node(node("Add", {"v", "step"}, {"t_out"}));
  then_g.outputs = {vi("t_out")};
  else_g.name = "else";
  else_g.add_node(node("Sub", {"v", "step"}, {"e_out"}));
  else_g.outputs = {vi("e_out")};
  body.name = "body";
  body.inputs = {vi("i", tensor_of(DataType::kInt64)), vi("c", tensor_of(DataType::kBool)), vi("v", f32())};
  body.add_node(node("Identity", {"c"}, {"c_out"}));
  body.add_node(
      node("If", {"flag"}, {"v_out"},
           {Attribute::of_graph("then_branch", then_g), Attribute::of_graph("else_branch", else_g)}));
  body.outputs = {vi("c_out"), vi("v_out")};
  ModelSpec spec{.inputs = {vi("M", tensor_of(DataType::kInt64)), vi("flag", tensor_of(DataType::kBool)),
                            vi("v0", f32()), vi("step", f32())},
                 .nodes = {node("Loop", {"M", "", "v0"}, {"v_final"}, {Attribute::of_graph("body", body)})},
                 .outputs = {"v_final"}};
  for (bool flag : {true, false}) {
    auto outs = run_model(spec, {{"M", Tensor::scalar<int64_t>(DataType::kInt64, 4)},
                                 {"flag", boolean(flag)},
                                 {"v0", floats({}, {1})},
                                 {"step", floats({}, {2})}});
    EXPECT_EQ(outs[0].tensor().data<float>()[0], flag ? 9.0f : -7.0f);
  }
}

TEST(ControlKernels, LoopStopsOnCondition) {
  // No trip count: the body's condition (v < 5 is not available here, so a constant false) ends it.
  ir::Graph body;
  body.name = "body";
  body.inputs = {vi("i", tensor_of(DataType::kInt64)), vi("c", tensor_of(DataType::kBool)), vi("v", f32())};
  body.add_node(node("Identity", {"stop"}, {"c_out"}));
  body.add_node(node("Add", {"v", "v"}, {"v_out"}));
  body.outputs = {vi("c_out"), vi("v_out")};
  ModelSpec spec{.inputs = {vi("stop", tensor_of(DataType::kBool)), vi("v0", f32())},
                 .nodes = {node("Loop", {"", "", "v0"}, {"v_final"}, {Attribute::of_graph("body", body)})},
                 .outputs = {"v_final"}};
  auto outs = run_model(spec, {{"stop", boolean(false)}, {"v0", floats({}, {3})}});
  EXPECT_EQ(outs[0].tensor().data<float>()[0], 6.0f);  // one iteration, then the condition is false
}

ir::Graph const_graph(const std::string& name, float v) {
  ir::Graph g;
  g.name = name;
  ir::Tensor t = Tensor::scalar<float>(DataType::kFloat, v).to_ir(name + "_c");
  g.initializers = {t};
  g.add_node(node("Identity", {name + "_c"}, {name + "_out"}));
  g.outputs = {vi(name + "_out")};
  return g;
}

ModelSpec if_spec(Type cond_type) {
  return {.inputs = {vi("cond", std::move(cond_type))},
          .nodes = {node("If", {"cond"}, {"y"},
                         {Attribute::of_graph("then_branch", const_graph("a", 1)),
                          Attribute::of_graph("else_branch", const_graph("b", 2))})},
          .outputs = {"y"}};
}

TEST(ControlKernels, IfPicksBranch) {
  EXPECT_EQ(
      run_model(if_spec(tensor_of(DataType::kBool)), {{"cond", boolean(true)}})[0].tensor().data<float>()[0],
      1);
  EXPECT_EQ(
      run_model(if_spec(tensor_of(DataType::kBool)), {{"cond", boolean(false)}})[0].tensor().data<float>()[0],
      2);
}

TEST(ControlKernels, IfRejectsNonBoolCond) {
  std::string err = error_of(if_spec(f32()), {{"cond", floats({}, {1})}});
  EXPECT_NE(err.find("cond"), std::string::npos) << err;
}

TEST(ControlKernels, IfRejectsMultiElementCond) {
  Tensor two = Tensor::from_vector<bool>(DataType::kBool, {2}, {true, false});
  std::string err = error_of(if_spec(Type::tensor(DataType::kBool)), {{"cond", two}});
  EXPECT_FALSE(err.empty());
}

TEST(ControlKernels, ScanReverseDirections) {
  // Body: (sum, x) -> (sum + x, sum + x): running sums, read back to front, written back to front.
  ir::Graph body;
  body.name = "body";
  body.inputs = {vi("s", f32()), vi("x", f32())};
  body.add_node(node("Add", {"s", "x"}, {"s_out"}));
  body.add_node(node("Identity", {"s_out"}, {"scan_out"}));
  body.outputs = {vi("s_out"), vi("scan_out")};
  ModelSpec spec{.inputs = {vi("s0", f32()), vi("xs", f32())},
                 .nodes = {node("Scan", {"s0", "xs"}, {"s_final", "ys"},
                                {Attribute::of_graph("body", body), Attribute::of_int("num_scan_inputs", 1),
                                 Attribute::of_ints("scan_input_directions", {1}),
                                 Attribute::of_ints("scan_output_directions", {1}),
                                 Attribute::of_ints("scan_input_axes", {1})})},
                 .outputs = {"s_final", "ys"}};
  auto outs = run_model(spec, {{"s0", floats({2}, {0, 0})}, {"xs", floats({2, 3}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_EQ(values<float>(outs[0].tensor()), (std::vector<float>{6, 15}));
  // Iteration t reads column 2 - t and writes row 2 - t of the [3, 2] output.
  EXPECT_EQ(outs[1].tensor().shape(), (rt::Shape{3, 2}));
  EXPECT_EQ(values<float>(outs[1].tensor()), (std::vector<float>{6, 15, 5, 11, 3, 6}));
}

// ---- sequences and optionals ----

TEST(SequenceKernels, RoundTrip) {
  // Split [4, 2] into 1-row pieces, insert one at the front, erase the last, read back and concatenate.
  ModelSpec spec{
      .inputs = {vi("x", f32()), vi("extra", f32()), vi("pos", tensor_of(DataType::kInt64))},
      .nodes = {node("SplitToSequence", {"x"}, {"seq"}, {Attribute::of_int("axis", 0)}),
                node("SequenceInsert", {"seq", "extra", "pos"}, {"seq2"}),
                node("SequenceErase", {"seq2"}, {"seq3"}), node("SequenceLength", {"seq3"}, {"len"}),
                node("SequenceAt", {"seq3", "pos"}, {"first"}),
                node("ConcatFromSequence", {"seq3"}, {"cat"}, {Attribute::of_int("axis", 0)}),
                node("ConcatFromSequence", {"seq3"}, {"stacked"},
                     {Attribute::of_int("axis", -1), Attribute::of_int("new_axis", 1)})},
      .outputs = {"len", "first", "cat", "stacked", "seq3"}};
  auto outs = run_model(spec, {{"x", floats({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})},
                               {"extra", floats({1, 2}, {-1, -2})},
                               {"pos", Tensor::scalar<int64_t>(DataType::kInt64, -4)}});
  EXPECT_EQ(outs[0].tensor().data<int64_t>()[0], 4);
  // -4 in a sequence of 4 is its first element: the inserted one (it went in at -4 of 4 = front).
  EXPECT_EQ(values<float>(outs[1].tensor()), (std::vector<float>{-1, -2}));
  EXPECT_EQ(outs[2].tensor().shape(), (rt::Shape{4, 2}));
  EXPECT_EQ(values<float>(outs[2].tensor()), (std::vector<float>{-1, -2, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(outs[3].tensor().shape(), (rt::Shape{1, 2, 4}));
  EXPECT_EQ(values<float>(outs[3].tensor()), (std::vector<float>{-1, 1, 3, 5, -2, 2, 4, 6}));
  ASSERT_TRUE(outs[4].is_sequence());
  EXPECT_EQ(outs[4].sequence().items.size(), 4u);
}

TEST(SequenceKernels, SequenceAtOutOfRange) {
  ModelSpec spec{
      .inputs = {vi("a", f32()), vi("b", f32()), vi("pos", tensor_of(DataType::kInt64))},
      .nodes = {node("SequenceConstruct", {"a", "b"}, {"seq"}), node("SequenceAt", {"seq", "pos"}, {"y"})},
      .outputs = {"y"}};
  for (int64_t pos : {2, -3}) {
    std::string err = error_of(spec, {{"a", floats({1}, {1})},
                                      {"b", floats({1}, {2})},
                                      {"pos", Tensor::scalar<int64_t>(DataType::kInt64, pos)}});
    EXPECT_NE(err.find("out of range"), std::string::npos) << err;
  }
}

TEST(SequenceKernels, InsertRejectsOtherElementType) {
  ModelSpec spec{
      .inputs = {vi("a", f32()), vi("b", tensor_of(DataType::kInt64))},
      .nodes = {node("SequenceConstruct", {"a"}, {"seq"}), node("SequenceInsert", {"seq", "b"}, {"y"})},
      .outputs = {"y"}};
  EXPECT_FALSE(error_of(spec, {{"a", floats({1}, {1})}, {"b", int64s({1}, {2})}}).empty());
}

TEST(SequenceKernels, SplitToSequenceChunksAndBadSplit) {
  ModelSpec spec{.inputs = {vi("x", f32()), vi("split", tensor_of(DataType::kInt64))},
                 .nodes = {node("SplitToSequence", {"x", "split"}, {"seq"}, {Attribute::of_int("axis", 0)})},
                 .outputs = {"seq"}};
  auto outs = run_model(
      spec, {{"x", floats({5}, {1, 2, 3, 4, 5})}, {"split", Tensor::scalar<int64_t>(DataType::kInt64, 2)}});
  ASSERT_EQ(outs[0].sequence().items.size(), 3u);
  EXPECT_EQ(outs[0].sequence().items[2].tensor().shape(), (rt::Shape{1}));
  std::string err = error_of(spec, {{"x", floats({5}, {1, 2, 3, 4, 5})}, {"split", int64s({2}, {2, 2})}});
  EXPECT_NE(err.find("add up to"), std::string::npos) << err;
}

TEST(SequenceKernels, EmptyOptional) {
  Attribute type_attr;
  type_attr.name = "type";
  type_attr.type = ir::AttrType::kTypeProto;
  type_attr.types = {Type::tensor(DataType::kFloat)};
  ModelSpec spec{
      .inputs = {},
      .nodes = {node("Optional", {}, {"opt"}, {type_attr}), node("OptionalHasElement", {"opt"}, {"has"}),
                node("OptionalGetElement", {"opt"}, {"elem"})},
      .outputs = {"has"}};
  auto outs = run_model(spec, {});
  EXPECT_FALSE(outs[0].tensor().data<bool>()[0]);
  spec.outputs = {"elem"};
  std::string err = error_of(spec, {});
  EXPECT_NE(err.find("empty optional"), std::string::npos) << err;
}

// ---- strings ----

TEST(StringKernels, SplitWhitespaceMaxsplitKeepsTail) {
  ModelSpec spec{.inputs = {vi("x", tensor_of(DataType::kString))},
                 .nodes = {node("StringSplit", {"x"}, {"y", "z"}, {Attribute::of_int("maxsplit", 1)})},
                 .outputs = {"y", "z"},
                 .opset = 20};
  auto outs = run_model(spec, {{"x", strings({2}, {"  a b  c ", ""})}});
  EXPECT_EQ(values<std::string>(outs[0].tensor()), (std::vector<std::string>{"a", "b  c ", "", ""}));
  EXPECT_EQ(values<int64_t>(outs[1].tensor()), (std::vector<int64_t>{2, 0}));
}

TEST(StringKernels, NormalizerCaseInsensitiveStopwords) {
  ModelSpec spec{.inputs = {vi("x", tensor_of(DataType::kString))},
                 .nodes = {node("StringNormalizer", {"x"}, {"y"},
                                {Attribute::of_strings("stopwords", {"THE"}),
                                 Attribute::of_string("case_change_action", "LOWER")})},
                 .outputs = {"y"}};
  auto outs = run_model(spec, {{"x", strings({3}, {"the", "Cat", "The"})}});
  EXPECT_EQ(values<std::string>(outs[0].tensor()), (std::vector<std::string>{"cat"}));
}

TEST(StringKernels, TfIdfStringPoolWithWeights) {
  ModelSpec spec{
      .inputs = {vi("x", tensor_of(DataType::kString))},
      .nodes = {node(
          "TfIdfVectorizer", {"x"}, {"y"},
          {Attribute::of_string("mode", "TFIDF"), Attribute::of_int("min_gram_length", 1),
           Attribute::of_int("max_gram_length", 2), Attribute::of_int("max_skip_count", 0),
           Attribute::of_ints("ngram_counts", {0, 2}), Attribute::of_ints("ngram_indexes", {0, 1, 2}),
           Attribute::of_strings("pool_strings", {"a", "b", "a", "b"}),
           Attribute::of_floats("weights", {1, 2, 4})})},
      .outputs = {"y"}};
  auto outs = run_model(spec, {{"x", strings({5}, {"a", "b", "a", "b", "c"})}});
  EXPECT_EQ(values<float>(outs[0].tensor()), (std::vector<float>{2, 4, 8}));
}

// ---- ai.onnx.ml ----

TEST(MlKernels, LabelEncoderFloatKeysWithNan) {
  ModelSpec spec{.inputs = {vi("x", f32())},
                 .nodes = {node("LabelEncoder", {"x"}, {"y"},
                                {Attribute::of_floats("keys_floats", {1.5f, NAN}),
                                 Attribute::of_strings("values_strings", {"one", "nan"})},
                                "ai.onnx.ml")},
                 .outputs = {"y"}};
  auto outs = run_model(spec, {{"x", floats({3}, {1.5f, NAN, 2})}});
  EXPECT_EQ(values<std::string>(outs[0].tensor()), (std::vector<std::string>{"one", "nan", "_Unused"}));
}

TEST(MlKernels, ArrayFeatureExtractorIndexOutOfRange) {
  ModelSpec spec{.inputs = {vi("x", f32()), vi("i", tensor_of(DataType::kInt64))},
                 .nodes = {node("ArrayFeatureExtractor", {"x", "i"}, {"y"}, {}, "ai.onnx.ml")},
                 .outputs = {"y"}};
  std::string err = error_of(spec, {{"x", floats({2, 2}, {1, 2, 3, 4})}, {"i", int64s({1}, {2})}});
  EXPECT_NE(err.find("out of range"), std::string::npos) << err;
  auto outs = run_model(spec, {{"x", floats({3}, {1, 2, 3})}, {"i", int64s({2}, {2, 0})}});
  EXPECT_EQ(outs[0].tensor().shape(), (rt::Shape{1, 2}));
  EXPECT_EQ(values<float>(outs[0].tensor()), (std::vector<float>{3, 1}));
}

TEST(MlKernels, BinarizerInt64) {
  ModelSpec spec{
      .inputs = {vi("x", tensor_of(DataType::kInt64))},
      .nodes = {node("Binarizer", {"x"}, {"y"}, {Attribute::of_float("threshold", 1.5f)}, "ai.onnx.ml")},
      .outputs = {"y"}};
  auto outs = run_model(spec, {{"x", int64s({3}, {1, 2, -5})}});
  EXPECT_EQ(values<int64_t>(outs[0].tensor()), (std::vector<int64_t>{0, 1, 0}));
}

TEST(MlKernels, TreeEnsembleRegressorAverage) {
  // Two stumps on feature 0: x <= 1 ? 10 : 20 and x < 3 ? 1 : 3; AVERAGE plus a base value of 100.
  std::vector<Attribute> attrs = {
      Attribute::of_ints("nodes_treeids", {0, 0, 0, 1, 1, 1}),
      Attribute::of_ints("nodes_nodeids", {0, 1, 2, 0, 1, 2}),
      Attribute::of_ints("nodes_featureids", {0, 0, 0, 0, 0, 0}),
      Attribute::of_strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"}),
      Attribute::of_floats("nodes_values", {1, 0, 0, 3, 0, 0}),
      Attribute::of_ints("nodes_truenodeids", {1, 0, 0, 1, 0, 0}),
      Attribute::of_ints("nodes_falsenodeids", {2, 0, 0, 2, 0, 0}),
      Attribute::of_ints("target_treeids", {0, 0, 1, 1}),
      Attribute::of_ints("target_nodeids", {1, 2, 1, 2}),
      Attribute::of_ints("target_ids", {0, 0, 0, 0}),
      Attribute::of_floats("target_weights", {10, 20, 1, 3}),
      Attribute::of_floats("base_values", {100}),
      Attribute::of_int("n_targets", 1),
      Attribute::of_string("aggregate_function", "AVERAGE")};
  ModelSpec spec{.inputs = {vi("x", f32())},
                 .nodes = {node("TreeEnsembleRegressor", {"x"}, {"y"}, attrs, "ai.onnx.ml")},
                 .outputs = {"y"}};
  auto outs = run_model(spec, {{"x", floats({3, 1}, {0, 2, 5})}});
  EXPECT_EQ(values<float>(outs[0].tensor()), (std::vector<float>{105.5f, 110.5f, 111.5f}));
}

TEST(ControlKernels, Scan8BatchWithSequenceLengths) {
  // Opset 8: [batch, seq, ...] inputs; entry 1 runs one step only and its scan output is zero-padded.
  ir::Graph body;
  body.name = "body";
  body.inputs = {vi("s", f32()), vi("x", f32())};
  body.add_node(node("Add", {"s", "x"}, {"s_out"}));
  body.add_node(node("Identity", {"s_out"}, {"scan_out"}));
  body.outputs = {vi("s_out"), vi("scan_out")};
  ModelSpec spec{
      .inputs = {vi("lens", tensor_of(DataType::kInt64)), vi("s0", f32()), vi("xs", f32())},
      .nodes = {node("Scan", {"lens", "s0", "xs"}, {"s_final", "ys"},
                     {Attribute::of_graph("body", body), Attribute::of_int("num_scan_inputs", 1)})},
      .outputs = {"s_final", "ys"},
      .opset = 8};
  auto outs = run_model(spec, {{"lens", int64s({2}, {2, 1})},
                               {"s0", floats({2, 1}, {0, 100})},
                               {"xs", floats({2, 2, 1}, {1, 2, 3, 4})}});
  EXPECT_EQ(values<float>(outs[0].tensor()), (std::vector<float>{3, 103}));
  EXPECT_EQ(outs[1].tensor().shape(), (rt::Shape{2, 2, 1}));
  EXPECT_EQ(values<float>(outs[1].tensor()), (std::vector<float>{1, 3, 103, 0}));
}

TEST(ControlKernels, ScanRejectsMismatchedLengths) {
  ir::Graph body;
  body.name = "body";
  body.inputs = {vi("a", f32()), vi("b", f32())};
  body.add_node(node("Add", {"a", "b"}, {"c"}));
  body.outputs = {vi("c")};
  ModelSpec spec{
      .inputs = {vi("xs", f32()), vi("ys", f32())},
      .nodes = {node("Scan", {"xs", "ys"}, {"zs"},
                     {Attribute::of_graph("body", body), Attribute::of_int("num_scan_inputs", 2)})},
      .outputs = {"zs"}};
  std::string err = error_of(spec, {{"xs", floats({2}, {1, 2})}, {"ys", floats({3}, {1, 2, 3})}});
  EXPECT_FALSE(err.empty());
}

TEST(MlKernels, ScalerNormalizerImputer) {
  ModelSpec spec{
      .inputs = {vi("x", tensor_of(DataType::kDouble))},
      .nodes = {node("Scaler", {"x"}, {"scaled"},
                     {Attribute::of_floats("offset", {1, 2}), Attribute::of_floats("scale", {2})},
                     "ai.onnx.ml"),
                node("Normalizer", {"x"}, {"l2"}, {Attribute::of_string("norm", "L2")}, "ai.onnx.ml"),
                node("Imputer", {"x"}, {"imputed"},
                     {Attribute::of_floats("imputed_value_floats", {7, 8}),
                      Attribute::of_float("replaced_value_float", NAN)},
                     "ai.onnx.ml")},
      .outputs = {"scaled", "l2", "imputed"}};
  Tensor x = Tensor::from_vector<double>(DataType::kDouble, {2, 2}, {3, 4, NAN, 0});
  auto outs = run_model(spec, {{"x", x}});
  EXPECT_EQ(values<float>(outs[0].tensor())[0], 4.0f);
  EXPECT_EQ(values<float>(outs[0].tensor())[1], 4.0f);
  EXPECT_NEAR(values<float>(outs[1].tensor())[0], 0.6f, 1e-6);
  EXPECT_NEAR(values<float>(outs[1].tensor())[1], 0.8f, 1e-6);
  EXPECT_EQ(values<double>(outs[2].tensor()), (std::vector<double>{3, 4, 7, 0}));
}

TEST(MlKernels, OneHotEncoderAndCategoryMapper) {
  ModelSpec spec{.inputs = {vi("x", tensor_of(DataType::kString))},
                 .nodes = {node("OneHotEncoder", {"x"}, {"hot"},
                                {Attribute::of_strings("cats_strings", {"a", "b"})}, "ai.onnx.ml"),
                           node("CategoryMapper", {"x"}, {"ids"},
                                {Attribute::of_strings("cats_strings", {"a", "b"}),
                                 Attribute::of_ints("cats_int64s", {5, 6})},
                                "ai.onnx.ml")},
                 .outputs = {"hot", "ids"}};
  auto outs = run_model(spec, {{"x", strings({3}, {"b", "z", "a"})}});
  EXPECT_EQ(outs[0].tensor().shape(), (rt::Shape{3, 2}));
  EXPECT_EQ(values<float>(outs[0].tensor()), (std::vector<float>{0, 1, 0, 0, 1, 0}));
  EXPECT_EQ(values<int64_t>(outs[1].tensor()), (std::vector<int64_t>{6, -1, 5}));

  ModelSpec strict{.inputs = {vi("x", tensor_of(DataType::kInt64))},
                   .nodes = {node("OneHotEncoder", {"x"}, {"hot"},
                                  {Attribute::of_ints("cats_int64s", {1, 2}), Attribute::of_int("zeros", 0)},
                                  "ai.onnx.ml")},
                   .outputs = {"hot"}};
  std::string err = error_of(strict, {{"x", int64s({2}, {1, 3})}});
  EXPECT_NE(err.find("not one of the categories"), std::string::npos) << err;
}

TEST(MlKernels, LinearAndSvmRegressors) {
  ModelSpec spec{
      .inputs = {vi("x", f32())},
      .nodes = {node("LinearRegressor", {"x"}, {"lin"},
                     {Attribute::of_floats("coefficients", {1, 2}),
                      Attribute::of_floats("intercepts", {0.5f})},
                     "ai.onnx.ml"),
                node("SVMRegressor", {"x"}, {"svm"},
                     {Attribute::of_floats("coefficients", {1, -1}), Attribute::of_int("n_supports", 2),
                      Attribute::of_floats("support_vectors", {1, 0, 0, 1}), Attribute::of_floats("rho", {3}),
                      Attribute::of_string("kernel_type", "LINEAR")},
                     "ai.onnx.ml")},
      .outputs = {"lin", "svm"}};
  auto outs = run_model(spec, {{"x", floats({2, 2}, {1, 1, 2, 0})}});
  EXPECT_EQ(values<float>(outs[0].tensor()), (std::vector<float>{3.5f, 2.5f}));
  // sv0 . x - sv1 . x + 3
  EXPECT_EQ(values<float>(outs[1].tensor()), (std::vector<float>{3, 5}));
}

TEST(MlKernels, LinearClassifierAndZipMap) {
  ModelSpec spec{.inputs = {vi("x", f32())},
                 .nodes = {node("LinearClassifier", {"x"}, {"label", "scores"},
                                {Attribute::of_floats("coefficients", {1, 0, 0, 1, -1, -1}),
                                 Attribute::of_floats("intercepts", {0, 0, 0}),
                                 Attribute::of_ints("classlabels_ints", {7, 8, 9})},
                                "ai.onnx.ml"),
                           node("ZipMap", {"scores"}, {"maps"},
                                {Attribute::of_ints("classlabels_int64s", {7, 8, 9})}, "ai.onnx.ml")},
                 .outputs = {"label", "maps"}};
  auto outs = run_model(spec, {{"x", floats({2, 2}, {1, 2, -3, -1})}});
  EXPECT_EQ(values<int64_t>(outs[0].tensor()), (std::vector<int64_t>{8, 9}));
  ASSERT_TRUE(outs[1].is_sequence());
  ASSERT_EQ(outs[1].sequence().items.size(), 2u);
  EXPECT_EQ(values<float>(outs[1].sequence().items[1].map().values), (std::vector<float>{-3, -1, 4}));
}

TEST(MlKernels, TreeEnsembleRejectsBadReferences) {
  std::vector<Attribute> attrs = {
      Attribute::of_ints("nodes_featureids", {0}),
      Attribute::of_tensor("nodes_splits", Tensor::from_vector<float>(DataType::kFloat, {1}, {1}).to_ir("s")),
      Attribute::of_tensor("nodes_modes",
                           Tensor::from_vector<uint8_t>(DataType::kUint8, {1}, {0}).to_ir("m")),
      Attribute::of_ints("nodes_truenodeids", {0}),
      Attribute::of_ints("nodes_trueleafs", {1}),
      Attribute::of_ints("nodes_falsenodeids", {5}),
      Attribute::of_ints("nodes_falseleafs", {1}),
      Attribute::of_ints("leaf_targetids", {0}),
      Attribute::of_tensor("leaf_weights", Tensor::from_vector<float>(DataType::kFloat, {1}, {1}).to_ir("w")),
      Attribute::of_ints("tree_roots", {0}),
      Attribute::of_int("n_targets", 1)};
  ModelSpec spec{.inputs = {vi("x", f32())},
                 .nodes = {node("TreeEnsemble", {"x"}, {"y"}, attrs, "ai.onnx.ml")},
                 .outputs = {"y"}};
  std::string err = error_of(spec, {{"x", floats({1, 1}, {0})}});
  EXPECT_NE(err.find("does not exist"), std::string::npos) << err;
}

TEST(MlKernels, CastMapAndDictVectorizer) {
  Type map_type = Type::map(DataType::kInt64, Type::tensor(DataType::kFloat));
  ModelSpec spec{.inputs = {vi("m", map_type)},
                 .nodes = {node("CastMap", {"m"}, {"dense"}, {Attribute::of_string("cast_to", "TO_STRING")},
                                "ai.onnx.ml"),
                           node("CastMap", {"m"}, {"sparse"},
                                {Attribute::of_string("map_form", "SPARSE"), Attribute::of_int("max_map", 4)},
                                "ai.onnx.ml"),
                           node("DictVectorizer", {"m"}, {"vec"},
                                {Attribute::of_ints("int64_vocabulary", {3, 9, 1})}, "ai.onnx.ml")},
                 .outputs = {"dense", "sparse", "vec"}};
  Value m = Value::map({int64s({2}, {3, 1}), floats({2}, {0.5f, 2})});
  auto outs = run_model(spec, {{"m", m}});
  EXPECT_EQ(values<std::string>(outs[0].tensor()), (std::vector<std::string>{"2", "0.5"}));
  EXPECT_EQ(values<float>(outs[1].tensor()), (std::vector<float>{0, 2, 0, 0.5f}));
  EXPECT_EQ(outs[2].tensor().shape(), (rt::Shape{1, 3}));
  EXPECT_EQ(values<float>(outs[2].tensor()), (std::vector<float>{0.5f, 0, 2}));
}

// ---- training ----

TEST(TrainingKernels, AdagradAndAdam) {
  ModelSpec spec{
      .inputs = {vi("r", f32()), vi("t", tensor_of(DataType::kInt64)), vi("x", f32()), vi("g", f32()),
                 vi("h", f32()), vi("v", f32())},
      .nodes = {node("Adagrad", {"r", "t", "x", "g", "h"}, {"x1", "h1"},
                     {Attribute::of_float("decay_factor", 0.5f), Attribute::of_float("epsilon", 0.0f)},
                     "ai.onnx.preview.training"),
                node("Adam", {"r", "t", "x", "g", "v", "h"}, {"x2", "v2", "h2"},
                     {Attribute::of_float("epsilon", 0.0f)}, "ai.onnx.preview.training")},
      .outputs = {"x1", "h1", "x2", "v2", "h2"}};
  auto outs = run_model(spec, {{"r", Tensor::scalar<float>(DataType::kFloat, 1.0f)},
                               {"t", Tensor::scalar<int64_t>(DataType::kInt64, 2)},
                               {"x", floats({1}, {1})},
                               {"g", floats({1}, {3})},
                               {"h", floats({1}, {0})},
                               {"v", floats({1}, {0})}});
  // Adagrad: r = 1 / (1 + 2 * 0.5) = 0.5; h = 9; x = 1 - 0.5 * 3 / 3 = 0.5.
  EXPECT_NEAR(outs[0].tensor().data<float>()[0], 0.5f, 1e-6);
  EXPECT_NEAR(outs[1].tensor().data<float>()[0], 9.0f, 1e-6);
  // Adam: v = 0.3, h = 0.009, r' = sqrt(1 - 0.999^2) / (1 - 0.9^2).
  double v = 0.3, h = 0.001 * 9, r = std::sqrt(1 - 0.999 * 0.999) / (1 - 0.81);
  EXPECT_NEAR(outs[2].tensor().data<float>()[0], 1 - r * v / std::sqrt(h), 1e-5);
  EXPECT_NEAR(outs[3].tensor().data<float>()[0], v, 1e-6);
  EXPECT_NEAR(outs[4].tensor().data<float>()[0], h, 1e-4 * h);  // beta is a float attribute: 0.999f
}

TEST(TrainingKernels, RejectsMismatchedShapes) {
  ModelSpec spec{.inputs = {vi("r", f32()), vi("t", tensor_of(DataType::kInt64)), vi("x", f32()),
                            vi("g", f32()), vi("v", f32())},
                 .nodes = {node("Momentum", {"r", "t", "x", "g", "v"}, {"x1", "v1"},
                                {Attribute::of_float("alpha", 0.5f), Attribute::of_float("beta", 1.0f),
                                 Attribute::of_float("norm_coefficient", 0.0f),
                                 Attribute::of_string("mode", "nesterov")},
                                "ai.onnx.preview.training")},
                 .outputs = {"x1", "v1"}};
  std::string err = error_of(spec, {{"r", Tensor::scalar<float>(DataType::kFloat, 1.0f)},
                                    {"t", Tensor::scalar<int64_t>(DataType::kInt64, 2)},
                                    {"x", floats({2}, {1, 2})},
                                    {"g", floats({1}, {3})},
                                    {"v", floats({2}, {0, 0})}});
  EXPECT_FALSE(err.empty());
}

TEST(TrainingKernels, MomentumDouble) {
  ModelSpec spec{.inputs = {vi("r", tensor_of(DataType::kFloat)), vi("t", tensor_of(DataType::kInt64)),
                            vi("x", tensor_of(DataType::kDouble)), vi("g", tensor_of(DataType::kDouble)),
                            vi("v", tensor_of(DataType::kDouble))},
                 .nodes = {node("Momentum", {"r", "t", "x", "g", "v"}, {"x_new", "v_new"},
                                {Attribute::of_float("alpha", 0.5f), Attribute::of_float("beta", 2.0f),
                                 Attribute::of_float("norm_coefficient", 0.0f),
                                 Attribute::of_string("mode", "standard")},
                                "ai.onnx.preview.training")},
                 .outputs = {"x_new", "v_new"}};
  auto d = [](double v) { return Tensor::from_vector<double>(DataType::kDouble, {1}, {v}); };
  auto outs = run_model(spec, {{"r", Tensor::scalar<float>(DataType::kFloat, 0.1f)},
                               {"t", Tensor::scalar<int64_t>(DataType::kInt64, 1)},
                               {"x", d(1.0)},
                               {"g", d(1.0)},
                               {"v", d(2.0)}});
  // v = 0.5 * 2 + 2 * 1 = 3; x = 1 - 0.1 * 3 = 0.7.
  EXPECT_NEAR(outs[1].tensor().data<double>()[0], 3.0, 1e-12);
  EXPECT_NEAR(outs[0].tensor().data<double>()[0], 0.7, 1e-7);
}

}  // namespace
}  // namespace tessera
