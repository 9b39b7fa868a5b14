// Reference kernel of EyeLike: a 2-D tensor of the input's shape with ones on diagonal k.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void eye_like(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) ctx.fail(fmt::format("input must be 2-D, got {}", rt::shape_str(x.shape())));
  DataType dt = x.dtype();
  if (ctx.info().has_attr("dtype")) {
    int64_t v = ctx.info().get_int("dtype");
    if (v <= 0 || !tessera::ir::is_valid_dtype(static_cast<int32_t>(v)))
      ctx.fail(fmt::format("attribute 'dtype' is {}, not a known data type", v));
    dt = static_cast<DataType>(v);
  }
  const int64_t k = ctx.info().get_int("k", 0);
  const int64_t rows = x.dim(0), cols = x.dim(1);
  Tensor& y = ctx.output(0, dt, x.shape());
  rt::dispatch(rt::NumericBoolTypes{}, dt, "EyeLike", [&]<class T>() {
    T* out = y.data<T>();
    std::fill(out, out + y.numel(), static_cast<T>(0));
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t j = i + k;
      if (j >= 0 && j < cols) out[i * cols + j] = static_cast<T>(1);
    }
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_eye_like) {
  reg.add(tessera::rt::KernelDef::fn("EyeLike", eye_like));
}
