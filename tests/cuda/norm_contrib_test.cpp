// The CUDA com.microsoft layer normalisations against the CPU's reference kernels: LayerNormalization,
// SimplifiedLayerNormalization (with their statistics outputs), SkipLayerNormalization and
// SkipSimplifiedLayerNormalization with a full and a broadcast skip, the optional biases and the sum
// output; float32 and float16.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

// As the ONNX forms (norm_test.cpp): float32 1e-5; float16 one unit after float32 math.
double rtol_of(DataType t) {
  return t == DataType::kFloat ? 1e-5 : 2 * type_eps(t);
}
double atol_of(DataType t) {
  return t == DataType::kFloat ? 1e-5 : 4 * type_eps(t);
}

TEST_F(CudaOps, ContribLayerNormalizationsMatchTheReference) {
  uint32_t seed = 6000;
  const std::string ms = "com.microsoft";
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    for (const char* op : {"LayerNormalization", "SimplifiedLayerNormalization"}) {
      const bool simplified = std::string(op) == "SimplifiedLayerNormalization";
      {
        OneNode n =
            node(op, 17, {ir::Attribute::of_int("axis", -1), ir::Attribute::of_float("epsilon", 1e-6f)});
        n.domain = ms;
        n.outputs = simplified ? 2 : 3;
        n.inputs = {random_tensor(t, {4, 130, 768}, -3.0f, 5.0f, seed++),
                    random_tensor(t, {768}, -2.0f, 2.0f, seed++)};
        if (!simplified) n.inputs.push_back(random_tensor(t, {768}, -1.0f, 1.0f, seed++));
        expect_matches(n, rtol_of(t), atol_of(t), label(op, type_name(t)));
      }
    }
    for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
      const bool simplified = std::string(op) == "SkipSimplifiedLayerNormalization";
      for (const rt::Shape& skip : {rt::Shape{2, 100, 256}, rt::Shape{100, 256}}) {
        for (int with_bias : {0, 1}) {
          OneNode n = node(op, 17, {ir::Attribute::of_float("epsilon", 1e-5f)});
          n.domain = ms;
          n.outputs = 4;
          n.inputs = {random_tensor(t, {2, 100, 256}, -3.0f, 5.0f, seed++),
                      random_tensor(t, skip, -1.0f, 1.0f, seed++),
                      random_tensor(t, {256}, -2.0f, 2.0f, seed++)};
          if (!simplified) n.inputs.push_back(random_tensor(t, {256}, -1.0f, 1.0f, seed++));
          if (with_bias) n.inputs.push_back(random_tensor(t, {256}, -0.5f, 0.5f, seed++));
          expect_matches(n, rtol_of(t), atol_of(t), label(op, type_name(t), "skip", rt::shape_str(skip)));
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessera::cuda_test
