// The CUDA AffineGrid against the CPU's reference: 2-D and 3-D, with and without align_corners, a
// length-1 axis (its coordinate is 0), float32 and float16 theta.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

TEST_F(CudaOps, AffineGridMatchesTheReference) {
  for (int64_t align : {0, 1}) {
    const std::vector<ir::Attribute> a = {ir::Attribute::of_int("align_corners", align)};
    OneNode two = node("AffineGrid", 20, a);
    two.inputs = {random_tensor(DataType::kFloat, {3, 2, 3}, -2, 2, 1), ints({4}, {3, 5, 31, 17})};
    expect_matches(two, 1e-6, 1e-6, label("2-D align", align));
    OneNode three = node("AffineGrid", 20, a);
    three.inputs = {random_tensor(DataType::kFloat, {2, 3, 4}, -2, 2, 2), ints({5}, {2, 1, 6, 1, 9})};
    expect_matches(three, 1e-6, 1e-6, label("3-D align", align));
    OneNode half = node("AffineGrid", 20, a);
    half.inputs = {random_tensor(DataType::kFloat16, {2, 2, 3}, -2, 2, 3), ints({4}, {2, 1, 8, 8})};
    expect_matches(half, 2e-3, 2e-3, label("float16 align", align));
  }
}

}  // namespace
}  // namespace tessera::cuda_test
