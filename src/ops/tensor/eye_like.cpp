// EyeLike: a 2-D tensor with ones on one diagonal, shaped like its input.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::DataType;

namespace {

void infer_eye_like(InferenceContext& ctx) {
  require_rank(ctx, 0, 2, "input 'input'");
  DataType elem = input_elem(ctx, 0);
  if (ctx.has_attr("dtype")) {
    int64_t dt = ctx.attr_int("dtype");
    if (!tessera::ir::is_valid_dtype(static_cast<int32_t>(dt)) || dt == 0) {
      ctx.fail(fmt::format("attribute 'dtype' is {}, not a known data type", dt));
    }
    elem = static_cast<DataType>(dt);
  }
  const tessera::ir::Shape* s = input_shape(ctx, 0);
  set_output(ctx, 0, elem, s ? std::optional(*s) : std::nullopt);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_eye_like) {
  for (int v : {9, 22}) {
    auto t = types::concat({v < 22 ? types::kNumeric : types::kNumericBf16, types::tensors({"bool"})});
    reg.add(OpSchema("EyeLike", v)
                .category(Category::kTensorCreation)
                .doc("Makes a 2-D tensor of the input's shape with ones on diagonal k and zeros elsewhere.")
                .attr_optional("dtype", tessera::ir::AttrType::kInt, "Output type; the input's when not set.")
                .attr("k", int64_t{0}, "Diagonal: 0 the main one, positive above it, negative below.")
                .input("input", "T1")
                .output("output", "T2")
                .types("T1", t)
                .types("T2", t)
                .infer(infer_eye_like));
  }
}
