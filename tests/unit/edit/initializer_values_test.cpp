// set_initializer_values on a large weight, and set_attribute_values on a large Constant's value: undo
// keeps the overwritten range, not the tensor. Memory is measured with glibc's mallinfo2 (bytes
// allocated on the heap), so a whole copy of the 16 MiB weight kept for undo would show as 16 MiB more.
#include "ir/commands/initializer_values.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <malloc.h>

#include <cmath>
#include <cstring>

#include "edit_test_util.h"
#include "ir/commands/command_json.h"
#include "ir/commands/ir_json.h"

namespace tessera::ir::test {
namespace {

const GraphPath kMain = GraphPath::main_graph();
constexpr int64_t kElements = 4 << 20;  // 16 MiB of float

int64_t heap_bytes() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<int64_t>(mi.uordblks + mi.hblkhd);
}

Model model_with_weight() {
  Model m = small_model();
  std::vector<float> v(kElements);
  for (int64_t i = 0; i < kElements; ++i) v[i] = static_cast<float>(i % 1000);
  m.graph.initializers.push_back(make_tensor<float>("big", DataType::kFloat, {kElements}, v));
  return m;
}

std::unique_ptr<Command> set_values(int64_t offset, std::vector<float> v) {
  auto n = static_cast<int64_t>(v.size());
  return std::make_unique<SetInitializerValues>(kMain, "big", offset,
                                                make_tensor<float>("big", DataType::kFloat, {n}, v));
}

float element(const Model& m, int64_t i) {
  float x;
  std::memcpy(&x, m.graph.find_initializer("big")->bytes().data() + 4 * i, 4);
  return x;
}

TEST(SetInitializerValues, UndoOfALargeWeightKeepsTheEditedRangeNotTheTensor) {
  Model m = model_with_weight();
  History h(m);
  const int64_t weight = kElements * 4;
  int64_t before = heap_bytes();
  // The first edit copies the weight once into bytes it may write (the loaded buffer is released: the
  // tensor held it alone), later ones write in place.
  h.execute(set_values(1000, std::vector<float>(256, -1.0f)));
  int64_t after_first = heap_bytes();
  EXPECT_LT(after_first - before, weight / 4) << "the first edit kept a copy of the weight";
  for (int k = 0; k < 20; ++k) h.execute(set_values(5000 + 1000 * k, std::vector<float>(1024, 7.0f)));
  int64_t after_edits = heap_bytes();
  // 20 edits of 4 KiB each: their undo data and commands, far below one copy of the weight.
  EXPECT_LT(after_edits - after_first, 1 << 20);
  EXPECT_EQ(element(m, 1000), -1.0f);
  EXPECT_EQ(element(m, 5000), 7.0f);
  EXPECT_EQ(element(m, 25000 - 1), 7.0f);
  for (int k = 0; k < 21; ++k) h.undo();
  EXPECT_LT(heap_bytes() - before, 1 << 20);
  EXPECT_EQ(element(m, 1000), 0.0f);
  EXPECT_EQ(element(m, 1255), 255.0f);
  EXPECT_EQ(element(m, 5000), 0.0f);
  for (int k = 0; k < 21; ++k) h.redo();
  EXPECT_LT(heap_bytes() - before, 1 << 20);
  EXPECT_EQ(element(m, 1000), -1.0f);
  EXPECT_EQ(element(m, 24999), 7.0f);
  EXPECT_EQ(element(m, 25024), 24.0f);  // past the last edit: as loaded
}

// A buffer another model shares (a copy of the model, an undo step of another command) is never
// written: the edited tensor gets its own copy, the copy keeps the old values.
TEST(SetInitializerValues, ASharedBufferIsCopiedNotWritten) {
  Model m = model_with_weight();
  History h(m);
  h.execute(set_values(0, {5.0f}));
  Model copy = m;  // shares the now editable buffer
  h.execute(set_values(1, {6.0f}));
  EXPECT_EQ(element(m, 1), 6.0f);
  EXPECT_EQ(element(copy, 1), 1.0f);
  EXPECT_EQ(element(copy, 0), 5.0f);
  h.undo();
  h.undo();
  EXPECT_EQ(element(m, 0), 0.0f);
  EXPECT_EQ(element(m, 1), 1.0f);
  EXPECT_EQ(element(copy, 0), 5.0f);
}

// A Constant whose value is a 16 MiB float tensor: the tensor editor's paged edits of an attribute.
Model model_with_constant() {
  Model m = small_model();
  std::vector<float> v(kElements);
  for (int64_t i = 0; i < kElements; ++i) v[i] = static_cast<float>(i % 1000);
  Node c;
  c.name = "table";
  c.op_type = "Constant";
  c.outputs = {"table_out"};
  c.attributes.push_back(
      Attribute::of_tensor("value", make_tensor<float>("", DataType::kFloat, {kElements}, v)));
  m.graph.add_node(std::move(c));
  return m;
}

std::unique_ptr<Command> set_attr_values(int64_t offset, std::vector<float> v, std::string attr = "value") {
  auto n = static_cast<int64_t>(v.size());
  return std::make_unique<SetAttributeValues>(kMain, "table", std::move(attr), offset,
                                              make_tensor<float>("", DataType::kFloat, {n}, v));
}

float attr_element(const Model& m, int64_t i) {
  float x;
  std::memcpy(&x, node_named(m.graph, "table")->attr("value")->tensors[0].bytes().data() + 4 * i, 4);
  return x;
}

TEST(SetAttributeValues, UndoOfALargeAttributeKeepsTheEditedRangeNotTheTensor) {
  Model m = model_with_constant();
  History h(m);
  const int64_t weight = kElements * 4;
  int64_t before = heap_bytes();
  h.execute(set_attr_values(1000, std::vector<float>(256, -1.0f)));
  int64_t after_first = heap_bytes();
  EXPECT_LT(after_first - before, weight / 4) << "the first edit kept a copy of the tensor";
  for (int k = 0; k < 20; ++k) h.execute(set_attr_values(5000 + 1000 * k, std::vector<float>(1024, 7.0f)));
  EXPECT_LT(heap_bytes() - after_first, 1 << 20);
  EXPECT_EQ(attr_element(m, 1000), -1.0f);
  EXPECT_EQ(attr_element(m, 24999), 7.0f);
  for (int k = 0; k < 21; ++k) h.undo();
  EXPECT_LT(heap_bytes() - before, 1 << 20);
  EXPECT_EQ(attr_element(m, 1000), 0.0f);
  EXPECT_EQ(attr_element(m, 5000), 0.0f);
  for (int k = 0; k < 21; ++k) h.redo();
  EXPECT_EQ(attr_element(m, 1000), -1.0f);
  EXPECT_EQ(attr_element(m, 25024), 24.0f);
}

TEST(SetAttributeValues, RoundTripsThroughJsonAndNamesWhatIsWrong) {
  Model m = model_with_constant();
  std::unique_ptr<Command> c = command_from_json(json{{"type", "set_attribute_values"},
                                                      {"node", "table"},
                                                      {"name", "value"},
                                                      {"offset", 2},
                                                      {"dtype", "float"},
                                                      {"values", {1.5, "nan"}}});
  expect_round_trip(m, *c, [](const Model& after) {
    EXPECT_EQ(attr_element(after, 2), 1.5f);
    EXPECT_TRUE(std::isnan(attr_element(after, 3)));
    EXPECT_EQ(attr_element(after, 4), 4.0f);
  });
  json j = c->to_json();
  EXPECT_EQ(j["type"], "set_attribute_values");
  EXPECT_EQ(j["values"], json({1.5, "nan"}));
  EXPECT_EQ(c->description(), "Edit attribute 'value' of node 'table'");
  expect_refused(m, *set_attr_values(0, {1.0f}, "nope"), "node 'table' has no tensor attribute 'nope'");
  expect_refused(
      m, *set_attr_values(kElements - 1, {1.0f, 2.0f}),
      fmt::format("values [{}, {}) lie outside attribute 'value' of node 'table', which has {} elements",
                  kElements - 1, kElements + 1, kElements));
  std::unique_ptr<Command> ints = command_from_json(json{{"type", "set_attribute_values"},
                                                         {"node", "table"},
                                                         {"name", "value"},
                                                         {"offset", 0},
                                                         {"dtype", "int64"},
                                                         {"values", {1}}});
  expect_refused(m, *ints, "attribute 'value' of node 'table' holds float, the values given are int64");
}

}  // namespace
}  // namespace tessera::ir::test
