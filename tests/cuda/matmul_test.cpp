// The cuBLASLt MatMul, Gemm and MatMulBias kernels against the CPU's reference kernels: BERT/GPT-2 sized
// products, batched attention, 1-D operands, broadcast batches, odd sizes, Gemm's transposes, alpha,
// beta and every form of C, in float32, float16 and bfloat16.
//
// Error bound per element: 2 * K * 2^-23 * sum_k |a_ik||b_kj| (float32 accumulation of K products on
// either side; float16/bfloat16 products are exact in float32) plus 1 ulp of the element type at the
// result's magnitude (each side rounds once to it).
#include "conv_test_util.h"

using namespace cuda_test;

namespace {

constexpr DataType kTypes[] = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16};

void check_matmul(const rt::Shape& a, const rt::Shape& b, DataType t) {
  Node n = make_node("MatMul", t, {a, b});
  std::vector<rt::Tensor> ins = {random_tensor(t, a, 1), random_tensor(t, b, 2)};
  Result r = run_both(n, ins);
  expect_within(r, static_cast<double>(a.back()), 1,
                "MatMul " + rt::shape_str(a) + " x " + rt::shape_str(b) + " " + type_name(t));
}

}  // namespace

TEST_F(CudaBlas, MatMulLinearLayersAndAttention) {
  for (DataType t : kTypes) {
    check_matmul({1, 128, 768}, {768, 3072}, t);        // BERT's intermediate layer: the batch folds into M
    check_matmul({2, 12, 64, 64}, {2, 12, 64, 64}, t);  // attention scores, strided batched
    check_matmul({7, 13}, {13, 5}, t);                  // odd sizes
  }
}

TEST_F(CudaBlas, MatMulVectorsAndBroadcastBatches) {
  check_matmul({13}, {13, 5}, DataType::kFloat);                   // 1-D A: a row vector
  check_matmul({3, 7, 13}, {13}, DataType::kFloat);                // 1-D B: a column vector
  check_matmul({13}, {13}, DataType::kFloat);                      // dot product
  check_matmul({7, 13}, {4, 13, 5}, DataType::kFloat);             // A shared by B's batch
  check_matmul({2, 1, 7, 13}, {1, 3, 13, 5}, DataType::kFloat16);  // both broadcast
  check_matmul({3, 1, 0}, {0, 4}, DataType::kFloat);               // K = 0: zeros
  check_matmul({0, 5}, {5, 4}, DataType::kFloat);                  // empty
}

TEST_F(CudaBlas, GemmTransposesScalesAndC) {
  struct C {
    bool ta, tb;
    float alpha, beta;
    rt::Shape c;  // empty vector: no C
    bool has_c;
  };
  const int64_t m = 37, k = 129, n = 61;
  std::vector<C> cases = {{false, false, 1.f, 1.f, {n}, true},       // bias row: the epilogue
                          {true, false, 0.5f, 2.f, {m, n}, true},    // full C, beta
                          {false, true, 1.f, 1.f, {m, 1}, true},     // column C
                          {true, true, -1.5f, 0.25f, {1, n}, true},  // row C with beta
                          {false, false, 1.f, 1.f, {}, true},        // scalar C
                          {false, true, 2.f, 1.f, {}, false}};       // no C
  for (DataType t : kTypes) {
    for (const auto& c : cases) {
      rt::Shape as = c.ta ? rt::Shape{k, m} : rt::Shape{m, k}, bs = c.tb ? rt::Shape{n, k} : rt::Shape{k, n};
      Node node = make_node("Gemm", t, {as, bs});
      node.attrs = {ir::Attribute::of_int("transA", c.ta), ir::Attribute::of_int("transB", c.tb),
                    ir::Attribute::of_float("alpha", c.alpha), ir::Attribute::of_float("beta", c.beta)};
      std::vector<rt::Tensor> ins = {random_tensor(t, as, 3), random_tensor(t, bs, 4)};
      if (c.has_c) {
        node.shapes.push_back(c.c);
        ins.push_back(random_tensor(t, c.c, 5));
      }
      Result r = run_both(node, ins);
      // Bound: |alpha| sum|a||b| + |beta||c|; C is rounded to the element type before beta scales it.
      expect_within(r, static_cast<double>(k) * 2, 2,
                    "Gemm " + rt::shape_str(as) + " " + rt::shape_str(bs) + " " + type_name(t));
    }
  }
}

TEST_F(CudaBlas, MatMulBiasAddsTheBiasInTheEpilogue) {
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    Node n = make_node("MatMulBias", t, {{2, 33, 96}, {96, 130}, {130}}, {}, "com.tessera");
    std::vector<rt::Tensor> ins = {random_tensor(t, {2, 33, 96}, 6), random_tensor(t, {96, 130}, 7),
                                   random_tensor(t, {130}, 8)};
    Result r = run_both(n, ins);
    expect_within(r, 97, 1, "MatMulBias " + type_name(t));
  }
}

TEST_F(CudaBlas, FusedMatMulTransposesAndScales) {
  struct Case {
    rt::Shape a, b;
    bool ta, tb;
  };
  std::vector<Case> cases = {{{2, 3, 13, 7}, {2, 3, 5, 13}, true, true},  // strided batched, both transposed
                             {{4, 13, 7}, {13, 5}, true, false},          // A's batch cannot fold: per entry
                             {{4, 7, 13}, {5, 13}, false, true},          // folded, B transposed
                             {{13}, {5, 13}, true, true}};                // a vector ignores its transpose
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    for (const auto& c : cases) {
      Node n = make_node("FusedMatMul", t, {c.a, c.b},
                         {ir::Attribute::of_float("alpha", 0.125f), ir::Attribute::of_int("transA", c.ta),
                          ir::Attribute::of_int("transB", c.tb)},
                         "com.microsoft");
      Result r = run_both(n, {random_tensor(t, c.a, 9), random_tensor(t, c.b, 10)});
      expect_within(r, 13, 1,
                    "FusedMatMul " + rt::shape_str(c.a) + " x " + rt::shape_str(c.b) + " " + type_name(t));
    }
  }
}
