// Reference kernel of DynamicQuantizeLinear: uint8 quantization of x with scale = (max - min) / 255
// over its range widened to include 0, zero point = saturate(round(-min / scale)), and
// y = saturate(round(x / scale) + zero point); rounding half to even, arithmetic in float as the spec's
// formula. An all-zero (or empty) x gives scale 0, zero point 0 and y 0.
#include "ops/quant/quant_kernel_util.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;

void dynamic_quantize_linear(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "DynamicQuantizeLinear", [&]<class T>() {
    const T* in = x.data<T>();
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const auto v = static_cast<float>(load_d(in, i));
      if (std::isnan(v)) ctx.fail(fmt::format("input x holds NaN at position {}; its range is undefined", i));
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const float scale = (hi - lo) / 255.0f;
    auto clamp = [](float v) { return std::min(255.0f, std::max(0.0f, v)); };
    const float zp = scale == 0 ? 0.0f : clamp(std::nearbyint(0.0f - lo / scale));
    rt::Tensor& y = ctx.output(0, rt::DataType::kUint8, x.shape());
    uint8_t* out = y.data<uint8_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float v = scale == 0 ? zp : clamp(std::nearbyint(static_cast<float>(load_d(in, i)) / scale) + zp);
      out[i] = static_cast<uint8_t>(v);
    }
    ctx.output(1, rt::DataType::kFloat, {}).data<float>()[0] = scale;
    ctx.output(2, rt::DataType::kUint8, {}).data<uint8_t>()[0] = static_cast<uint8_t>(zp);
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(quant_dynamic_quantize_linear) {
  reg.add(tessera::rt::KernelDef::fn("DynamicQuantizeLinear", dynamic_quantize_linear));
}
