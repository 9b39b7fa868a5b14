// Reference kernels of IsInf and IsNaN: a bool tensor of X's shape. Besides the 16/32/64-bit floats
// they take the float8 types (opset 20), which are read bit by bit: e4m3fn has NaN (S.1111.111) but
// no infinity, the "fnuz" types have a single NaN (0x80) and no infinity, e5m2 is IEEE-like.
#include <cmath>
#include <cstdint>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::ir::DataType;
using tessera::rt::FloatTypes;
using tessera::rt::KernelInfo;
using tessera::rt::OpKernel;

enum class Float8Class { kFinite, kPosInf, kNegInf, kNaN };

Float8Class classify_float8(DataType dt, uint8_t b) {
  switch (dt) {
    case DataType::kFloat8E4M3FN:
      return (b & 0x7f) == 0x7f ? Float8Class::kNaN : Float8Class::kFinite;
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2FNUZ:
      return b == 0x80 ? Float8Class::kNaN : Float8Class::kFinite;
    case DataType::kFloat8E5M2:
      if ((b & 0x7c) != 0x7c) return Float8Class::kFinite;
      if ((b & 0x03) != 0) return Float8Class::kNaN;
      return (b & 0x80) ? Float8Class::kNegInf : Float8Class::kPosInf;
    default:
      return Float8Class::kFinite;
  }
}

bool is_float8(DataType dt) {
  return dt == DataType::kFloat8E4M3FN || dt == DataType::kFloat8E4M3FNUZ || dt == DataType::kFloat8E5M2 ||
         dt == DataType::kFloat8E5M2FNUZ;
}

// Y[i] = pred(x[i]) for the float types, float8 elements classified by their bits.
template <class FloatPred, class Float8Pred>
void mask(KernelContext& ctx, FloatPred&& pred, Float8Pred&& pred8) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, DataType::kBool, x.shape());
  bool* out = y.data<bool>();
  const int64_t n = x.numel();
  if (is_float8(x.dtype())) {
    const uint8_t* in = x.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) out[i] = pred8(classify_float8(x.dtype(), in[i]));
    return;
  }
  tessera::rt::dispatch(FloatTypes{}, x.dtype(), ctx.info().op_type(), [&]<class T>() {
    const T* in = x.data<T>();
    ctx.threads().parallel_for(n, 16384, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = pred(static_cast<tessera::rt::compute_t<T>>(in[i]));
    });
  });
}

class IsInf : public OpKernel {
 public:
  explicit IsInf(const KernelInfo& info)
      : negative_(info.get_int("detect_negative") != 0), positive_(info.get_int("detect_positive") != 0) {}
  void compute(KernelContext& ctx) const override {
    mask(
        ctx, [this](auto v) { return std::isinf(v) && (v > 0 ? positive_ : negative_); },
        [this](Float8Class c) {
          return (c == Float8Class::kPosInf && positive_) || (c == Float8Class::kNegInf && negative_);
        });
  }

 private:
  bool negative_, positive_;
};

void is_nan(KernelContext& ctx) {
  mask(
      ctx, [](auto v) { return std::isnan(v); }, [](Float8Class c) { return c == Float8Class::kNaN; });
}

}  // namespace

TESSERA_REGISTER_KERNELS(math_is_inf_nan) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<IsInf>("IsInf"));
  reg.add(KernelDef::fn("IsNaN", is_nan));
}
