// NonZero: the indices of the non-zero elements, one column per element.
#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;

namespace {

void infer_non_zero(InferenceContext& ctx) {
  auto rank = tensor::input_rank(ctx, 0);
  // The count of non-zero elements depends on the data.
  set_output(ctx, 0, tessera::ir::DataType::kInt64,
             tessera::ir::Shape{rank ? Dim::of(*rank) : Dim::unknown(), Dim::unknown()});
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_non_zero) {
  for (int v : {9, 13}) {
    reg.add(OpSchema("NonZero", v)
                .category(Category::kTensorShape)
                .doc("Returns the indices of the non-zero elements as a [rank, count] int64 tensor.")
                .input("X", "T")
                .output("Y", "tensor(int64)")
                .types("T", tensor::all_types(v))
                .infer(infer_non_zero));
  }
}
