// The type checker's diagnostics: one test per kind of finding, with the message a person reads.
#include "check/checker.h"

#include <gtest/gtest.h>

#include "ir/builder.h"

namespace tessera::check {
namespace {

using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::Type;

Type tensor(DataType t, std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return Type::tensor(t, s);
}

ir::Model model(int opset = 17) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports.push_back({"", opset});
  m.graph.name = "g";
  return m;
}

// All diagnostics of one severity as text, one a line.
std::string texts(const CheckResult& r, Severity s = Severity::kError) {
  std::string out;
  for (const auto& d : r.diagnostics.items) {
    if (d.severity == s) out += d.to_string() + "\n";
  }
  return out;
}

TEST(Checker, CleanModelHasNoDiagnosticsAndKeepsSymbols) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("batch"), Dim::of(3)}));
  auto y = b.node("Relu", {x}, {}, "relu");
  b.output(y);
  auto r = check_model(m);
  EXPECT_TRUE(r.diagnostics.items.empty()) << texts(r);
  EXPECT_EQ(r.value_types.at("relu").to_string(), "tensor(float)[batch,3]");
}

TEST(Checker, MandatoryInputNotConnected) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {1, 3, 8, 8}));
  b.output(b.node("Conv", {x, ""}, {}, "conv_1"));
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("mandatory input 1 ('W') of node 'conv_1' (Conv) is not connected"),
            std::string::npos)
      << texts(r);
}

TEST(Checker, AttributeOfWrongType) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {1, 3, 8, 8}));
  b.output(b.node("MaxPool", {x}, {Attribute::of_float("kernel_shape", 2.0f)}, "pool"));
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("attribute 'kernel_shape' of node 'pool' expects ints, got float"),
            std::string::npos)
      << texts(r);
}

TEST(Checker, RequiredAttributeMissing) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  b.output(b.node("Cast", {x}, {}, "cast"));
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("required attribute 'to' of node 'cast' (Cast) is missing"), std::string::npos)
      << texts(r);
}

TEST(Checker, ReshapeThatCannotWork) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {1, 3, 224, 224}));
  // 1*3*224*224 = 150528 is not a multiple of 5 (it is of 7: [1,-1,7] would be fine).
  auto shape = b.constant_ints("target", {1, -1, 5});
  b.output(b.node("Reshape", {x, shape}, {}, "r"));
  auto r = check_model(m);
  std::string t = texts(r);
  EXPECT_NE(t.find("node 'r' (Reshape)"), std::string::npos) << t;
  EXPECT_NE(t.find("cannot reshape [1,3,224,224] to [1,-1,5]"), std::string::npos) << t;
}

TEST(Checker, UnknownOperator) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  b.output(b.node("Frobnicate", {x}, {}, "f"));
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("unknown operator 'Frobnicate' in domain 'ai.onnx'"), std::string::npos)
      << texts(r);
}

TEST(Checker, CustomDomainOperatorIsOnlyAWarning) {
  auto m = model();
  m.opset_imports.push_back({"com.example", 1});
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  b.output(b.nodes("Frobnicate", {x}, {}, "f", 1, "com.example")[0]);
  auto r = check_model(m);
  EXPECT_FALSE(r.diagnostics.has_errors()) << texts(r);
  EXPECT_NE(texts(r, Severity::kWarning).find("custom operator"), std::string::npos);
}

TEST(Checker, OperatorNewerThanImportedOpset) {
  auto m = model(17);
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  b.output(b.node("Gelu", {x}, {}, "gelu"));
  auto r = check_model(m);
  EXPECT_NE(
      texts(r).find("operator Gelu first appears in opset 20 of ai.onnx, but the model imports opset 17"),
      std::string::npos)
      << texts(r);
}

TEST(Checker, DomainNotImported) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2, 4}));
  b.output(b.nodes("FastGelu", {x}, {}, "fg", 1, "com.microsoft")[0]);
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("uses domain 'com.microsoft', which the model does not import"), std::string::npos)
      << texts(r);
}

