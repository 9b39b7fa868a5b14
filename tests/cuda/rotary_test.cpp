// The CUDA RotaryEmbedding against the CPU's reference: 4-D and 3-D (num_heads) inputs, interleaved
// pairs or halves, a partial rotary_embedding_dim, caches indexed by position_ids or per (batch, seq),
// float32 and float16.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

TEST_F(CudaOps, RotaryEmbeddingMatchesTheReference) {
  using ir::Attribute;
  const rt::Tensor ids = ints({2, 5}, {0, 3, 9, 2, 2, 7, 1, 0, 4, 8});
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    const double tol = t == DataType::kFloat ? 1e-6 : 2e-3;
    uint32_t seed = 50;
    for (int64_t interleaved : {0, 1}) {
      for (int64_t rot : {0, 4}) {
        const int64_t half = rot == 0 ? 4 : rot / 2;  // head size 8
        std::vector<Attribute> a = {Attribute::of_int("interleaved", interleaved)};
        if (rot) a.push_back(Attribute::of_int("rotary_embedding_dim", rot));
        OneNode four = node("RotaryEmbedding", 23, a);
        four.inputs = {random_tensor(t, {2, 3, 5, 8}, -2, 2, seed++),
                       random_tensor(t, {10, half}, -1, 1, seed++),
                       random_tensor(t, {10, half}, -1, 1, seed++), ids};
        expect_matches(four, tol, tol, label("4-D", type_name(t), interleaved, rot));
        std::vector<Attribute> a3 = a;
        a3.push_back(Attribute::of_int("num_heads", 3));
        OneNode three = node("RotaryEmbedding", 23, a3);
        three.inputs = {random_tensor(t, {2, 5, 24}, -2, 2, seed++),
                        random_tensor(t, {2, 5, half}, -1, 1, seed++),
                        random_tensor(t, {2, 5, half}, -1, 1, seed++)};
        expect_matches(three, tol, tol, label("3-D no position_ids", type_name(t), interleaved, rot));
      }
    }
  }
}

}  // namespace
}  // namespace tessera::cuda_test
