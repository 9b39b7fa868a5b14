// The CUDA backend's kernels for ONNX Runtime contrib ops (com.microsoft) that Tessera's own fusion rules
// emit and that no other family covers: the GELU forms (fuse_gelu, fuse_bias_gelu).
#include <fmt/format.h>

#include "backends/cuda/gelu.h"
#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernel_util.h"

namespace tessera::cuda {

namespace {

// X and an optional bias of X's element type whose length is X's last dimension (inferred shapes).
bool gelu_inputs(const rt::KernelInfo& info, size_t max_inputs) {
  if (info.input_count() < 1 || info.input_count() > max_inputs) return false;
  if (!elem_type(info.input_dtype(0))) return false;
  if (!info.has_input(1)) return true;
  if (info.input_dtype(1) != info.input_dtype(0)) return false;
  const auto& b = info.input_type(1).shape;
  return b && b->size() == 1;
}

class GeluKernel : public rt::OpKernel {
 public:
  GeluKernel(GeluForm form, float alpha) : form_(form), alpha_(alpha) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor* bias = ctx.optional_input(1);
    int64_t last = x.shape().empty() ? 1 : x.shape().back();
    if (bias && (bias->numel() != last || last == 0))
      ctx.fail(
          fmt::format("the bias has {} elements, the input's last dimension is {}", bias->numel(), last));
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
    launch_gelu(form_, *elem_type(x.dtype()), x.raw(), bias ? bias->raw() : nullptr, last, y.raw(), x.numel(),
                alpha_, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  GeluForm form_;
  float alpha_;
};

rt::KernelDef contrib(const char* op, size_t max_inputs, GeluForm form) {
  auto d = cuda_def(
      op, [max_inputs](const rt::KernelInfo& i) { return gelu_inputs(i, max_inputs); },
      [form](const rt::KernelInfo& i) -> rt::KernelPtr {
        return std::make_unique<GeluKernel>(form, i.get_float("alpha", 1.702f));
      });
  d.domain = "com.microsoft";
  return d;
}

}  // namespace

void register_contrib_kernels(KernelTable& t) {
  t.add(contrib("Gelu", 1, GeluForm::kErf));
  t.add(contrib("BiasGelu", 2, GeluForm::kErf));
  t.add(contrib("FastGelu", 2, GeluForm::kTanh));
  t.add(contrib("QuickGelu", 1, GeluForm::kQuick));
}

}  // namespace tessera::cuda
