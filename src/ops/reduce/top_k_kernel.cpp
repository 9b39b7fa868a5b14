// Reference kernel of TopK: the k largest (smallest with largest=0) elements along `axis` and their
// int64 indices. Equal values keep the lower index first, as the spec asks. The result is always
// sorted (sorted=0 leaves the order unspecified, so sorted order is a valid answer too). NaN sorts
// above every number, as in numpy.
#include <fmt/format.h>

#include <algorithm>

#include "ops/reduce/reduce_kernel_util.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

int64_t read_k(const KernelContext& ctx) {
  if (ctx.info().since_version() < 10) return ctx.info().get_int("k");
  const Tensor& k = ctx.input(1);
  if (k.numel() != 1 || k.rank() > 1)
    ctx.fail(fmt::format("input 'K' must be a 1-D tensor holding one value, got shape {}",
                         rt::shape_str(k.shape())));
  return k.to_int64(0);
}

void top_k(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  if (rank == 0) ctx.fail("input 'X' must have rank 1 or more, got a scalar");
  const int64_t axis = checked_axis(ctx.info().get_int("axis", -1), rank);
  const int64_t k = read_k(ctx);
  const Shape& s = x.shape();
  const int64_t n = s[static_cast<size_t>(axis)];
  if (k < 0 || k > n)
    ctx.fail(fmt::format("K = {} is outside [0, {}], the size of axis {} of input 'X' {}", k, n, axis,
                         rt::shape_str(s)));
  const bool largest = ctx.info().since_version() < 11 || ctx.info().get_int("largest", 1) != 0;
  Shape out_shape = s;
  out_shape[static_cast<size_t>(axis)] = k;
  Tensor& values = ctx.output(0, x.dtype(), out_shape);
  Tensor& indices = ctx.output(1, rt::DataType::kInt64, out_shape);
  const int64_t outer = dims_product(s, 0, static_cast<size_t>(axis));
  const int64_t inner = dims_product(s, static_cast<size_t>(axis) + 1, s.size());
  rt::dispatch(rt::NumericTypes{}, x.dtype(), "TopK", [&]<class T>() {
    using C = rt::compute_t<T>;
    const T* in = x.data<T>();
    T* vo = values.data<T>();
    int64_t* io = indices.data<int64_t>();
    // a before b: larger (smaller) value first, NaN as the largest, then the lower index.
    auto before = [&](const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) {
      if constexpr (std::is_floating_point_v<C>) {
        bool an = a.first != a.first, bn = b.first != b.first;
        if (an || bn) {
          if (an && bn) return a.second < b.second;
          return largest ? an : bn;
        }
      }
      if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
      return a.second < b.second;
    };
    ctx.threads().parallel_for(outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n)),
                               [&](int64_t b, int64_t e) {
                                 std::vector<std::pair<C, int64_t>> row(static_cast<size_t>(n));
                                 for (int64_t g = b; g < e; ++g) {
                                   const int64_t o = g / inner, i = g % inner;
                                   const T* p = in + o * n * inner + i;
                                   for (int64_t r = 0; r < n; ++r)
                                     row[static_cast<size_t>(r)] = {static_cast<C>(p[r * inner]), r};
                                   std::partial_sort(row.begin(), row.begin() + k, row.end(), before);
                                   const int64_t ob = o * k * inner + i;
                                   for (int64_t r = 0; r < k; ++r) {
                                     vo[ob + r * inner] = p[row[static_cast<size_t>(r)].second * inner];
                                     io[ob + r * inner] = row[static_cast<size_t>(r)].second;
                                   }
                                 }
                               });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(reduce_top_k) {
  reg.add(tessera::rt::KernelDef::fn("TopK", top_k));
}