TEST(Checker, Cycle) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  b.nodes("Add", {x, "b"}, {}, "a");
  b.nodes("Relu", {"a"}, {}, "b");
  b.output("b");
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("the graph has a cycle through nodes 'a' (Add), 'b' (Relu)"), std::string::npos)
      << texts(r);
}

TEST(Checker, NodesOutOfOrderAreReportedButStillChecked) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  b.nodes("Relu", {"first"}, {}, "second");
  b.nodes("Relu", {x}, {}, "first");
  b.output("second");
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("not in topological order"), std::string::npos) << texts(r);
  EXPECT_EQ(r.value_types.at("second").to_string(), "tensor(float)[2]");
}

TEST(Checker, DuplicateNodeName) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  b.nodes("Relu", {x}, {}, "n");
  m.graph.add_node(ir::Node{0, "n", "Relu", "", "", {"n"}, {"n2"}, {}, "", {}, {}, ""});
  b.output("n2");
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("duplicate node name 'n'"), std::string::npos) << texts(r);
}

TEST(Checker, ValueWithNoProducer) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  b.input("x", tensor(DataType::kFloat, {2}));
  b.output(b.node("Relu", {"nowhere"}, {}, "relu"));
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("input 0 of node 'relu' (Relu) refers to 'nowhere', which no node, graph input or "
                          "initializer produces"),
            std::string::npos)
      << texts(r);
}

TEST(Checker, ValueProducedTwice) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  m.graph.add_node(ir::Node{0, "a", "Relu", "", "", {x}, {"y"}, {}, "", {}, {}, ""});
  m.graph.add_node(ir::Node{0, "b", "Relu", "", "", {x}, {"y"}, {}, "", {}, {}, ""});
  b.output("y");
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("value 'y' is produced twice, by node 'a' and node 'b'"), std::string::npos)
      << texts(r);
}

TEST(Checker, TypeMismatchBetweenInputs) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  auto i = b.input("i", tensor(DataType::kInt64, {2}));
  b.output(b.node("Add", {x, i}, {}, "add"));
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("type mismatch: input 1 ('B') is tensor(int64) but input 0 ('A') is tensor(float)"),
            std::string::npos)
      << texts(r);
}

TEST(Checker, TypeMismatchBetweenProducerAndDeclaration) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2, 3}));
  auto y = b.node("Relu", {x}, {}, "relu");
  b.output(y, tensor(DataType::kFloat, {2, 4}));
  auto r = check_model(m);
  EXPECT_NE(
      texts(r).find("output 0 ('relu') of node 'relu' (Relu) is inferred as tensor(float)[2,3] but declared "
                    "as tensor(float)[2,4]"),
      std::string::npos)
      << texts(r);
}

TEST(Checker, InputOfDisallowedType) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kString, {2}));
  b.output(b.node("Relu", {x}, {}, "relu"));
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("input 0 ('X') has type tensor(string), which Relu does not accept"),
            std::string::npos)
      << texts(r);
}

TEST(Checker, UnnamedNodesAreNamedByPosition) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  b.input("x", tensor(DataType::kFloat, {2}));
  m.graph.add_node(ir::Node{0, "", "Relu", "", "", {"missing"}, {"y"}, {}, "", {}, {}, ""});
  b.output("y");
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("node #0 (Relu)"), std::string::npos) << texts(r);
}

TEST(Checker, InitializerDimensionsOverflow) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  ir::Tensor huge;
  huge.name = "huge";
  huge.dtype = DataType::kFloat;
  huge.dims = {int64_t{1} << 40, int64_t{1} << 40};
  b.initializer(huge);
  b.output(b.node("Add", {x, "huge"}, {}, "add"));
  auto r = check_model(m);
  EXPECT_NE(
      texts(r).find("initializer 'huge' has dimensions 1099511627776x1099511627776 that are negative or "
                    "whose product overflows int64"),
      std::string::npos)
      << texts(r);
}

