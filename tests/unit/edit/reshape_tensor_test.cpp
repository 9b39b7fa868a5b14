// reshape_initializer and reshape_attribute: the tensor editor's shape change. The same element count
// keeps the values (row-major); a larger one keeps them and fills the rest with zero, a smaller one cuts;
// one undo step restores the tensor exactly; bad shapes are refused naming the tensor and the problem.
#include "ir/commands/reshape_tensor.h"

#include <gtest/gtest.h>

#include "edit_test_util.h"
#include "ir/commands/command_json.h"
#include "ir/commands/ir_json.h"

namespace tessera::ir::test {
namespace {

const GraphPath kMain = GraphPath::main_graph();

Tensor tensor_of(const json& j) {
  return tensor_from_json(j);
}

json values_of(const Model& m, const std::string& name) {
  return tensor_values_json(*m.graph.find_initializer(name), SIZE_MAX);
}

Model with(const Tensor& t) {
  Model m = small_model();
  m.graph.initializers.push_back(t);
  return m;
}

TEST(ReshapeInitializer, TheSameCountKeepsTheValuesAndSharesTheBytes) {
  Model m =
      with(tensor_of({{"name", "k"}, {"dtype", "float"}, {"shape", {2, 3}}, {"values", {1, 2, 3, 4, 5, 6}}}));
  const std::byte* before = m.graph.find_initializer("k")->bytes().data();
  ReshapeInitializer c(kMain, "k", {3, 1, 2});
  expect_round_trip(m, c, [&](const Model& after) {
    const Tensor& t = *after.graph.find_initializer("k");
    EXPECT_EQ(t.dims, (std::vector<int64_t>{3, 1, 2}));
    EXPECT_EQ(values_of(after, "k"), json({1, 2, 3, 4, 5, 6}));
  });
  EXPECT_EQ(m.graph.find_initializer("k")->bytes().data(), before);
  EXPECT_EQ(c.description(), "Reshape initializer 'k' to [3, 1, 2]");
}

TEST(ReshapeInitializer, AGrownTensorKeepsItsValuesAndIsFilledWithZero) {
  Model m =
      with(tensor_of({{"name", "k"}, {"dtype", "int32"}, {"shape", {2, 2}}, {"values", {1, -2, 3, -4}}}));
  ReshapeInitializer c(kMain, "k", {2, 3});
  expect_round_trip(m, c, [](const Model& after) {
    EXPECT_EQ(after.graph.find_initializer("k")->dims, (std::vector<int64_t>{2, 3}));
    // Flat order is kept: the old rows do not move to the new rows' starts.
    EXPECT_EQ(values_of(after, "k"), json({1, -2, 3, -4, 0, 0}));
  });
}

TEST(ReshapeInitializer, ACutTensorKeepsItsFirstValues) {
  Model m =
      with(tensor_of({{"name", "k"}, {"dtype", "double"}, {"shape", {5}}, {"values", {1.5, 2, 3, 4, 5}}}));
  ReshapeInitializer c(kMain, "k", {2});
  expect_round_trip(m, c, [](const Model& after) { EXPECT_EQ(values_of(after, "k"), json({1.5, 2})); });
  ReshapeInitializer empty(kMain, "k", {0, 4});
  expect_round_trip(m, empty, [](const Model& after) {
    EXPECT_EQ(after.graph.find_initializer("k")->bytes().size(), 0u);
    EXPECT_EQ(values_of(after, "k"), json::array());
  });
}

// Packed 4-bit types are cut and grown by element, not by byte: a cut to an odd count clears the padding
// nibble, so the tensor equals one built from the kept values.
TEST(ReshapeInitializer, PackedTypesAreCutAndGrownByElement) {
  Model m = with(tensor_of({{"name", "q"}, {"dtype", "int4"}, {"shape", {4}}, {"values", {-8, 7, -1, 3}}}));
  ReshapeInitializer cut(kMain, "q", {3});
  expect_round_trip(m, cut, [](const Model& after) {
    EXPECT_EQ(*after.graph.find_initializer("q"),
              tensor_of({{"name", "q"}, {"dtype", "int4"}, {"shape", {3}}, {"values", {-8, 7, -1}}}));
  });
  ReshapeInitializer grow(kMain, "q", {1, 6});
  expect_round_trip(m, grow, [](const Model& after) {
    EXPECT_EQ(values_of(after, "q"), json({-8, 7, -1, 0, 0, 0}));
  });
}

// Strings grow with empty strings; float8e8m0, which has no zero, grows with 1.0.
TEST(ReshapeInitializer, StringsGrowEmptyAndE8M0GrowsWithOne) {
  Model m = with(tensor_of({{"name", "s"}, {"dtype", "string"}, {"shape", {1}}, {"values", {"a"}}}));
  m.graph.initializers.push_back(
      tensor_of({{"name", "e"}, {"dtype", "float8e8m0"}, {"shape", {1}}, {"values", {4}}}));
  ReshapeInitializer s(kMain, "s", {3});
  expect_round_trip(m, s, [](const Model& after) { EXPECT_EQ(values_of(after, "s"), json({"a", "", ""})); });
  ReshapeInitializer e(kMain, "e", {2});
  expect_round_trip(m, e, [](const Model& after) { EXPECT_EQ(values_of(after, "e"), json({4.0, 1.0})); });
}

// Growing or cutting makes the values the model's own; a plain reshape keeps the external reference.
TEST(ReshapeInitializer, ExternalDataIsKeptByAReshapeAndDroppedByAResize) {
  Tensor t = tensor_of({{"name", "x"}, {"dtype", "uint8"}, {"shape", {4}}, {"values", {1, 2, 3, 4}}});
  t.external = ExternalData{"w.bin", 0, 4, ""};
  Model m = with(t);
  ReshapeInitializer same(kMain, "x", {2, 2});
  expect_round_trip(m, same, [](const Model& after) {
    EXPECT_TRUE(after.graph.find_initializer("x")->external.has_value());
  });
  ReshapeInitializer grow(kMain, "x", {2, 3});
  expect_round_trip(m, grow, [](const Model& after) {
    EXPECT_FALSE(after.graph.find_initializer("x")->external.has_value());
    EXPECT_EQ(values_of(after, "x"), json({1, 2, 3, 4, 0, 0}));
  });
  // Bytes still in their file (not loaded): a reshape only.
  Tensor ext;
  ext.name = "far";
  ext.dtype = DataType::kFloat;
  ext.dims = {8};
  ext.external = ExternalData{"w.bin", 0, 32, ""};
  m.graph.initializers.push_back(ext);
  ReshapeInitializer far_same(kMain, "far", {2, 4});
  expect_round_trip(m, far_same);
  ReshapeInitializer far_grow(kMain, "far", {9});
  expect_refused(
      m, far_grow,
      "initializer 'far': its bytes are not loaded here, so it can be reshaped to 8 elements but not "
      "grown or cut");
}

TEST(ReshapeInitializer, BadShapesAreRefusedNamingWhatIsWrong) {
  Model m = with(tensor_of({{"name", "k"}, {"dtype", "float"}, {"shape", {2}}, {"values", {1, 2}}}));
  ReshapeInitializer negative(kMain, "k", {2, -3});
  expect_refused(m, negative,
                 "initializer 'k': dimension 1 of the new shape [2, -3] is -3; dimensions are 0 or more");
  ReshapeInitializer overflow(kMain, "k", {int64_t{1} << 40, int64_t{1} << 40});
  expect_refused(
      m, overflow,
      "initializer 'k': the new shape [1099511627776, 1099511627776] has more elements than a tensor "
      "can count");
  ReshapeInitializer big(kMain, "k", {1 << 15, 1 << 15});
  expect_refused(
      m, big,
      "initializer 'k': the new shape [32768, 32768] would take 4294967296 bytes; the studio holds at "
      "most 1073741824 a tensor");
  ReshapeInitializer missing(kMain, "nope", {1});
  expect_refused(m, missing, "initializer 'nope' does not exist in graph 'main'");
}

// Through JSON and the history, as the studio sends it: one undo step; the answer's change names the
// graph's initializers (the checker re-checks their readers).
TEST(ReshapeInitializer, ThroughJsonAndHistoryOneUndoStep) {
  Model m = with(tensor_of({{"name", "k"}, {"dtype", "float"}, {"shape", {2}}, {"values", {1, 2}}}));
  Model before = m;
  History h(m);
  std::vector<Change> seen;
  h.set_listener([&](const std::vector<Change>& c) { seen = c; });
  json cmd{{"type", "reshape_initializer"}, {"name", "k"}, {"shape", {1, 3}}};
  h.execute(command_from_json(cmd));
  EXPECT_EQ(values_of(m, "k"), json({1, 2, 0}));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].kind, Change::Kind::kInitializersChanged);
  h.undo();
  EXPECT_TRUE(identical(m, before));
  EXPECT_FALSE(h.can_undo());
  EXPECT_EQ(command_from_json(cmd)->to_json(), cmd);
  try {
    command_from_json(json{{"type", "reshape_initializer"}, {"name", "k"}, {"shape", {2, "x"}}});
    ADD_FAILURE() << "accepted";
  } catch (const JsonError& e) {
    EXPECT_NE(std::string(e.what()).find("'shape'[1] must be an integer, not \"x\""), std::string::npos)
        << e.what();
  }
}

