// MelWeightMatrix: the matrix that maps linear-frequency DFT bins onto mel-scale bands.
#include <fmt/format.h>

#include "ops/dtype_attr.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Dim;

namespace {

// A scalar integer constant input, checked positive; unknown when not a constant.
Dim positive_scalar(const InferenceContext& ctx, size_t i, const char* what) {
  auto c = constant_ints(ctx, i);
  if (!c || c->size() != 1) return Dim::unknown();
  if ((*c)[0] <= 0) ctx.fail_input(i, fmt::format("{} must be positive, got {}", what, (*c)[0]));
  return Dim::of((*c)[0]);
}

// [floor(dft_length / 2) + 1, num_mel_bins] of type 'output_datatype'.
void infer_mel(InferenceContext& ctx) {
  DataType elem = dtype_attr(ctx, "output_datatype", "T3").value_or(DataType::kFloat);
  for (size_t i = 0; i < 5; ++i) {
    const auto* s = input_shape(ctx, i);
    if (s && !s->empty()) {
      ctx.fail_input(
          i, fmt::format("input {} must be a scalar, got shape {}", i, tessera::ir::shape_to_string(*s)));
    }
  }
  Dim bins = positive_scalar(ctx, 0, "num_mel_bins");
  Dim dft = positive_scalar(ctx, 1, "dft_length");
  positive_scalar(ctx, 2, "sample_rate");
  Dim rows = dft.is_static() ? Dim::of(dft.value / 2 + 1) : Dim::unknown();
  set_output(ctx, 0, elem, tessera::ir::Shape{rows, bins});
}

}  // namespace

TESSERA_REGISTER_OPS(signal_mel_weight_matrix) {
  reg.add(
      OpSchema("MelWeightMatrix", 17)
          .category(Category::kImage)
          .doc("Builds the weights that turn the onesided spectrum of a DFT into 'num_mel_bins' triangular "
               "mel-scale bands between the lower and upper edge frequencies.")
          .input("num_mel_bins", "T1")
          .input("dft_length", "T1")
          .input("sample_rate", "T1")
          .input("lower_edge_hertz", "T2")
          .input("upper_edge_hertz", "T2")
          .output("output", "T3")
          .attr("output_datatype", int64_t{1})
          .types("T1", types::tensors({"int32", "int64"}))
          .types("T2", types::kFloatBf16)
          .types("T3", types::concat({types::kFloatBf16, types::kSignedInt, types::kUnsignedInt}))
          .infer(infer_mel));
}
