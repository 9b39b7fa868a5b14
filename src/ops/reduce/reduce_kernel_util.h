// Helpers shared by the reduction-like reference kernels (Reduce*, ArgMax, TopK, the normalizations and
// the softmax family): axis checks and a view of a tensor as groups of reduced elements.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"

namespace tessera::ops::kernels {

// `axis` in [-rank, rank) made non-negative; KernelError naming the attribute otherwise.
inline int64_t checked_axis(int64_t axis, int64_t rank, std::string_view what = "axis") {
  if (axis < -rank || axis >= rank) {
    throw rt::KernelError(fmt::format("{} {} is out of range for an input of rank {} (valid: [{}, {}])", what,
                                      axis, rank, -rank, rank - 1));
  }
  return axis < 0 ? axis + rank : axis;
}

// Product of dims [begin, end).
inline int64_t dims_product(const rt::Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) n *= s[i];
  return n;
}

// The elements of a tensor split into groups by a set of reduced axes: group g holds the elements
// whose kept coordinates form g (in row-major order of the kept axes), element r of a group sits at
// base(g) + offsets[r]. When the reduced axes are one contiguous block, `contiguous` is set and the
// tensor is the view [outer, reduced, inner], which kernels can walk without the offset tables.
struct ReduceView {
  int64_t groups = 1;   // number of kept positions (output elements)
  int64_t reduced = 1;  // elements per group
  bool contiguous = false;
  int64_t outer = 1, inner = 1;  // the [outer, reduced, inner] view when contiguous
  std::vector<int64_t> offsets;  // reduced element offsets, relative to a group's base (generic case)
  std::vector<int64_t> kept_dims, kept_strides;  // for base() in the generic case

  ReduceView(const rt::Shape& shape, const std::vector<bool>& reduce) {
    const size_t rank = shape.size();
    std::vector<int64_t> strides(rank, 1);
    for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    std::vector<int64_t> red_dims, red_strides;
    int first = -1, last = -1;
    for (size_t i = 0; i < rank; ++i) {
      if (reduce[i]) {
        red_dims.push_back(shape[i]);
        red_strides.push_back(strides[i]);
        reduced *= shape[i];
        if (first < 0) first = static_cast<int>(i);
        last = static_cast<int>(i);
      } else {
        kept_dims.push_back(shape[i]);
        kept_strides.push_back(strides[i]);
        groups *= shape[i];
      }
    }
    // Contiguous when every axis between the first and last reduced one is reduced too (size-1 kept
    // axes in between do not break it either).
    contiguous = true;
    for (int i = first; i >= 0 && i <= last; ++i) {
      if (!reduce[static_cast<size_t>(i)] && shape[static_cast<size_t>(i)] != 1) contiguous = false;
    }
    if (contiguous) {
      if (first < 0) {
        outer = groups;
        inner = 1;
      } else {
        outer = dims_product(shape, 0, static_cast<size_t>(first));
        inner = dims_product(shape, static_cast<size_t>(last) + 1, rank);
      }
      return;
    }
    offsets.assign(static_cast<size_t>(reduced), 0);
    std::vector<int64_t> idx(red_dims.size(), 0);
    int64_t off = 0;
    for (int64_t r = 0; r < reduced; ++r) {
      offsets[static_cast<size_t>(r)] = off;
      for (size_t d = red_dims.size(); d-- > 0;) {
        off += red_strides[d];
        if (++idx[d] < red_dims[d]) break;
        off -= red_strides[d] * red_dims[d];
        idx[d] = 0;
      }
    }
  }

  // Offset of the first element of group g (generic case).
  int64_t base(int64_t g) const {
    int64_t off = 0;
    for (size_t d = kept_dims.size(); d-- > 0;) {
      off += (g % kept_dims[d]) * kept_strides[d];
      g /= kept_dims[d];
    }
    return off;
  }

  // Calls fn(offset) for every element of group g, in row-major order of the reduced axes.
  template <class F>
  void for_each_in_group(int64_t g, F&& fn) const {
    if (contiguous) {
      const int64_t o = g / inner, i = g % inner;
      const int64_t start = o * reduced * inner + i;
      for (int64_t r = 0; r < reduced; ++r) fn(start + r * inner);
      return;
    }
    const int64_t b = base(g);
    for (int64_t r = 0; r < reduced; ++r) fn(b + offsets[static_cast<size_t>(r)]);
  }
};

// Values of a small parameter tensor (scale, bias, mean...) of any float type as doubles.
inline std::vector<double> float_values(const rt::Tensor& t, std::string_view what) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  rt::dispatch(rt::FloatTypes{}, t.dtype(), what, [&]<class T>() {
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = static_cast<double>(p[i]);
  });
  return v;
}

// Reads element i of a float tensor as double / writes a double into element i (rounding once).
template <class T>
inline double load_d(const T* p, int64_t i) {
  return static_cast<double>(static_cast<rt::compute_t<T>>(p[i]));
}
template <class T>
inline void store_d(T* p, int64_t i, double v) {
  if constexpr (std::is_same_v<T, rt::Float16> || std::is_same_v<T, rt::BFloat16>) {
    p[i] = T(static_cast<float>(v));
  } else {
    p[i] = static_cast<T>(v);
  }
}

}  // namespace tessera::ops::kernels
