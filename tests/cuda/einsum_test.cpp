// The CUDA Einsum against the CPU's reference: matrix and batched products, diagonals, transposes,
// full sums, implicit outputs, ellipsis broadcasting, three operands; float32, float16, float64, int64.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

OneNode einsum(const std::string& eq, std::vector<rt::Tensor> ins, int opset = 12) {
  OneNode n = node("Einsum", opset, {ir::Attribute::of_string("equation", eq)});
  n.inputs = std::move(ins);
  return n;
}

TEST_F(CudaOps, EinsumMatchesTheReference) {
  const DataType f = DataType::kFloat;
  auto r = [](DataType t, rt::Shape s, uint32_t seed) { return random_tensor(t, std::move(s), -2, 2, seed); };
  expect_matches(einsum("ij,jk->ik", {r(f, {37, 23}, 1), r(f, {23, 41}, 2)}), 1e-5, 1e-5, "matmul");
  expect_matches(einsum("bij,bjk->bik", {r(f, {3, 5, 7}, 3), r(f, {3, 7, 4}, 4)}), 1e-5, 1e-5,
                 "batch matmul");
  expect_matches(einsum("ii->i", {r(f, {9, 9}, 5)}), 1e-6, 1e-6, "diagonal");
  expect_matches(einsum("...ii->...i", {r(f, {2, 3, 5, 5}, 6)}), 1e-6, 1e-6, "batch diagonal");
  expect_matches(einsum("ij->ji", {r(f, {13, 17}, 7)}), 0, 0, "transpose");
  expect_matches(einsum("ij->", {r(f, {40, 50}, 8)}), 1e-5, 1e-4, "sum");
  expect_matches(einsum("i,i", {r(f, {300}, 9), r(f, {300}, 10)}), 1e-5, 1e-5, "inner product");
  expect_matches(einsum("...j,j->...", {r(f, {4, 6, 11}, 11), r(f, {11}, 12)}), 1e-5, 1e-5, "ellipsis");
  expect_matches(einsum("ij,jk,kl->il", {r(f, {5, 6}, 13), r(f, {6, 7}, 14), r(f, {7, 3}, 15)}), 1e-5, 1e-5,
                 "three operands");
  expect_matches(
      einsum("bij,bjk->bik", {r(DataType::kFloat16, {2, 4, 8}, 16), r(DataType::kFloat16, {2, 8, 3}, 17)}),
      2e-2, 2e-2, "float16");
  expect_matches(einsum("ij,jk->ik", {r(DataType::kDouble, {6, 9}, 18), r(DataType::kDouble, {9, 5}, 19)}),
                 1e-12, 1e-12, "float64");
  expect_matches(einsum("ij,jk->ik", {r(DataType::kInt64, {6, 9}, 20), r(DataType::kInt64, {9, 5}, 21)}), 0,
                 0, "int64");
}

}  // namespace
}  // namespace tessera::cuda_test
