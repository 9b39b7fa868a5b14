// The CUDA Softmax, LogSoftmax and Hardmax against the CPU's reference kernels (double arithmetic):
// every team size (a thread, a warp, a block per row), rows along an inner axis, opset 11's 2-D
// coercion, logits in the thousands and ties.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

struct SoftmaxCase {
  rt::Shape shape;
  int64_t axis;
  int opset;
};

// float32: exp within 2 ulp and a float32 sum: 16 ulp relative; the half types round once after float32
// math, so they may differ from the reference's rounding by one unit: 1 ulp of the type (2 near the
// bottom of a binade). LogSoftmax is (x - max) - log(sum), two terms of one sign: relative too. The
// absolute term covers results below the type's normal range (float16 subnormals step by 6e-8).
TEST_F(CudaOps, SoftmaxFamilyMatchesTheReference) {
  const std::vector<SoftmaxCase> cases = {{{300, 1000}, -1, 13},     // a warp per row, registers
                                          {{24, 197, 197}, -1, 13},  // attention scores, 7 per lane
                                          {{40, 1024}, -1, 13},      // the longest rows in registers
                                          {{40, 1025}, -1, 13},      // a block per row
                                          {{2048, 37}, 1, 13},       // a warp per row
                                          {{4000, 5}, -1, 13},       // a thread per row
                                          {{3, 50, 7}, 1, 13},       // along a middle axis, a warp
                                          {{4, 20, 1500}, 1, 13},    // along a middle axis, a thread
                                          {{4, 5, 6}, 1, 11},        // coerced to [4, 30]
                                          {{2, 30000}, 0, 13},       // two elements, 30000 apart
                                          {{1, 70000}, -1, 13}};     // one long row
  uint32_t seed = 1;
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
      for (const auto& c : cases) {
        if (c.opset < 13 && t == DataType::kBFloat16) continue;  // bfloat16 came with opset 13
        OneNode n = node(op, c.opset, {ir::Attribute::of_int("axis", c.axis)});
        n.inputs = {random_tensor(t, c.shape, -3000.0f, 3000.0f, seed++)};
        const double eps = type_eps(t);
        const double rtol = t == DataType::kFloat ? 16 * eps : 2 * eps;
        // LogSoftmax's log(sum) is within about an ulp of 1.0 absolute (the float32 sum near 1 rounds
        // there), which is what an output near 0 sees: 2 ulp of 1.0.
        const bool log = std::string_view(op) == "LogSoftmax";
        const double atol = log ? 2 * 0x1p-23 : t == DataType::kFloat16 ? 6e-8 : 1e-37;
        expect_matches(n, rtol, atol, label(op, type_name(t), rt::shape_str(c.shape)));
        // Moderate logits, where no output underflows.
        n.inputs = {random_tensor(t, c.shape, -4.0f, 4.0f, seed++)};
        expect_matches(n, rtol, atol, label(op, "small", type_name(t), rt::shape_str(c.shape)));
      }
    }
  }
}

TEST_F(CudaOps, HardmaxPicksTheFirstMaximumAndSoftmaxSurvivesHugeLogits) {
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    OneNode n = node("Hardmax", 13);
    n.inputs = {floats(t, {3, 4}, {1, 5, 5, 2, 7, 7, 7, 7, -1, -3, -1, -2})};
    Outputs r = run_both(n);
    ASSERT_EQ(r.gpu_nodes, 1u);
    const std::vector<double> want = {0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(r.gpu[0].to_double(static_cast<int64_t>(i)), want[i]) << i;
  }
  OneNode s = node("Softmax", 13);
  s.inputs = {floats(DataType::kFloat, {1, 3}, {10000.0f, 10000.0f, -10000.0f})};
  Outputs r = run_both(s);
  EXPECT_EQ(r.gpu[0].to_double(0), 0.5);
  EXPECT_EQ(r.gpu[0].to_double(1), 0.5);
  EXPECT_EQ(r.gpu[0].to_double(2), 0.0);
}

}  // namespace
}  // namespace tessera::cuda_test
