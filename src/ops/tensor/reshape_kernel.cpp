// Reference kernel of Reshape: the input's storage under a new shape, without a copy. A 0 in the target
// copies the input's dimension (unless allowzero, from 14, makes it a real 0) and one -1 is inferred.
#include <fmt/format.h>

#include "ops/tensor/reshape_shape.h"
#include "ops/tensor/tensor_kernel_util.h"

namespace tessera::ops {

rt::Shape resolve_reshape(const rt::Shape& in, const std::vector<int64_t>& target, bool allowzero) {
  auto fail = [&](const std::string& why) -> void {
    throw rt::KernelError(
        fmt::format("cannot reshape {} to {}: {}", rt::shape_str(in), rt::shape_str(target), why));
  };
  rt::Shape out(target.size());
  int infer_at = -1;
  int64_t known = 1;
  bool has_zero = false;
  for (size_t k = 0; k < target.size(); ++k) {
    int64_t d = target[k];
    if (d == -1) {
      if (infer_at >= 0) fail("more than one -1");
      infer_at = static_cast<int>(k);
      continue;
    }
    if (d < -1) fail(fmt::format("{} is not a dimension", d));
    if (d == 0 && !allowzero) {
      if (k >= in.size()) fail(fmt::format("0 at position {} copies a dimension the input lacks", k));
      d = in[k];
    }
    has_zero |= d == 0;
    out[k] = d;
    if (__builtin_mul_overflow(known, d, &known)) fail("too many elements");
  }
  const int64_t n = rt::shape_numel(in);
  if (infer_at >= 0) {
    if (allowzero && has_zero) fail("allowzero with both 0 and -1");
    if (known == 0) {
      if (n != 0) fail("-1 next to a 0 dimension");
      out[infer_at] = 0;  // 0 elements: any size fits; 0 is what ONNX Runtime picks
    } else {
      if (n % known != 0) fail(fmt::format("{} elements do not divide by {}", n, known));
      out[infer_at] = n / known;
    }
  } else if (known != n) {
    fail(fmt::format("{} elements, the target has {}", n, known));
  }
  return out;
}

}  // namespace tessera::ops

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void reshape(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> target;
  bool allowzero = false;
  if (ctx.info().since_version() < 5) {
    target = ctx.info().get_ints("shape");
  } else {
    const Tensor& s = ctx.input(1);
    if (s.rank() != 1) ctx.fail(fmt::format("input 'shape' must be 1-D, got {}", rt::shape_str(s.shape())));
    target = int_input(ctx, 1, "shape");
    allowzero = ctx.info().since_version() >= 14 && ctx.info().get_int("allowzero", 0) != 0;
  }
  ctx.set_output(0, x.reshaped(tessera::ops::resolve_reshape(x.shape(), target, allowzero)));
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_reshape) {
  reg.add(tessera::rt::KernelDef::fn("Reshape", reshape));
}
