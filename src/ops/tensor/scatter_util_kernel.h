// The 'reduction' of ScatterElements and ScatterND: how an update combines with the value it lands on.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <type_traits>

#include "ops/tensor/tensor_kernel_util.h"

namespace tessera::ops::tensor_kernels {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

inline Reduction reduction_of(const rt::KernelInfo& info) {
  if (info.since_version() < 16) return Reduction::kNone;
  std::string r = info.get_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (info.since_version() >= 18 && r == "max") return Reduction::kMax;
  if (info.since_version() >= 18 && r == "min") return Reduction::kMin;
  throw KernelError(fmt::format("attribute 'reduction' is '{}'; expected none, add, mul{}", r,
                                info.since_version() >= 18 ? ", max or min" : ""));
}

// a combined with b; integers wrap (computed unsigned), bool adds as 'or' and multiplies as 'and'.
template <class T>
T reduce(Reduction r, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (r) {
      case Reduction::kAdd:
      case Reduction::kMax:
        return a || b;
      case Reduction::kMul:
      case Reduction::kMin:
        return a && b;
      default:
        return b;
    }
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (r) {
      case Reduction::kAdd:
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      case Reduction::kMul:
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      case Reduction::kMax:
        return std::max(a, b);
      case Reduction::kMin:
        return std::min(a, b);
      default:
        return b;
    }
  } else {
    using C = rt::compute_t<T>;
    const C x = static_cast<C>(a), y = static_cast<C>(b);
    switch (r) {
      case Reduction::kAdd:
        return static_cast<T>(x + y);
      case Reduction::kMul:
        return static_cast<T>(x * y);
      case Reduction::kMax:
        return static_cast<T>(std::max(x, y));
      case Reduction::kMin:
        return static_cast<T>(std::min(x, y));
      default:
        return b;
    }
  }
}

// Calls body(dst_offset, src_offset) for every update after copying data into output 0, combining
// with `r`: by storage for 'none' (any element type), by element type otherwise.
template <class Plan>
void scatter_into_output(KernelContext& ctx, const Tensor& data, const Tensor& updates, Reduction r,
                         const Plan& plan) {
  if (updates.dtype() != data.dtype()) ctx.fail("input 'updates' must have the type of 'data'");
  Tensor& y = ctx.output(0, data.dtype(), data.shape());
  if (r == Reduction::kNone) {
    dispatch_storage(data.dtype(), ctx.info().op_type(), [&]<class S>() {
      ElemSrc<S> src(data);
      ElemSrc<S> upd(updates);
      ElemDst<S> dst(y);
      std::copy(src.data(), src.data() + data.numel(), dst.data());
      plan([&](int64_t to, int64_t from) { dst[to] = upd[from]; });
      dst.commit();
    });
    return;
  }
  rt::dispatch(rt::NumericBoolTypes{}, data.dtype(), ctx.info().op_type(), [&]<class T>() {
    const T* src = data.data<T>();
    const T* upd = updates.data<T>();
    T* dst = y.data<T>();
    std::copy(src, src + data.numel(), dst);
    plan([&](int64_t to, int64_t from) { dst[to] = reduce<T>(r, dst[to], upd[from]); });
  });
}

}  // namespace tessera::ops::tensor_kernels
