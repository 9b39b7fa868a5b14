// Reference kernel of DequantizeLinear: y = (x - zero_point) * scale, computed in float (as the ONNX
// reference does) and stored in the output type: 'output_dtype' (opset 23+), else the scale's type
// (opset 19+), else float. Per tensor, per axis or per block like QuantizeLinear.
#include "ops/quant/quant_kernel_util.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;

void dequantize_linear(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  const rt::Tensor& scale = ctx.input(1);
  const int ver = ctx.info().since_version();
  const QuantLayout layout = quant_layout(ctx, ver >= 13, ver >= 21);
  const QuantType q = quant_type(x.dtype(), "DequantizeLinear x");
  const rt::Tensor* zp_t = ctx.optional_input(2);
  if (zp_t && zp_t->dtype() != x.dtype())
    ctx.fail(fmt::format("x_zero_point is {} but x is {}; they must have the same type",
                         tessera::ir::dtype_name(zp_t->dtype()), tessera::ir::dtype_name(x.dtype())));
  rt::DataType out = ver >= 19 ? scale.dtype() : rt::DataType::kFloat;
  if (ver >= 23) {
    const auto attr = static_cast<rt::DataType>(ctx.info().get_int("output_dtype", 0));
    if (attr != rt::DataType::kUndefined) out = attr;
  }
  const std::vector<double> s = float_values(scale, "DequantizeLinear x_scale");
  std::vector<float> zp(s.size(), 0.0f);
  if (zp_t)
    for (int64_t k = 0; k < zp_t->numel(); ++k) zp[static_cast<size_t>(k)] = quant_value(*zp_t, q, k);
  rt::Tensor& y = ctx.output(0, out, x.shape());
  rt::dispatch(rt::FloatTypes{}, out, "DequantizeLinear output", [&]<class T>() {
    T* o = y.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const auto p = static_cast<size_t>(layout.param_index(i));
      const float v = (quant_value(x, q, i) - zp[p]) * static_cast<float>(s[p]);
      store_d(o, i, v);
    }
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(quant_dequantize_linear) {
  reg.add(tessera::rt::KernelDef::fn("DequantizeLinear", dequantize_linear));
}
