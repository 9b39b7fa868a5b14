// tessera extract as a library: subgraphs at depth, function bodies, cuts; outputs identical to the
// original model's on the same values.
#include "transforms/extract.h"

#include <gtest/gtest.h>

#include "check/checker.h"
#include "runtime/session.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

using ir::DataType;

TEST(Extract, ElseBranchWithOuterValueAsInput) {
  ir::Model m = test::control_flow_model();
  Report r;
  ExtractOptions o;
  o.subgraph = "if:else_branch";
  ir::Model out = extract(m, o, r);
  ASSERT_EQ(out.graph.inputs.size(), 1u);
  EXPECT_EQ(out.graph.inputs[0].name, "softmax");
  EXPECT_EQ(out.graph.inputs[0].type.to_string(), "tensor(float)[2,4]");
  EXPECT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  auto feeds = test::feeds_for(out);
  auto y = test::run_model(out, feeds);
  const auto& sm = feeds[0].second.tensor();
  for (int64_t i = 0; i < sm.numel(); ++i) EXPECT_EQ(y[0][static_cast<size_t>(i)], 2.0 * sm.to_double(i));
}

TEST(Extract, LoopBodyKeepsItsFormalInputs) {
  ir::Model m = test::control_flow_model();
  Report r;
  ExtractOptions o;
  o.subgraph = "loop:body";
  ir::Model out = extract(m, o, r);
  EXPECT_EQ(out.graph.inputs.size(), 3u);
  EXPECT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
}

TEST(Extract, FunctionBodyTypedFromItsCall) {
  ir::Model m = test::control_flow_model();
  Report r;
  ExtractOptions o;
  o.function = "custom:Scale";
  ir::Model out = extract(m, o, r);
  EXPECT_EQ(out.graph.inputs[0].type.to_string(), "tensor(float)[2,4]");
  EXPECT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
}

TEST(Extract, CutGivesTheSameValuesAsTheWholeModel) {
  ir::Model m = test::control_flow_model();
  Report r;
  ExtractOptions o;
  o.inputs = {"x"};
  o.outputs = {"softmax"};
  ir::Model cut = extract(m, o, r);
  EXPECT_EQ(r.get("nodes"), 4);  // mm, c, add, softmax
  EXPECT_FALSE(check::check_model(cut).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(cut));
  // The whole model, asked for softmax too, computes the same bits.
  ir::Model whole = m;
  whole.graph.outputs.push_back({"softmax", {}, {}, {}});
  auto feeds = test::feeds_for(m);
  auto all = test::run_model(whole, feeds);
  auto part = test::run_model(cut, {feeds[0]});
  EXPECT_EQ(part[0], all[1]);
}

TEST(Extract, Refusals) {
  ir::Model m = test::control_flow_model();
  auto refuse = [&](ExtractOptions o, const std::string& msg) {
    Report r;
    try {
      extract(m, o, r);
      ADD_FAILURE() << "expected: " << msg;
    } catch (const TransformError& e) {
      EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << e.what();
    }
  };
  ExtractOptions cut;
  cut.inputs = {"mm"};
  cut.outputs = {"if"};
  refuse(cut,
         "the cut does not separate the graph: 'if' (a node on the way to --outputs) depends on the model "
         "input 'cond', which --inputs does not list");
  cut.inputs = {"nope"};
  refuse(cut, "--inputs names 'nope', which is not a value of the main graph");
  ExtractOptions sub;
  sub.subgraph = "if:body";
  refuse(sub,
         "node 'if' (If) has no graph attribute 'body' (its graph attributes: then_branch, else_branch)");
  sub.subgraph = "iff:then_branch";
  refuse(sub, "graph main has no node named 'iff'");
  ExtractOptions fn;
  fn.function = "custom:Nope";
  refuse(fn, "the model has no local function 'custom:Nope' (it has: custom:Scale)");
  refuse({}, "give exactly one of");
}

}  // namespace
}  // namespace tessera::transforms
