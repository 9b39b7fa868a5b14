// Binarizer (ai.onnx.ml 1): 1 where a value exceeds the threshold, else 0.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/ml/ml_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::AttrType;
using ir::DataType;
using ir::Dim;
using ir::Shape;

TESSERA_REGISTER_OPS(ml_binarizer) {
  reg.add(OpSchema("Binarizer", 1, "ai.onnx.ml")
              .category(Category::kMachineLearning)
              .doc("Maps each value to 1 when it is greater than threshold and to 0 otherwise, keeping type "
                   "and shape.")
              .input("X", "T")
              .output("Y", "T")
              .types("T", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)"})
              .attr("threshold", 0.0f)
              .infer(infer_same_as_input0));
}
