// Reference kernels of the activations of activation.cpp. The formulas are the spec's; where the
// textbook form overflows (exp of a large x in Sigmoid, Softplus, Mish) an equivalent stable form is
// used. Attributes are read once, when the session is built. Floating-point elements are computed in
// double and rounded once (activation_map): a composite formula in float (x * sigmoid(alpha x), the
// GELUs) loses up to |alpha x| ulps to the rounding of its intermediate steps, and these kernels are
// the oracle of the fast ones (docs/accuracy.md).
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <type_traits>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::rt::FloatTypes;
using tessera::rt::KernelInfo;
using tessera::rt::NumericTypes;
using tessera::rt::OpKernel;
using FloatSignedTypes = tessera::rt::TypeList<float, double, tessera::rt::Float16, tessera::rt::BFloat16,
                                               int8_t, int16_t, int32_t, int64_t>;

// 1 / (1 + exp(-x)) without overflowing exp for large |x|.
template <class C>
C sigmoid(C x) {
  if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
  C e = std::exp(x);
  return e / (C(1) + e);
}

// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)), exact for large |x| too.
template <class C>
C softplus(C x) {
  return std::max(x, C(0)) + std::log1p(std::exp(-std::abs(x)));
}

// y[i] = f(x[i]) for the element types in List; floating types computed in double, rounded once.
template <class List, class F>
void activation_map(KernelContext& ctx, F&& f) {
  const Tensor& x = ctx.input(0);
  tessera::rt::dispatch(List{}, x.dtype(), ctx.info().op_type(), [&]<class T>() {
    using C = std::conditional_t<tessera::rt::is_float_v<T>, double, tessera::rt::compute_t<T>>;
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    const T* in = x.data<T>();
    T* out = y.data<T>();
    ctx.threads().parallel_for(x.numel(), 16384, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        C v = static_cast<C>(static_cast<tessera::rt::compute_t<T>>(in[i]));
        out[i] = static_cast<T>(static_cast<tessera::rt::compute_t<T>>(f(v)));
      }
    });
  });
}

// An activation whose formula object Fn reads its attributes from the node once; Fn::operator() maps
// one element in compute_t<T>.
template <class Fn, class List = FloatTypes>
class Activation : public OpKernel {
 public:
  explicit Activation(const KernelInfo& info) : fn_(info) {}
  void compute(KernelContext& ctx) const override { activation_map<List>(ctx, fn_); }

 private:
  Fn fn_;
};

struct Elu {
  float alpha;
  explicit Elu(const KernelInfo& info) : alpha(info.get_float("alpha")) {}
  template <class C>
  C operator()(C x) const {
    return x >= C(0) ? x : C(alpha) * std::expm1(x);
  }
};

struct Selu {
  float alpha, gamma;
  explicit Selu(const KernelInfo& info) : alpha(info.get_float("alpha")), gamma(info.get_float("gamma")) {}
  template <class C>
  C operator()(C x) const {
    return x > C(0) ? C(gamma) * x : C(gamma) * C(alpha) * std::expm1(x);
  }
};

struct LeakyRelu {
  float alpha;
  explicit LeakyRelu(const KernelInfo& info) : alpha(info.get_float("alpha")) {}
  template <class C>
  C operator()(C x) const {
    return x >= C(0) ? x : C(alpha) * x;
  }
};

struct HardSigmoid {
  float alpha, beta;
  explicit HardSigmoid(const KernelInfo& info)
      : alpha(info.get_float("alpha")), beta(info.get_float("beta")) {}
  template <class C>
  C operator()(C x) const {
    C y = C(alpha) * x + C(beta);
    return y != y ? y : std::max(C(0), std::min(C(1), y));  // NaN stays NaN (std::min would drop it)
  }
};

struct ThresholdedRelu {
  float alpha;
  explicit ThresholdedRelu(const KernelInfo& info) : alpha(info.get_float("alpha")) {}
  template <class C>
  C operator()(C x) const {
    return x > C(alpha) ? x : C(0);
  }
};

struct Celu {
  float alpha;
  explicit Celu(const KernelInfo& info) : alpha(info.get_float("alpha")) {
    if (alpha == 0) throw tessera::rt::KernelError("Celu: attribute 'alpha' must not be 0");
  }
  template <class C>
  C operator()(C x) const {
    return std::max(C(0), x) + std::min(C(0), C(alpha) * std::expm1(x / C(alpha)));
  }
};

