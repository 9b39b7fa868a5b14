// Reference kernel of ConstantOfShape: a tensor of the given shape filled with the one element of the
// 'value' attribute (float 0 when absent).
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

class ConstantOfShape : public rt::OpKernel {
 public:
  explicit ConstantOfShape(const rt::KernelInfo& info) {
    if (const tessera::ir::Tensor* t = info.get_tensor("value")) {
      value_ = Tensor::from_ir(*t);
      if (value_.numel() != 1)
        throw KernelError(fmt::format("attribute 'value' must hold one element, it has {}", value_.numel()));
    } else {
      value_ = Tensor::scalar<float>(DataType::kFloat, 0.0f);
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& s = ctx.input(0);
    if (s.rank() > 1) ctx.fail(fmt::format("input 'input' must be 1-D, got {}", rt::shape_str(s.shape())));
    Shape shape = int_input(ctx, 0, "input");
    for (int64_t d : shape)
      if (d < 0) ctx.fail(fmt::format("input 'input' {} has a negative dimension", rt::shape_str(shape)));
    Tensor& y = ctx.output(0, value_.dtype(), shape);
    dispatch_storage(value_.dtype(), "ConstantOfShape", [&]<class S>() {
      ElemSrc<S> src(value_);
      ElemDst<S> dst(y);
      std::fill(dst.data(), dst.data() + y.numel(), src[0]);
      dst.commit();
    });
  }

 private:
  Tensor value_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_constant_of_shape) {
  reg.add(tessera::rt::KernelDef::of<ConstantOfShape>("ConstantOfShape"));
}
