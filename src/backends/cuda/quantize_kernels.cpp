// The CUDA backend's QuantizeLinear and DequantizeLinear (opsets 10 to 25): every quantized type of the
// CPU reference, per tensor, per axis (13+) or per block (21+). Scale and zero point stay on the device;
// their layout against x is checked on the host from the shapes (ops/quant/quant_kernel_util.h).
#include <fmt/format.h>

#include "backends/cuda/data_util.h"
#include "backends/cuda/kernel_util.h"
#include "backends/cuda/quantize_ops.h"
#include "ops/quant/quant_kernel_util.h"

namespace tessera::cuda {

namespace {

using rt::DataType;

// The device kernels' view of a quantized type; its range and storage come from the CPU reference's table
// (ops/quant/quant_kernel_util.h), so both take the same types. nullopt for a type that is not one.
std::optional<QuantSide> quant_side(DataType t) {
  ops::kernels::QuantType q;
  try {
    q = ops::kernels::quant_type(t, "QuantizeLinear");
  } catch (const rt::KernelError&) {
    return std::nullopt;
  }
  QuantSide side;
  side.bits = q.bits;
  side.lo = q.lo;
  side.hi = q.hi;
  if (q.e8m0) {
    side.kind = QuantSide::Kind::kE8M0;
  } else if (q.mini) {
    const ops::float8::MiniFloat* m = q.mini;
    side.kind = QuantSide::Kind::kMiniFloat;
    side.bits = ir::dtype_bits(t);
    side.mini = MiniFloatLayout{m->exp_bits, m->mant_bits, m->bias, m->has_inf,
                                m->uz,       m->has_nan,   m->max,  m->nan_code};
  }
  return side;
}

bool float_type(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kDouble;
}

QuantParams params_of(const ops::kernels::QuantLayout& l) {
  QuantParams p;
  p.mode = l.mode == ops::kernels::QuantLayout::kTensor ? 0
           : l.mode == ops::kernels::QuantLayout::kAxis ? 1
                                                        : 2;
  p.inner = l.inner;
  p.dim = l.dim;
  p.blocks = l.blocks;
  p.block = l.block > 0 ? l.block : 1;
  return p;
}

// The output type: the zero point's, else 'output_dtype' (21+), else uint8; undefined when they disagree.
DataType quantize_output(const rt::KernelInfo& info) {
  DataType out = DataType::kUndefined;
  if (info.since_version() >= 21) out = static_cast<DataType>(info.get_int("output_dtype", 0));
  if (info.has_input(2)) {
    const DataType zp = info.input_dtype(2);
    return out == DataType::kUndefined || out == zp ? zp : DataType::kUndefined;
  }
  return out == DataType::kUndefined ? DataType::kUint8 : out;
}

bool quantize_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !info.has_input(0) || !info.has_input(1)) return false;
  const DataType x = info.input_dtype(0), out = quantize_output(info);
  if (!float_type(x) && x != DataType::kInt32) return false;
  if (!float_type(info.input_dtype(1))) return false;
  return out != DataType::kInt32 && quant_side(out).has_value();
}

class Quantize : public rt::OpKernel {
 public:
  explicit Quantize(const rt::KernelInfo& info)
      : out_(quantize_output(info)),
        saturate_(info.since_version() < 19 || info.get_int("saturate", 1) != 0) {}
  void compute(rt::KernelContext& ctx) const override {
    const int ver = ctx.info().since_version();
    const auto layout = ops::kernels::quant_layout(ctx, ver >= 13, ver >= 21);
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor& scale = ctx.input(1);
    const rt::Tensor* zp = ctx.optional_input(2);
    rt::Tensor& y = ctx.output_uninitialized(0, out_, x.shape());
    launch_quantize(*scalar_type(x.dtype()), x.raw(), *scalar_type(scale.dtype()), scale.raw(),
                    zp ? zp->raw() : nullptr, *quant_side(out_), y.raw(), x.numel(), params_of(layout),
                    saturate_, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  DataType out_;
  bool saturate_;
};

// The output type: 'output_dtype' (23+) when set, else the scale's (19+), else float.
DataType dequantize_output(const rt::KernelInfo& info) {
  if (info.since_version() >= 23) {
    const auto attr = static_cast<DataType>(info.get_int("output_dtype", 0));
    if (attr != DataType::kUndefined) return attr;
  }
  return info.since_version() >= 19 ? info.input_dtype(1) : DataType::kFloat;
}

bool dequantize_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !info.has_input(0) || !info.has_input(1)) return false;
  const DataType x = info.input_dtype(0);
  if (info.has_input(2) && info.input_dtype(2) != x) return false;  // the CPU names the mismatch
  return quant_side(x) && float_type(info.input_dtype(1)) && float_type(dequantize_output(info));
}

class Dequantize : public rt::OpKernel {
 public:
  explicit Dequantize(const rt::KernelInfo& info) : out_(dequantize_output(info)) {}
  void compute(rt::KernelContext& ctx) const override {
    const int ver = ctx.info().since_version();
    const auto layout = ops::kernels::quant_layout(ctx, ver >= 13, ver >= 21);
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor& scale = ctx.input(1);
    const rt::Tensor* zp = ctx.optional_input(2);
    rt::Tensor& y = ctx.output_uninitialized(0, out_, x.shape());
    launch_dequantize(*quant_side(x.dtype()), x.raw(), zp ? zp->raw() : nullptr, *scalar_type(scale.dtype()),
                      scale.raw(), *scalar_type(out_), y.raw(), x.numel(), params_of(layout),
                      native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  DataType out_;
};

void dynamic_quantize(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  rt::Tensor& y = ctx.output_uninitialized(0, DataType::kUint8, x.shape());
  rt::Tensor& scale = ctx.output_uninitialized(1, DataType::kFloat, {});
  rt::Tensor& zp = ctx.output_uninitialized(2, DataType::kUint8, {});
  launch_dynamic_quantize(*scalar_type(x.dtype()), x.raw(), x.numel(), static_cast<uint8_t*>(y.raw()),
                          static_cast<float*>(scale.raw()), static_cast<uint8_t*>(zp.raw()),
                          native(ctx.stream()));
  check_launch(ctx);
}

bool dynamic_quantize_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !info.has_input(0)) return false;
  const DataType x = info.input_dtype(0);
  return x == DataType::kFloat || x == DataType::kFloat16 || x == DataType::kBFloat16;
}

}  // namespace

void register_quantize_kernels(KernelTable& t) {
  t.add(cuda_def("DynamicQuantizeLinear", dynamic_quantize_supported,
                 [](const rt::KernelInfo& i) -> rt::KernelPtr {
                   return std::make_unique<rt::FnKernel>(dynamic_quantize);
                 }));
  t.add(cuda_def("QuantizeLinear", quantize_supported,
                 [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Quantize>(i); }));
  t.add(cuda_def("DequantizeLinear", dequantize_supported,
                 [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Dequantize>(i); }));
}

}  // namespace tessera::cuda
