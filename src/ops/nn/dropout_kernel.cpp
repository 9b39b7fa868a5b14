// Reference kernel of Dropout. At inference (always before opset 12; from opset 12 unless the
// training_mode input is true) the output is the input, shared without a copy, and the mask is all
// true (all ones before opset 10, where it has X's type). In training each element is kept with
// probability 1 - ratio and scaled by 1 / (1 - ratio); the `seed` attribute makes the draw
// reproducible (std::mt19937 seeded with it, the same on every run), without it the draw is random.
#include <fmt/format.h>

#include <random>

#include "ops/reduce/reduce_kernel_util.h"
#include "ops/tensor/float8_kernel_util.h"

namespace {

namespace rt = tessera::rt;
namespace float8 = tessera::ops::float8;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

// The float8 layout of dtype, or nullptr (float4e2m1 is packed and not a Dropout type).
const float8::MiniFloat* float8_of(rt::DataType dt) {
  return dt == rt::DataType::kFloat4E2M1 ? nullptr : float8::minifloat_of(dt);
}

// The value of a one-element tensor of any numeric or float8 type.
double scalar_value(const Tensor& t) {
  if (const float8::MiniFloat* f = float8_of(t.dtype()))
    return float8::decode(*f, *static_cast<const uint8_t*>(t.raw()));
  return t.to_double(0);
}

void fill_mask_true(KernelContext& ctx, const Tensor& x) {
  if (ctx.output_count() < 2 || !ctx.wants_output(1)) return;
  if (ctx.info().since_version() >= 10) {
    Tensor& m = ctx.output(1, rt::DataType::kBool, x.shape());
    std::fill_n(m.data<bool>(), m.numel(), true);
    return;
  }
  Tensor& m = ctx.output(1, x.dtype(), x.shape());
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "Dropout", [&]<class T>() {
    T* p = m.data<T>();
    for (int64_t i = 0; i < m.numel(); ++i) store_d(p, i, 1.0);
  });
}

void dropout(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int ver = ctx.info().since_version();
  double ratio = 0.5;
  bool training = false;
  if (ver >= 12) {
    if (const Tensor* r = ctx.optional_input(1)) {
      if (r->numel() != 1)
        ctx.fail(fmt::format("input 1 ('ratio') must be a scalar, got shape {}", rt::shape_str(r->shape())));
      ratio = scalar_value(*r);
    }
    if (const Tensor* t = ctx.optional_input(2)) {
      if (t->numel() != 1)
        ctx.fail(fmt::format("input 2 ('training_mode') must be a scalar, got shape {}",
                             rt::shape_str(t->shape())));
      training = t->to_double(0) != 0;
    }
  } else {
    ratio = ctx.info().get_float("ratio", 0.5f);
  }
  if (!(ratio >= 0 && ratio < 1)) ctx.fail(fmt::format("ratio is {}; it must be in [0, 1)", ratio));
  if (!training || ratio == 0) {
    ctx.set_output(0, ctx.value(0));
    fill_mask_true(ctx, x);
    return;
  }
  std::mt19937 gen = ctx.info().has_attr("seed")
                         ? std::mt19937(static_cast<uint32_t>(ctx.info().get_int("seed")))
                         : std::mt19937(std::random_device{}());
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  const bool want_mask = ctx.output_count() > 1 && ctx.wants_output(1);
  bool* mask = want_mask ? ctx.output(1, rt::DataType::kBool, x.shape()).data<bool>() : nullptr;
  const double scale = 1.0 / (1.0 - ratio);
  if (const float8::MiniFloat* f = float8_of(x.dtype())) {
    // float8 data: scale in float, round back to the type (saturating, as Cast does by default).
    const auto* in = static_cast<const uint8_t*>(x.raw());
    auto* out = static_cast<uint8_t*>(y.raw());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const bool keep = uniform(gen) >= ratio;
      out[i] = float8::encode(*f, keep ? float8::decode(*f, in[i]) * scale : 0.0, true);
      if (mask) mask[i] = keep;
    }
    return;
  }
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "Dropout (training)", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const bool keep = uniform(gen) >= ratio;
      store_d(out, i, keep ? load_d(in, i) * scale : 0.0);
      if (mask) mask[i] = keep;
    }
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(nn_dropout) {
  reg.add(tessera::rt::KernelDef::fn("Dropout", dropout));
}