// If inside If inside If..., each then-branch holding the next level.
ir::Graph nested_if(int depth, const std::string& outer_value) {
  ir::Graph g;
  g.name = "level" + std::to_string(depth);
  ir::GraphBuilder b(g);
  std::string y;
  if (depth == 0) {
    y = b.node("Relu", {outer_value}, {}, "leaf");
  } else {
    ir::Graph then_branch = nested_if(depth - 1, outer_value);
    ir::Graph else_branch = nested_if(0, outer_value);
    else_branch.name = "else" + std::to_string(depth);
    y = b.node("If", {"cond"},
               {Attribute::of_graph("then_branch", std::move(then_branch)),
                Attribute::of_graph("else_branch", std::move(else_branch))},
               "if" + std::to_string(depth));
  }
  b.output(y);
  return g;
}

TEST(Checker, IfNestedThirtyDeepChecksWithoutTrouble) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2, 3}));
  b.input("cond", tensor(DataType::kBool, {}));
  ir::Graph g = nested_if(30, x);
  m.graph.nodes = g.nodes;
  m.graph.next_node_id = g.next_node_id;
  b.output(m.graph.nodes.back().outputs[0]);
  auto r = check_model(m);
  EXPECT_FALSE(r.diagnostics.has_errors()) << texts(r);
  EXPECT_EQ(r.value_types.at("if30").to_string(), "tensor(float)[2,3]");
}

TEST(Checker, ErrorsInsideSubgraphsNameTheirPath) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  b.input("cond", tensor(DataType::kBool, {}));
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  ir::Graph then_branch = nested_if(0, "not_there");
  ir::Graph else_branch = nested_if(0, x);
  b.output(b.node("If", {"cond"},
                  {Attribute::of_graph("then_branch", std::move(then_branch)),
                   Attribute::of_graph("else_branch", std::move(else_branch))},
                  "branch"));
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("error: main/branch.then_branch: node 'leaf' (Relu)"), std::string::npos)
      << texts(r);
}

TEST(Checker, LocalFunctionCallsCarryTypes) {
  auto m = model();
  m.opset_imports.push_back({"local", 1});
  ir::Function fn;
  fn.name = "Double";
  fn.domain = "local";
  fn.opset_imports = {{"", 17}};
  ir::GraphBuilder fb(fn.body);
  fn.body.inputs.push_back({"a", {}, {}, {}});
  fb.output(fb.node("Add", {"a", "a"}, {}, "sum"));
  m.functions.push_back(fn);
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("n")}));
  b.output(b.nodes("Double", {x}, {}, "call", 1, "local")[0]);
  auto r = check_model(m);
  EXPECT_FALSE(r.diagnostics.has_errors()) << texts(r);
  EXPECT_EQ(r.value_types.at("call").to_string(), "tensor(float)[n]");
}

TEST(Checker, IdentifierCheckIsOptIn) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", tensor(DataType::kFloat, {2}));
  b.output(b.node("Relu", {x}, {}, "layer.0/relu"));
  EXPECT_TRUE(check_model(m).diagnostics.items.empty());
  CheckOptions o;
  o.check_identifiers = true;
  auto r = check_model(m, o);
  EXPECT_NE(texts(r, Severity::kInfo).find("node name 'layer.0/relu' is not a valid C identifier"),
            std::string::npos);
  EXPECT_TRUE(is_c_identifier("conv_1"));
  EXPECT_FALSE(is_c_identifier("1conv"));
  EXPECT_FALSE(is_c_identifier(""));
}

TEST(Checker, MissingOpsetImportAndBadIrVersion) {
  ir::Model m;
  m.ir_version = 2;
  auto r = check_model(m);
  EXPECT_NE(texts(r).find("the model imports no operator set"), std::string::npos);
  EXPECT_NE(texts(r).find("IR version 2 is older than 3"), std::string::npos);
}

TEST(Checker, DiagnosticCapKeepsHugeBrokenModelsReadable) {
  auto m = model();
  ir::GraphBuilder b(m.graph);
  for (int k = 0; k < 50; ++k) b.node("Relu", {"missing" + std::to_string(k)});
  CheckOptions o;
  o.max_diagnostics = 10;
  EXPECT_EQ(check_model(m, o).diagnostics.items.size(), 10u);
}

}  // namespace
}  // namespace tessera::check
