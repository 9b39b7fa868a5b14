// The CUDA Col2Im against the CPU's reference: 2-D and 3-D images, strides, dilations and pads (blocks
// overlapping, skipping pixels, and reaching into the padding), float32 and float16.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

// Blocks along one axis: floor((image + pads - dilation * (block - 1) - 1) / stride) + 1.
int64_t blocks(int64_t image, int64_t block, int64_t stride, int64_t dilation, int64_t pads) {
  return (image + pads - dilation * (block - 1) - 1) / stride + 1;
}

TEST_F(CudaOps, Col2ImMatchesTheReference) {
  using ir::Attribute;
  struct Case {
    std::vector<int64_t> image, block, strides, dilations, pads;
  };
  const std::vector<Case> cases = {{{9, 11}, {3, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                                   {{9, 11}, {3, 3}, {2, 3}, {1, 2}, {1, 2, 0, 1}},
                                   {{6, 7, 5}, {2, 3, 2}, {2, 1, 2}, {2, 1, 1}, {1, 0, 1, 1, 1, 0}}};
  uint32_t seed = 70;
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    for (const Case& c : cases) {
      const size_t k = c.image.size();
      int64_t per = 1, l = 1;
      for (size_t d = 0; d < k; ++d) {
        per *= c.block[d];
        l *= blocks(c.image[d], c.block[d], c.strides[d], c.dilations[d], c.pads[d] + c.pads[d + k]);
      }
      OneNode n = node("Col2Im", 18,
                       {Attribute::of_ints("strides", c.strides),
                        Attribute::of_ints("dilations", c.dilations), Attribute::of_ints("pads", c.pads)});
      n.inputs = {random_tensor(t, {2, 3 * per, l}, -2, 2, seed++), ints({static_cast<int64_t>(k)}, c.image),
                  ints({static_cast<int64_t>(k)}, c.block)};
      const double tol = t == DataType::kFloat ? 1e-5 : 4e-3;
      expect_matches(n, tol, tol, label("Col2Im", type_name(t), k, "-D"));
    }
  }
}

}  // namespace
}  // namespace tessera::cuda_test
