// Multinomial: samples class indices from per-batch unnormalised log-probabilities.
#include <fmt/format.h>

#include "ops/dtype_attr.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::AttrType;
using tessera::ir::DataType;
using tessera::ir::Dim;

namespace {

// [batch_size, class_size] -> [batch_size, sample_size] of int32 (default) or int64.
void infer_multinomial(InferenceContext& ctx) {
  DataType elem = dtype_attr(ctx, "dtype", "T2").value_or(DataType::kInt32);
  int64_t samples = ctx.attr_int("sample_size", 1);
  if (samples < 1) ctx.fail(fmt::format("attribute 'sample_size' must be at least 1, got {}", samples));
  require_rank(ctx, 0, 2, "input (log-probabilities [batch_size, class_size])");
  const auto* in = input_shape(ctx, 0);
  Dim batch = in ? (*in)[0] : Dim::unknown();
  set_output(ctx, 0, elem, tessera::ir::Shape{batch, Dim::of(samples)});
}

}  // namespace

TESSERA_REGISTER_OPS(random_multinomial) {
  const char* doc =
      "For each batch row of unnormalised log-probabilities, draws 'sample_size' class indices from the "
      "multinomial distribution they define.";
  for (int v : {7, 22}) {
    reg.add(OpSchema("Multinomial", v)
                .category(Category::kTensorCreation)
                .doc(doc)
                .input("input", "T1")
                .output("output", "T2")
                .attr("dtype", int64_t{6})
                .attr("sample_size", int64_t{1})
                .attr_optional("seed", AttrType::kFloat)
                .types("T1", v >= 22 ? types::kFloatBf16 : types::kFloat)
                .types("T2", types::tensors({"int32", "int64"}))
                .infer(infer_multinomial));
  }
}
