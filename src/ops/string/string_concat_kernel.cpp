// Reference kernel of StringConcat: elementwise concatenation of two string tensors, with broadcasting.
#include <fmt/format.h>

#include "runtime/broadcast.h"
#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Tensor;

void string_concat(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  for (const Tensor* t : {&a, &b})
    if (t->dtype() != DataType::kString)
      ctx.fail(fmt::format("input {} must be a string tensor, got {}", t == &a ? "X" : "Y",
                           tessera::ir::dtype_name(t->dtype())));
  tessera::rt::Shape out = tessera::rt::broadcast_shapes(a.shape(), b.shape());
  Tensor& y = ctx.output(0, DataType::kString, out);
  const std::string* pa = a.data<std::string>();
  const std::string* pb = b.data<std::string>();
  std::string* py = y.data<std::string>();
  tessera::rt::for_each_broadcast<2>(
      &ctx.threads(), out, {&a.shape(), &b.shape()},
      [&](int64_t i, const std::array<int64_t, 2>& o) { py[i] = pa[o[0]] + pb[o[1]]; });
}

}  // namespace

TESSERA_REGISTER_KERNELS(string_string_concat) {
  reg.add(tessera::rt::KernelDef::fn("StringConcat", string_concat));
}
