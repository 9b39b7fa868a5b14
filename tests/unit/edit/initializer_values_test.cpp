// set_initializer_values on a large weight: undo keeps the overwritten range, not the tensor. Memory is
// measured with glibc's mallinfo2 (bytes allocated on the heap), so a whole copy of the 16 MiB weight
// kept for undo would show as 16 MiB more.
#include "ir/commands/initializer_values.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstring>

#include "edit_test_util.h"

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

}  // namespace
}  // namespace tessera::ir::test
