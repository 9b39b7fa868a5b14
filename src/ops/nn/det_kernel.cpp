// Reference kernel of Det: the determinant of each square matrix in the last two axes, by LU
// decomposition with partial pivoting, computed in double whatever the element type.
#include <fmt/format.h>

#include <cmath>
#include <utility>
#include <vector>

#include "runtime/dispatch.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using rt::KernelContext;
using rt::Tensor;

// Determinant of the n x n row-major matrix `a` (destroyed).
double determinant(std::vector<double>& a, int64_t n) {
  double det = 1;
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < n; ++r) {
      if (std::abs(a[r * n + col]) > std::abs(a[pivot * n + col])) pivot = r;
    }
    if (a[pivot * n + col] == 0) return 0;
    if (pivot != col) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[col * n + j], a[pivot * n + j]);
      det = -det;
    }
    const double d = a[col * n + col];
    det *= d;
    for (int64_t r = col + 1; r < n; ++r) {
      const double f = a[r * n + col] / d;
      if (f == 0) continue;
      for (int64_t j = col + 1; j < n; ++j) a[r * n + j] -= f * a[col * n + j];
    }
  }
  return det;
}

void det(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2 || x.dim(-1) != x.dim(-2)) {
    ctx.fail(fmt::format("input X has shape {}; Det needs square matrices in the last two axes",
                         rt::shape_str(x.shape())));
  }
  const int64_t n = x.dim(-1);
  rt::Shape ys(x.shape().begin(), x.shape().end() - 2);
  const int64_t count = rt::shape_numel(ys);
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "Det", [&]<class T>() {
    Tensor& y = ctx.output(0, x.dtype(), ys);
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    ctx.threads().parallel_for(count, 1, [&](int64_t b0, int64_t b1) {
      std::vector<double> a(static_cast<size_t>(n * n));
      for (int64_t b = b0; b < b1; ++b) {
        for (int64_t i = 0; i < n * n; ++i)
          a[static_cast<size_t>(i)] = static_cast<double>(xp[b * n * n + i]);
        yp[b] = static_cast<T>(determinant(a, n));
      }
    });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(nn_det) {
  reg.add(tessera::rt::KernelDef::fn("Det", det));
}
