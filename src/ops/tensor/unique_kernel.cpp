// Reference kernel of Unique: the distinct elements (or distinct slices along 'axis'), ascending when
// sorted=1 (slices compare lexicographically) or in order of first occurrence, with the index of each
// one's first occurrence, each input entry's position among them and each one's count. NaNs compare
// equal to each other and above every number, as numpy's unique does.
#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "ops/tensor/float8_kernel_util.h"
#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

// -1, 0, 1 like a three-way comparison, with NaN above everything and equal to itself.
template <class T>
int compare(const T& a, const T& b) {
  if constexpr (rt::is_float_v<T>) {
    using C = rt::compute_t<T>;
    const C x = static_cast<C>(a), y = static_cast<C>(b);
    const bool nx = std::isnan(x), ny = std::isnan(y);
    if (nx || ny) return nx == ny ? 0 : (nx ? 1 : -1);
    return x < y ? -1 : (y < x ? 1 : 0);
  } else {
    return a < b ? -1 : (b < a ? 1 : 0);
  }
}

// Groups of equal slices among the n slices p[(o * n + j) * inner + i] (over o, i).
struct Groups {
  std::vector<int64_t> first;     // index of each group's first occurrence
  std::vector<int64_t> counts;    // size of each group
  std::vector<int64_t> group_of;  // group of each slice
};

template <class K>
Groups group_slices(const K* p, int64_t outer, int64_t n, int64_t inner) {
  auto cmp = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int c = compare<K>(p[(o * n + a) * inner + i], p[(o * n + b) * inner + i]);
        if (c != 0) return c;
      }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
  // The stable sort puts each group's first occurrence first; groups come out ascending.
  Groups g;
  g.group_of.resize(static_cast<size_t>(n));
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || cmp(order[k - 1], order[k]) != 0) {
      g.first.push_back(order[k]);
      g.counts.push_back(0);
    }
    ++g.counts.back();
    g.group_of[order[k]] = static_cast<int64_t>(g.first.size()) - 1;
  }
  return g;
}

// Whether rt::AllTypes has dt's element: all but the 8-bit floats and the packed types (complex is
// left to dispatch, which reports it).
bool has_cxx_element(DataType dt) {
  const int bits = tessera::ir::dtype_bits(dt);
  return dt == DataType::kString || (bits >= 8 && !(tessera::ir::dtype_is_float(dt) && bits == 8));
}

// The values of a tensor without a C++ element type (float8, float4, the packed integers) as floats,
// which order and compare them as their numbers do.
std::vector<float> decoded(const Tensor& x) {
  namespace f8 = tessera::ops::float8;
  const DataType dt = x.dtype();
  std::vector<uint8_t> codes;
  if (is_packed(dt)) {
    codes = unpack_codes(x);
  } else {
    const auto* b = static_cast<const uint8_t*>(x.raw());
    codes.assign(b, b + x.numel());
  }
  std::vector<float> v(codes.size());
  const f8::MiniFloat* f = f8::minifloat_of(dt);
  const int bits = tessera::ir::dtype_bits(dt);
  const bool is_signed = tessera::ir::dtype_is_signed_int(dt);
  for (size_t i = 0; i < codes.size(); ++i) {
    const uint8_t c = codes[i];
    if (f)
      v[i] = f8::decode(*f, c);
    else if (dt == DataType::kFloat8E8M0)
      v[i] = f8::e8m0_to_float(c);
    else if (is_signed && (c >> (bits - 1)) & 1)
      v[i] = static_cast<float>(static_cast<int>(c) - (1 << bits));
    else
      v[i] = static_cast<float>(c);
  }
  return v;
}

void unique(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool has_axis = ctx.info().has_attr("axis");
  const bool sorted = ctx.info().get_int("sorted", 1) != 0;
  const int64_t axis = has_axis ? normalize_axis(ctx.info().get_int("axis"), x.rank()) : 0;
  const int64_t n = has_axis ? x.shape()[axis] : x.numel();
  const int64_t outer = has_axis ? prod(x.shape(), 0, axis) : 1;
  const int64_t inner = has_axis ? prod(x.shape(), axis + 1, x.shape().size()) : 1;
  Groups g;
  if (has_cxx_element(x.dtype())) {
    rt::dispatch(rt::AllTypes{}, x.dtype(), "Unique",
                 [&]<class T>() { g = group_slices<T>(x.data<T>(), outer, n, inner); });
  } else {
    std::vector<float> keys = decoded(x);
    g = group_slices<float>(keys.data(), outer, n, inner);
  }
  const int64_t m = static_cast<int64_t>(g.first.size());
  // Output order of the groups: as sorted, or by first occurrence.
  std::vector<int64_t> groups(static_cast<size_t>(m));
  std::iota(groups.begin(), groups.end(), 0);
  if (!sorted)
    std::sort(groups.begin(), groups.end(), [&](int64_t a, int64_t b) { return g.first[a] < g.first[b]; });
  std::vector<int64_t> rank_of(static_cast<size_t>(m));
  for (int64_t k = 0; k < m; ++k) rank_of[groups[k]] = k;

  Shape yshape = has_axis ? x.shape() : Shape{m};
  if (has_axis) yshape[axis] = m;
  Tensor& y = ctx.output(0, x.dtype(), yshape);
  dispatch_storage(x.dtype(), "Unique", [&]<class S>() {
    ElemSrc<S> src(x);
    ElemDst<S> dst(y);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < m; ++k)
        for (int64_t i = 0; i < inner; ++i)
          dst[(o * m + k) * inner + i] = src[(o * n + g.first[groups[k]]) * inner + i];
    dst.commit();
  });
  if (ctx.wants_output(1)) {
    int64_t* q = ctx.output(1, DataType::kInt64, {m}).data<int64_t>();
    for (int64_t k = 0; k < m; ++k) q[k] = g.first[groups[k]];
  }
  if (ctx.wants_output(2)) {
    int64_t* q = ctx.output(2, DataType::kInt64, {n}).data<int64_t>();
    for (int64_t j = 0; j < n; ++j) q[j] = rank_of[g.group_of[j]];
  }
  if (ctx.wants_output(3)) {
    int64_t* q = ctx.output(3, DataType::kInt64, {m}).data<int64_t>();
    for (int64_t k = 0; k < m; ++k) q[k] = g.counts[groups[k]];
  }
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_unique) {
  reg.add(tessera::rt::KernelDef::fn("Unique", unique));
}
