// The CUDA TopK against the CPU's reference kernel: largest and smallest, along the last and an inner
// axis, rows from 1 to 2048 elements (padding of the bitonic sort), ties (lower index first), NaN;
// float32, float16, int32 and int64; K from the input (opset 11) and from the attribute (opset 1).
// Values and indices must be exact.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

TEST_F(CudaOps, TopKMatchesTheReference) {
  struct Case {
    rt::Shape shape;
    int64_t axis, k;
  };
  const std::vector<Case> cases = {
      {{300, 1000}, -1, 10}, {{64, 2048}, 1, 2048}, {{8, 37, 5}, 1, 7}, {{1000, 1}, 1, 1}, {{3, 129}, 1, 0}};
  uint32_t seed = 4000;
  // TopK's schema (before opset 24) has no bfloat16.
  for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kInt32, DataType::kInt64}) {
    for (const auto& c : cases) {
      for (int largest : {0, 1}) {
        OneNode n = node("TopK", 11,
                         {ir::Attribute::of_int("axis", c.axis), ir::Attribute::of_int("largest", largest)});
        n.outputs = 2;
        // A narrow range: many ties.
        n.inputs = {random_tensor(t, c.shape, -50.0f, 50.0f, seed++), ints({1}, {c.k})};
        expect_matches(n, 0, 0, label("TopK", type_name(t), rt::shape_str(c.shape)));
      }
    }
  }
  OneNode old = node("TopK", 1, {ir::Attribute::of_int("k", 3)});
  old.outputs = 2;
  old.inputs = {random_tensor(DataType::kFloat, {20, 50}, -1.0f, 1.0f, 9)};
  expect_matches(old, 0, 0, "TopK opset 1");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int largest : {0, 1}) {
    OneNode n = node("TopK", 11, {ir::Attribute::of_int("largest", largest)});
    n.outputs = 2;
    n.inputs = {floats(DataType::kFloat, {2, 5}, {3, nan, 1, nan, 3, 2, 2, 2, -1, 2}), ints({1}, {4})};
    expect_matches(n, 0, 0, "TopK NaN");
  }
}

}  // namespace
}  // namespace tessera::cuda_test
