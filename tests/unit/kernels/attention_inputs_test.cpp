// ONNX Attention's shared attribute and input checks (ops/attention/attention_inputs.h), which the CPU
// reference and the CUDA kernel both run: each bad attribute or input is an error naming what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace tessera {
namespace {

using ir::Attribute;
using ir::DataType;
using kernel_test::make;
using rt::Tensor;

Tensor zeros(rt::Shape shape) {
  return Tensor::zeros(DataType::kFloat, std::move(shape));
}

std::string error_of(int opset, const std::vector<Tensor>& ins, std::vector<Attribute> attrs = {}) {
  return kernel_test::run_error("Attention", opset, ins, std::move(attrs), {});
}

// Q [1, 2, 3, 4], K and V [1, 2, 5, 4]: valid on their own.
std::vector<Tensor> qkv() {
  return {zeros({1, 2, 3, 4}), zeros({1, 2, 5, 4}), zeros({1, 2, 5, 4})};
}

TEST(AttentionInputs, ValidInputsRun) {
  EXPECT_EQ(error_of(23, qkv()), "");
  EXPECT_EQ(error_of(23, qkv(), {Attribute::of_int("is_causal", 1), Attribute::of_float("scale", 0.5f)}), "");
}

TEST(AttentionInputs, AttributesAreChecked) {
  EXPECT_THAT(error_of(23, qkv(), {Attribute::of_int("qk_matmul_output_mode", 4)}),
              ::testing::HasSubstr("qk_matmul_output_mode must be 0, 1, 2 or 3, got 4"));
  std::vector<Tensor> packed{zeros({1, 3, 8}), zeros({1, 5, 8}), zeros({1, 5, 8})};
  EXPECT_THAT(error_of(23, packed),
              ::testing::HasSubstr("3-D Q, K and V need positive attributes q_num_heads and kv_num_heads"));
  EXPECT_THAT(
      error_of(23, packed, {Attribute::of_int("q_num_heads", 3), Attribute::of_int("kv_num_heads", 3)}),
      ::testing::HasSubstr("hidden size 8 of Q is not divisible by 3 heads"));
  EXPECT_EQ(error_of(23, packed, {Attribute::of_int("q_num_heads", 2), Attribute::of_int("kv_num_heads", 2)}),
            "");
}

TEST(AttentionInputs, ShapesAndCachesAreChecked) {
  auto ins = qkv();
  ins[2] = zeros({1, 2, 6, 4});
  EXPECT_THAT(error_of(23, ins), ::testing::HasSubstr("K and V sequence lengths differ: 5 and 6"));
  ins = qkv();
  ins.resize(6);
  ins[4] = zeros({1, 2, 7, 4});  // past_key without past_value
  EXPECT_THAT(error_of(23, ins), ::testing::HasSubstr("past_key and past_value must be given together"));
  ins[5] = zeros({1, 2, 7, 3});
  EXPECT_THAT(error_of(23, ins),
              ::testing::HasSubstr("past_value [1,2,7,3] must be (batch 1, kv_heads 2, past_seq, 4)"));
}

TEST(AttentionInputs, NonpadLengthsAreChecked) {
  auto ins = qkv();
  ins.resize(7);
  ins[6] = make<int64_t>(DataType::kInt64, {1}, {9});
  EXPECT_THAT(error_of(24, ins), ::testing::HasSubstr("nonpad_kv_seqlen[0] = 9 is outside [0, 5]"));
  ins[6] = make<int64_t>(DataType::kInt64, {2}, {1, 2});
  EXPECT_THAT(error_of(24, ins), ::testing::HasSubstr("nonpad_kv_seqlen must be int64 of shape [1]"));
  ins[6] = make<int64_t>(DataType::kInt64, {1}, {5});
  EXPECT_EQ(error_of(24, ins), "");
}

}  // namespace
}  // namespace tessera