// Shrink takes integers too: the comparison and the bias are applied in double and the result is
// converted back (truncating, wrapping for unsigned types as ONNX Runtime's cast does).
struct Shrink {
  float bias, lambd;
  explicit Shrink(const KernelInfo& info) : bias(info.get_float("bias")), lambd(info.get_float("lambd")) {}
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      double v = static_cast<double>(x);
      if (v < -static_cast<double>(lambd)) return from_double<C>(v + bias);
      if (v > static_cast<double>(lambd)) return from_double<C>(v - bias);
      return C(0);
    } else {
      if (x < -C(lambd)) return x + C(bias);
      if (x > C(lambd)) return x - C(bias);
      return C(0);
    }
  }
};

struct Swish {
  float alpha;
  explicit Swish(const KernelInfo& info) : alpha(info.get_float("alpha")) {}
  template <class C>
  C operator()(C x) const {
    return x * sigmoid(C(alpha) * x);
  }
};

// approximate='none': x * Phi(x) through erf; 'tanh': the tanh approximation of the spec.
struct Gelu {
  bool tanh_approx;
  explicit Gelu(const KernelInfo& info) {
    std::string mode = info.get_string("approximate", "none");
    if (mode != "none" && mode != "tanh")
      throw tessera::rt::KernelError("Gelu: attribute 'approximate' is '" + mode +
                                     "'; it must be 'none' or 'tanh'");
    tanh_approx = mode == "tanh";
  }
  template <class C>
  C operator()(C x) const {
    if (tanh_approx) {
      const C k = static_cast<C>(std::sqrt(2.0 / std::numbers::pi));
      // x (1 + tanh z) / 2 = x sigmoid(2 z): 1 + tanh z cancels for negative x.
      return x / (C(1) + std::exp(C(-2) * k * (x + C(0.044715) * x * x * x)));
    }
    // x Phi(x) = x erfc(-x / sqrt 2) / 2: 1 + erf(x / sqrt 2) cancels for negative x.
    return C(0.5) * x * std::erfc(-x * static_cast<C>(1.0 / std::numbers::sqrt2));
  }
};

void relu(KernelContext& ctx) {
  unary_map<FloatSignedTypes>(ctx, [](auto x) { return x < 0 ? decltype(x)(0) : x; });
}
void sigmoid_kernel(KernelContext& ctx) {
  activation_map<FloatTypes>(ctx, [](auto x) { return sigmoid(x); });
}
void tanh_kernel(KernelContext& ctx) {
  activation_map<FloatTypes>(ctx, [](auto x) { return std::tanh(x); });
}
void hard_swish(KernelContext& ctx) {
  activation_map<FloatTypes>(ctx, [](auto x) {
    using C = decltype(x);
    return x * std::max(C(0), std::min(C(1), x / C(6) + C(0.5)));
  });
}
void softplus_kernel(KernelContext& ctx) {
  activation_map<FloatTypes>(ctx, [](auto x) { return softplus(x); });
}
void softsign(KernelContext& ctx) {
  activation_map<FloatTypes>(ctx, [](auto x) { return x / (decltype(x)(1) + std::abs(x)); });
}
void mish(KernelContext& ctx) {
  activation_map<FloatTypes>(ctx, [](auto x) { return x * std::tanh(softplus(x)); });
}

}  // namespace

TESSERA_REGISTER_KERNELS(math_activation) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Relu", relu));
  reg.add(KernelDef::fn("Sigmoid", sigmoid_kernel));
  reg.add(KernelDef::fn("Tanh", tanh_kernel));
  reg.add(KernelDef::fn("HardSwish", hard_swish));
  reg.add(KernelDef::fn("Softplus", softplus_kernel));
  reg.add(KernelDef::fn("Softsign", softsign));
  reg.add(KernelDef::fn("Mish", mish));
  reg.add(KernelDef::of<Activation<Elu>>("Elu"));
  reg.add(KernelDef::of<Activation<Selu>>("Selu"));
  reg.add(KernelDef::of<Activation<LeakyRelu>>("LeakyRelu"));
  reg.add(KernelDef::of<Activation<HardSigmoid>>("HardSigmoid"));
  reg.add(KernelDef::of<Activation<ThresholdedRelu>>("ThresholdedRelu"));
  reg.add(KernelDef::of<Activation<Celu>>("Celu"));
  reg.add(KernelDef::of<Activation<Shrink, NumericTypes>>("Shrink"));
  reg.add(KernelDef::of<Activation<Swish>>("Swish"));
  reg.add(KernelDef::of<Activation<Gelu>>("Gelu"));
}
