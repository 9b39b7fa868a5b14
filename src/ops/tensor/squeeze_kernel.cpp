// Reference kernels of Squeeze and Unsqueeze: views of the input with size-1 axes removed or inserted.
// The axes are an attribute before opset 13 and an input from 13.
#include <fmt/format.h>

#include <optional>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

// The axes of the node, from the attribute (< 13) or the optional input 1; nullopt when not given.
std::optional<std::vector<int64_t>> axes_of(const KernelContext& ctx) {
  if (ctx.info().since_version() < 13) {
    if (!ctx.info().has_attr("axes")) return std::nullopt;
    return ctx.info().get_ints("axes");
  }
  if (!ctx.has_input(1)) return std::nullopt;
  if (ctx.input(1).rank() > 1)
    ctx.fail(fmt::format("input 'axes' must be 1-D, got {}", rt::shape_str(ctx.input(1).shape())));
  return int_input(ctx, 1, "axes");
}

void squeeze(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& s = x.shape();
  auto axes = axes_of(ctx);
  std::vector<bool> drop(s.size(), false);
  if (!axes || axes->empty()) {
    // No axes (or an empty list, as ONNX Runtime reads it): every size-1 axis.
    for (size_t k = 0; k < s.size(); ++k) drop[k] = s[k] == 1;
  } else {
    for (int64_t a : normalize_axes(*axes, x.rank())) {
      if (s[a] != 1)
        ctx.fail(fmt::format("cannot squeeze axis {} of shape {}: its size is not 1", a, rt::shape_str(s)));
      drop[a] = true;
    }
  }
  Shape out;
  for (size_t k = 0; k < s.size(); ++k)
    if (!drop[k]) out.push_back(s[k]);
  ctx.set_output(0, x.reshaped(out));
}

void unsqueeze(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto axes = axes_of(ctx);
  if (!axes) ctx.fail("Unsqueeze needs 'axes'");
  const int64_t out_rank = x.rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> added(static_cast<size_t>(out_rank), false);
  for (int64_t a : normalize_axes(*axes, out_rank)) added[a] = true;
  Shape out;
  size_t next = 0;
  for (int64_t k = 0; k < out_rank; ++k) out.push_back(added[k] ? 1 : x.shape()[next++]);
  ctx.set_output(0, x.reshaped(out));
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_squeeze) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Squeeze", squeeze));
  reg.add(KernelDef::fn("Unsqueeze", unsqueeze));
}
