// Reference kernel of Clip: y = min(max(x, lo), hi), so that lo > hi gives hi everywhere (as numpy.clip)
// and NaN stays NaN. The bounds are float attributes up to opset 6 (absent in opset 1: no bound) and
// optional one-element inputs of X's type from opset 11.
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
namespace rt = tessera::rt;
namespace ir = tessera::ir;
using tessera::rt::KernelInfo;
using tessera::rt::NumericTypes;
using tessera::rt::OpKernel;

template <class C>
C no_lower_bound() {
  if constexpr (std::numeric_limits<C>::has_infinity)
    return -std::numeric_limits<C>::infinity();
  else
    return std::numeric_limits<C>::lowest();
}
template <class C>
C no_upper_bound() {
  if constexpr (std::numeric_limits<C>::has_infinity)
    return std::numeric_limits<C>::infinity();
  else
    return std::numeric_limits<C>::max();
}

// The bound given as input `i` (1: min, 2: max), or nullopt when it is left out.
template <class T>
std::optional<rt::compute_t<T>> bound_input(const KernelContext& ctx, size_t i, const char* name) {
  const Tensor* t = ctx.optional_input(i);
  if (!t) return std::nullopt;
  const Tensor& x = ctx.input(0);
  if (t->dtype() != x.dtype())
    ctx.fail(std::string("input '") + name + "' has element type " + std::string(ir::dtype_name(t->dtype())) +
             "; it must be the input's type " + std::string(ir::dtype_name(x.dtype())));
  if (t->numel() != 1)
    ctx.fail(std::string("input '") + name + "' must hold one element, got shape " +
             rt::shape_str(t->shape()));
  return static_cast<rt::compute_t<T>>(t->data<T>()[0]);
}

class Clip : public OpKernel {
 public:
  explicit Clip(const KernelInfo& info) {
    if (info.since_version() >= 11) return;  // bounds are inputs
    if (info.has_attr("min")) attr_min_ = info.get_float("min");
    if (info.has_attr("max")) attr_max_ = info.get_float("max");
  }

  void compute(KernelContext& ctx) const override {
    const bool from_inputs = ctx.info().since_version() >= 11;
    const Tensor& x = ctx.input(0);
    rt::dispatch(NumericTypes{}, x.dtype(), "Clip", [&]<class T>() {
      using C = rt::compute_t<T>;
      C lo = no_lower_bound<C>(), hi = no_upper_bound<C>();
      if (from_inputs) {
        if (auto v = bound_input<T>(ctx, 1, "min")) lo = *v;
        if (auto v = bound_input<T>(ctx, 2, "max")) hi = *v;
      } else {
        if (attr_min_) lo = static_cast<C>(*attr_min_);
        if (attr_max_) hi = static_cast<C>(*attr_max_);
      }
      unary_map<tessera::rt::TypeList<T>>(ctx, [lo, hi](C v) {
        v = v < lo ? lo : v;
        return hi < v ? hi : v;
      });
    });
  }

 private:
  std::optional<float> attr_min_, attr_max_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(math_clip) {
  reg.add(tessera::rt::KernelDef::of<Clip>("Clip"));
}
