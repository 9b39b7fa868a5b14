// The CUDA NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against the CPU's reference kernel: [N, C]
// and [N, C, d1, d2] scores, class weights or none, ignore_index, reductions none / sum / mean, int32 and
// int64 targets, float32 and float16; SoftmaxCrossEntropyLoss the same way, with log_prob; and a target out
// of range is a clear error.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

// Random targets in [0, classes), with some positions set to `ignore`.
rt::Tensor targets(DataType t, const rt::Shape& shape, int64_t classes, int64_t ignore, uint32_t seed) {
  std::mt19937 rng(seed);
  rt::Tensor out = rt::Tensor::zeros(t, shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const int64_t v = rng() % 7 == 0 ? ignore : static_cast<int64_t>(rng() % static_cast<uint32_t>(classes));
    if (t == DataType::kInt32)
      out.data<int32_t>()[i] = static_cast<int32_t>(v);
    else
      out.data<int64_t>()[i] = v;
  }
  return out;
}

// float32: compensated float32 sums of at most 4000 terms: 1e-5; float16: one unit of the type.
TEST_F(CudaOps, NegativeLogLikelihoodLossMatchesTheReference) {
  uint32_t seed = 8000;
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    for (const rt::Shape& shape : {rt::Shape{500, 10}, rt::Shape{4, 5, 30, 20}}) {
      rt::Shape tshape = shape;
      tshape.erase(tshape.begin() + 1);
      for (const char* reduction : {"none", "sum", "mean"}) {
        for (int variant = 0; variant < 3; ++variant) {  // plain, weights, weights + ignore_index
          std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("reduction", reduction)};
          if (variant == 2) attrs.push_back(ir::Attribute::of_int("ignore_index", 2));
          OneNode n = node("NegativeLogLikelihoodLoss", 13, attrs);
          n.inputs = {random_tensor(t, shape, -5.0f, 0.0f, seed++),
                      targets(variant == 1 ? DataType::kInt32 : DataType::kInt64, tshape, shape[1],
                              variant == 2 ? 2 : 0, seed++)};
          if (variant > 0) n.inputs.push_back(random_tensor(t, {shape[1]}, 0.2f, 2.0f, seed++));
          expect_matches(
              n, t == DataType::kFloat ? 1e-5 : 2 * type_eps(t), 1e-6,
              label("NegativeLogLikelihoodLoss", type_name(t), rt::shape_str(shape), reduction, variant));
        }
      }
    }
  }
}

// SoftmaxCrossEntropyLoss with its log_prob output. float16 rounds the log-probabilities once before the
// loss reads them: 2 units of the type.
TEST_F(CudaOps, SoftmaxCrossEntropyLossMatchesTheReference) {
  uint32_t seed = 9000;
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    for (const rt::Shape& shape : {rt::Shape{500, 10}, rt::Shape{4, 5, 30, 20}}) {
      rt::Shape tshape = shape;
      tshape.erase(tshape.begin() + 1);
      for (const char* reduction : {"none", "sum", "mean"}) {
        for (int variant = 0; variant < 3; ++variant) {
          std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("reduction", reduction)};
          if (variant == 2) attrs.push_back(ir::Attribute::of_int("ignore_index", 2));
          OneNode n = node("SoftmaxCrossEntropyLoss", 13, attrs);
          n.outputs = 2;
          n.inputs = {random_tensor(t, shape, -5.0f, 5.0f, seed++),
                      targets(variant == 1 ? DataType::kInt32 : DataType::kInt64, tshape, shape[1],
                              variant == 2 ? 2 : 0, seed++)};
          if (variant > 0) n.inputs.push_back(random_tensor(t, {shape[1]}, 0.2f, 2.0f, seed++));
          expect_matches(
              n, t == DataType::kFloat ? 1e-5 : 4 * type_eps(t), 1e-6,
              label("SoftmaxCrossEntropyLoss", type_name(t), rt::shape_str(shape), reduction, variant));
        }
      }
    }
  }
}

TEST_F(CudaOps, NegativeLogLikelihoodLossNamesABadTarget) {
  OneNode n = node("NegativeLogLikelihoodLoss", 13, {ir::Attribute::of_string("reduction", "none")});
  n.inputs = {random_tensor(DataType::kFloat, {3, 4}, -1.0f, 0.0f, 1), ints({3}, {0, 7, 1})};
  try {
    run_both(n);
    FAIL() << "an out-of-range target was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("target value 7 at position 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::cuda_test
