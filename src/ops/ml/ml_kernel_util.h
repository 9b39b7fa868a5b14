// Helpers of the ai.onnx.ml reference kernels: feature rows as doubles and the shared post transforms.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"

namespace tessera::ops::kernels::ml {

// X as N rows of C doubles: [N, C], or [C] as one row. Element types: float, double, int32, int64.
struct Rows {
  std::vector<double> v;
  int64_t n = 0, c = 0;
  const double* row(int64_t r) const { return v.data() + r * c; }
};

inline Rows read_rows(const rt::KernelContext& ctx, size_t input = 0) {
  const rt::Tensor& x = ctx.input(input);
  if (x.rank() != 1 && x.rank() != 2)
    ctx.fail(fmt::format("input {} must be [N, C] or [C], got {}", input, rt::shape_str(x.shape())));
  Rows r;
  r.n = x.rank() == 2 ? x.dim(0) : 1;
  r.c = x.dim(-1);
  r.v.resize(static_cast<size_t>(x.numel()));
  rt::dispatch(rt::TypeList<float, double, int32_t, int64_t>{}, x.dtype(), ctx.info().op_type(),
               [&]<class T>() {
                 const T* p = x.data<T>();
                 for (int64_t i = 0; i < x.numel(); ++i)
                   r.v[static_cast<size_t>(i)] = static_cast<double>(p[i]);
               });
  return r;
}

enum class Post { kNone, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

inline Post parse_post(const std::string& s) {
  if (s == "NONE") return Post::kNone;
  if (s == "SOFTMAX") return Post::kSoftmax;
  if (s == "LOGISTIC") return Post::kLogistic;
  if (s == "SOFTMAX_ZERO") return Post::kSoftmaxZero;
  if (s == "PROBIT") return Post::kProbit;
  throw rt::KernelError(
      fmt::format("post_transform '{}' is not NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT", s));
}

// Inverse error function: Giles' single-precision approximation refined by two Newton steps.
inline double erfinv(double x) {
  if (x <= -1) return -std::numeric_limits<double>::infinity();
  if (x >= 1) return std::numeric_limits<double>::infinity();
  double w = -std::log((1.0 - x) * (1.0 + x)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      p = c + p * w;
  }
  double y = p * x;
  for (int i = 0; i < 2; ++i) y -= (std::erf(y) - x) / (2.0 / std::sqrt(M_PI) * std::exp(-y * y));
  return y;
}

inline void apply_post(Post p, std::vector<double>& s) {
  switch (p) {
    case Post::kNone:
      return;
    case Post::kLogistic:
      for (double& v : s) v = 1.0 / (1.0 + std::exp(-v));
      return;
    case Post::kProbit:
      for (double& v : s) v = std::sqrt(2.0) * erfinv(2.0 * v - 1.0);
      return;
    case Post::kSoftmax:
    case Post::kSoftmaxZero: {
      bool zero = p == Post::kSoftmaxZero;  // zeros stay zero and take no share
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (double v : s)
        if (!zero || v != 0) mx = std::max(mx, v);
      for (double& v : s) {
        v = zero && v == 0 ? 0.0 : std::exp(v - mx);
        sum += v;
      }
      if (sum > 0)
        for (double& v : s) v /= sum;
      return;
    }
  }
}

}  // namespace tessera::ops::kernels::ml
