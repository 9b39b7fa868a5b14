// The CUDA Det against the CPU's reference: batches of matrices of several sizes, a singular one and a
// 1 x 1, float32, float16 and float64.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

TEST_F(CudaOps, DetMatchesTheReference) {
  OneNode a = node("Det", 11);
  a.inputs = {random_tensor(DataType::kFloat, {50, 4, 4}, -2, 2, 1)};
  expect_matches(a, 1e-5, 1e-5, "Det 4x4");
  OneNode b = node("Det", 11);
  b.inputs = {random_tensor(DataType::kDouble, {2, 3, 7, 7}, -2, 2, 2)};
  expect_matches(b, 1e-12, 1e-12, "Det 7x7 float64");
  OneNode c = node("Det", 11);
  c.inputs = {floats(DataType::kFloat, {2, 2, 2}, {1, 2, 2, 4, 0, 0, 0, 0})};
  expect_matches(c, 0, 0, "Det singular");
  OneNode d = node("Det", 11);
  d.inputs = {random_tensor(DataType::kFloat16, {9, 1, 1}, -2, 2, 3)};
  expect_matches(d, 0, 0, "Det 1x1 float16");
  OneNode e = node("Det", 11);
  e.inputs = {random_tensor(DataType::kFloat, {3, 3}, -2, 2, 4)};
  expect_matches(e, 1e-5, 1e-5, "Det one matrix");
}

}  // namespace
}  // namespace tessera::cuda_test