TEST(ReshapeAttribute, AConstantsValueIsReshapedAndGrownInOneStep) {
  Model m = small_model();
  Node c;
  c.name = "const";
  c.op_type = "Constant";
  c.outputs = {"cv"};
  Attribute a;
  a.name = "value";
  a.type = AttrType::kTensor;
  a.tensors.push_back(
      tensor_of({{"name", ""}, {"dtype", "float"}, {"shape", {2, 2}}, {"values", {1, 2, 3, 4}}}));
  c.attributes.push_back(a);
  m.graph.add_node(std::move(c));
  ReshapeAttribute grow(kMain, NodeRef(std::string("const")), "value", {3, 2});
  expect_round_trip(m, grow, [](const Model& after) {
    const Tensor& t = node_named(after.graph, "const")->attr("value")->tensors[0];
    EXPECT_EQ(t.dims, (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(tensor_values_json(t, SIZE_MAX), json({1, 2, 3, 4, 0, 0}));
  });
  EXPECT_EQ(grow.description(), "Reshape attribute 'value' of node 'const' to [3, 2]");
  ReshapeAttribute none(kMain, NodeRef(std::string("const")), "nope", {1});
  expect_refused(m, none, "node 'const' has no tensor attribute 'nope'");
  ReshapeAttribute bad(kMain, NodeRef(std::string("const")), "value", {-1});
  expect_refused(
      m, bad,
      "attribute 'value' of node 'const': dimension 0 of the new shape [-1] is -1; dimensions are 0 or "
      "more");
}

}  // namespace
}  // namespace tessera::ir::test
