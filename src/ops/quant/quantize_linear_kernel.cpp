// Reference kernel of QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point) for the
// integer types; for float8 / float4e2m1 / float8e8m0, x / scale (+ zero point, which is 0) is
// converted to the type, saturating or not per 'saturate'. The output type is the zero point's, else
// 'output_dtype' (opset 21+), else uint8. x / scale is computed in float for float, float16 and
// bfloat16 inputs (as ONNX Runtime does) and in double for int32.
#include "ops/quant/quant_kernel_util.h"

namespace {

namespace rt = tessera::rt;
namespace float8 = tessera::ops::float8;
using namespace tessera::ops::kernels;

rt::DataType output_dtype(const rt::KernelContext& ctx) {
  const int ver = ctx.info().since_version();
  rt::DataType out = rt::DataType::kUndefined;
  if (ver >= 21) out = static_cast<rt::DataType>(ctx.info().get_int("output_dtype", 0));
  if (const rt::Tensor* zp = ctx.optional_input(2)) {
    if (out != rt::DataType::kUndefined && out != zp->dtype())
      ctx.fail(fmt::format("attribute 'output_dtype' is {} but the zero point is {}; they must agree",
                           tessera::ir::dtype_name(out), tessera::ir::dtype_name(zp->dtype())));
    return zp->dtype();
  }
  return out == rt::DataType::kUndefined ? rt::DataType::kUint8 : out;
}

void quantize_linear(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  const rt::Tensor& scale = ctx.input(1);
  const int ver = ctx.info().since_version();
  const QuantLayout layout = quant_layout(ctx, ver >= 13, ver >= 21);
  const QuantType q = quant_type(output_dtype(ctx), "QuantizeLinear output");
  if (q.dt == rt::DataType::kInt32) ctx.fail("QuantizeLinear cannot produce int32");
  const bool saturate = ver < 19 || ctx.info().get_int("saturate", 1) != 0;
  const std::vector<double> s = float_values(scale, "QuantizeLinear y_scale");
  const rt::Tensor* zp_t = ctx.optional_input(2);
  std::vector<float> zp(s.size(), 0.0f);
  if (zp_t) {
    const QuantType zq = quant_type(zp_t->dtype(), "QuantizeLinear y_zero_point");
    for (int64_t k = 0; k < zp_t->numel(); ++k) zp[static_cast<size_t>(k)] = quant_value(*zp_t, zq, k);
  }
  rt::Tensor& y = zeroed_output(ctx, 0, q.dt, x.shape());
  auto quantize_one = [&](int64_t i, double v) {
    const auto p = static_cast<size_t>(layout.param_index(i));
    if (q.is_int) {
      double r = std::isnan(v) ? 0.0 : std::nearbyint(v) + zp[p];
      r = std::min(std::max(r, static_cast<double>(q.lo)), static_cast<double>(q.hi));
      store_code(y, q, i, static_cast<int64_t>(r));
    } else if (q.e8m0) {
      store_code(y, q, i,
                 float8::float_to_e8m0(static_cast<float>(v + zp[p]), saturate, float8::E8M0Round::kUp));
    } else {
      store_code(y, q, i, float8::encode(*q.mini, v + zp[p], saturate));
    }
  };
  if (x.dtype() == rt::DataType::kInt32) {
    const int32_t* in = x.data<int32_t>();
    for (int64_t i = 0; i < x.numel(); ++i)
      quantize_one(i, static_cast<double>(in[i]) / s[static_cast<size_t>(layout.param_index(i))]);
    return;
  }
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "QuantizeLinear x", [&]<class T>() {
    const T* in = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double sc = s[static_cast<size_t>(layout.param_index(i))];
      const double v = std::is_same_v<T, double>
                           ? load_d(in, i) / sc
                           : static_cast<double>(static_cast<float>(load_d(in, i)) / static_cast<float>(sc));
      quantize_one(i, v);
    }
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(quant_quantize_linear) {
  reg.add(tessera::rt::KernelDef::fn("QuantizeLinear", quantize_linear));
}
