// Reference kernel of ArrayFeatureExtractor (ai.onnx.ml): picks entries of X's last axis by index. A 1-D
// X counts as one row, giving [1, K] (as ONNX Runtime does).
#include <fmt/format.h>

#include "ops/control/tensor_slices.h"
#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Shape;
using tessera::rt::Tensor;

void array_feature_extractor(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  switch (x.dtype()) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kString:
      break;
    default:
      ctx.fail(fmt::format("input 'X' has unsupported element type {}", tessera::ir::dtype_name(x.dtype())));
  }
  if (ind.dtype() != DataType::kInt64)
    ctx.fail(fmt::format("input 'Y' (indices) must be int64, got {}", tessera::ir::dtype_name(ind.dtype())));
  if (x.rank() == 0) ctx.fail("input 'X' must have at least one dimension");
  const int64_t cols = x.dim(-1);
  const int64_t k = ind.numel();
  const int64_t* idx = ind.data<int64_t>();
  for (int64_t j = 0; j < k; ++j)
    if (idx[j] < 0 || idx[j] >= cols)
      ctx.fail(
          fmt::format("index {} (Y[{}]) is out of range for the last axis of X of size {}", idx[j], j, cols));
  Shape out = x.rank() == 1 ? Shape{1} : Shape(x.shape().begin(), x.shape().end() - 1);
  out.push_back(k);
  Tensor& y = ctx.output(0, x.dtype(), out);
  const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j)
      tessera::ops::kernels::copy_elements(x, r * cols + idx[j], y, r * k + j, 1);
}

}  // namespace

TESSERA_REGISTER_KERNELS(ml_array_feature_extractor) {
  reg.add(
      tessera::rt::KernelDef::fn("ArrayFeatureExtractor", array_feature_extractor).in_domain("ai.onnx.ml"));
}
