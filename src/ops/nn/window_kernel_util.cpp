#include "ops/nn/window_kernel_util.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include "runtime/half.h"

namespace tessera::ops::kernels {

namespace {

std::vector<int64_t> list_or(const rt::KernelInfo& info, std::string_view name) {
  return info.has_attr(name) ? info.get_ints(name) : std::vector<int64_t>{};
}

int64_t product(const std::vector<int64_t>& v) {
  return rt::shape_numel(v);
}

// A list attribute resolved to `count` entries of at least `min` (or `fill` when absent).
std::vector<int64_t> resolve_list(const std::vector<int64_t>& v, std::string_view name, size_t count,
                                  int64_t min, int64_t fill) {
  if (v.empty()) return std::vector<int64_t>(count, fill);
  if (v.size() != count)
    throw rt::KernelError(fmt::format("{} {} has {} entries; the input needs {}", name, v, v.size(), count));
  for (int64_t x : v) {
    if (x < min) throw rt::KernelError(fmt::format("{} {} has a value below {}", name, v, min));
  }
  return v;
}

// Values from the file are bounded here so that the index arithmetic below cannot overflow.
constexpr int64_t kMaxWindowValue = int64_t{1} << 31;

}  // namespace

WindowAttrs read_window_attrs(const rt::KernelInfo& info) {
  WindowAttrs a;
  a.kernel_shape = list_or(info, "kernel_shape");
  a.strides = list_or(info, "strides");
  a.dilations = list_or(info, "dilations");
  a.pads = list_or(info, "pads");
  if (info.has_attr("auto_pad")) a.auto_pad = info.get_string("auto_pad");
  if (a.auto_pad.empty()) a.auto_pad = "NOTSET";
  if (a.auto_pad != "NOTSET" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER" &&
      a.auto_pad != "VALID") {
    throw rt::KernelError(
        fmt::format("auto_pad is '{}'; it must be NOTSET, SAME_UPPER, SAME_LOWER or VALID", a.auto_pad));
  }
  a.ceil_mode = info.has_attr("ceil_mode") && info.get_int("ceil_mode") != 0;
  return a;
}

int64_t WindowGeom::in_size() const {
  return product(in);
}
int64_t WindowGeom::out_size() const {
  return product(out);
}
int64_t WindowGeom::kernel_size() const {
  return product(kernel);
}

int64_t window_out_dim(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                       int64_t pad_end, bool ceil_mode, size_t axis) {
  const int64_t effective = dilation * (kernel - 1) + 1;
  const int64_t span = in + pad_begin + pad_end - effective;
  if (span < 0) {
    throw rt::KernelError(fmt::format(
        "the window spans {} along spatial axis {} (kernel {}, dilation {}) but the input is only {} there "
        "with padding",
        effective, axis, kernel, dilation, in + pad_begin + pad_end));
  }
  int64_t out = span / stride + 1;
  if (ceil_mode && span % stride != 0) {
    ++out;
    // The last window must start inside the input or its begin padding.
    if ((out - 1) * stride >= in + pad_begin) --out;
  }
  return out;
}

WindowGeom resolve_window(const WindowAttrs& a, std::span<const int64_t> in_spatial,
                          std::span<const int64_t> kernel) {
  const size_t n = in_spatial.size();
  WindowGeom g;
  g.in.assign(in_spatial.begin(), in_spatial.end());
  if (!a.kernel_shape.empty()) {
    g.kernel = resolve_list(a.kernel_shape, "kernel_shape", n, 1, 1);
    if (!kernel.empty() && !std::equal(kernel.begin(), kernel.end(), g.kernel.begin(), g.kernel.end())) {
      throw rt::KernelError(fmt::format("kernel_shape {} does not match the spatial sizes of the weight {}",
                                        g.kernel, std::vector<int64_t>(kernel.begin(), kernel.end())));
    }
  } else if (!kernel.empty() || n == 0) {
    if (kernel.size() != n)
      throw rt::KernelError(fmt::format("the weight has {} spatial axes but X has {}", kernel.size(), n));
    g.kernel.assign(kernel.begin(), kernel.end());
    for (int64_t k : g.kernel) {
      if (k < 1) throw rt::KernelError(fmt::format("the weight has an empty kernel {}", g.kernel));
    }
  } else {
    throw rt::KernelError("kernel_shape is required");
  }
  g.strides = resolve_list(a.strides, "strides", n, 1, 1);
  g.dilations = resolve_list(a.dilations, "dilations", n, 1, 1);
  const bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
  g.pads =
      a.auto_pad == "NOTSET" ? resolve_list(a.pads, "pads", 2 * n, 0, 0) : std::vector<int64_t>(2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (int64_t v : {g.kernel[i], g.strides[i], g.dilations[i], g.pads[i], g.pads[i + n], g.in[i]}) {
      if (v > kMaxWindowValue)
        throw rt::KernelError(fmt::format("window value {} along spatial axis {} is too large", v, i));
    }
  }
  g.out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t effective = g.dilations[i] * (g.kernel[i] - 1) + 1;
    if (same) {
      // SAME: the output is ceil(in / stride); the padding it needs is split, the odd one at the end
      // (SAME_UPPER) or the beginning (SAME_LOWER).
      g.out[i] = (g.in[i] + g.strides[i] - 1) / g.strides[i];
      int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * g.strides[i] + effective - g.in[i]);
      int64_t small = total / 2;
      g.pads[i] = a.auto_pad == "SAME_UPPER" ? small : total - small;
      g.pads[i + n] = total - g.pads[i];
      continue;
    }
    g.out[i] = window_out_dim(g.in[i], g.kernel[i], g.strides[i], g.dilations[i], g.pads[i], g.pads[i + n],
                              a.ceil_mode, i);
  }
  return g;
}

namespace {

// The range [lo, hi) of output positions o in [0, n) whose source start + o * stride lies in [0, in).
inline void valid_range(int64_t start, int64_t stride, int64_t in, int64_t n, int64_t& lo, int64_t& hi) {
  lo = start >= 0 ? 0 : (-start + stride - 1) / stride;
  hi = in - start <= 0 ? 0 : (in - start + stride - 1) / stride;
  hi = std::min(hi, n);
  lo = std::min(lo, hi);
}

// Walks the rows of one kernel position: calls fn(out_row_offset, in_row_offset or -1, start) for every
// row of the output (all axes but the last), where `start` is the source index of output column 0 along
// the last axis.
template <class F>
void for_each_row(const WindowGeom& g, const std::vector<int64_t>& koff, F&& fn) {
  const size_t s = g.spatial();
  const int64_t inner = g.out[s - 1];
  const int64_t rows = inner == 0 ? 0 : g.out_size() / inner;
  std::vector<int64_t> idx(s, 0);
  for (int64_t q = 0; q < rows; ++q) {
    int64_t base = 0;
    bool valid = true;
    for (size_t d = 0; d + 1 < s; ++d) {
      int64_t pos = idx[d] * g.strides[d] - g.pads[d] + koff[d] * g.dilations[d];
      if (pos < 0 || pos >= g.in[d]) {
        valid = false;
        break;
      }
      base = base * g.in[d] + pos;
    }
    int64_t start = -g.pads[s - 1] + koff[s - 1] * g.dilations[s - 1];
    fn(q * inner, valid ? base * g.in[s - 1] : -1, start);
    for (size_t d = s - 1; d-- > 0;) {
      if (++idx[d] < g.out[d]) break;
      idx[d] = 0;
    }
  }
}

// a + b, wrapping for integers (Col2Im sums any numeric type) instead of overflowing.
template <class T>
inline T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return static_cast<T>(a + b);
  }
}

void kernel_offsets(const WindowGeom& g, int64_t kpos, std::vector<int64_t>& koff) {
  for (size_t d = g.spatial(); d-- > 0;) {
    koff[d] = kpos % g.kernel[d];
    kpos /= g.kernel[d];
  }
}

}  // namespace

template <class T>
void im2col(rt::ThreadPool* pool, const WindowGeom& g, const T* x, int64_t channels, T* col, T pad) {
  const int64_t k = g.kernel_size(), o = g.out_size(), in = g.in_size();
  const int64_t rows = channels * k;
  const size_t s = g.spatial();
  if (s == 0) {
    for (int64_t c = 0; c < channels; ++c) col[c] = x[c];
    return;
  }
  const int64_t inner = g.out[s - 1], stride = g.strides[s - 1], in_last = g.in[s - 1];
  auto body = [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> koff(s);
    for (int64_t r = r0; r < r1; ++r) {
      kernel_offsets(g, r % k, koff);
      const T* xc = x + (r / k) * in;
      T* dst = col + r * o;
      for_each_row(g, koff, [&](int64_t out_off, int64_t in_off, int64_t start) {
        T* out = dst + out_off;
        if (in_off < 0) {
          std::fill_n(out, inner, pad);
          return;
        }
        int64_t lo, hi;
        valid_range(start, stride, in_last, inner, lo, hi);
        std::fill_n(out, lo, pad);
        const T* src = xc + in_off + start;
        if (stride == 1) {
          std::copy(src + lo, src + hi, out + lo);
        } else {
          for (int64_t j = lo; j < hi; ++j) out[j] = src[j * stride];
        }
        std::fill(out + hi, out + inner, pad);
      });
    }
  };
  if (pool && rows > 1 && rows * o > 16384)
    pool->parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(o, 1)), body);
  else
    body(0, rows);
}

template <class T>
void col2im(rt::ThreadPool* pool, const WindowGeom& g, const T* col, int64_t channels, T* image) {
  const int64_t k = g.kernel_size(), o = g.out_size(), in = g.in_size();
  const size_t s = g.spatial();
  if (s == 0) {
    for (int64_t c = 0; c < channels; ++c) image[c] = col[c];
    return;
  }
  const int64_t inner = g.out[s - 1], stride = g.strides[s - 1], in_last = g.in[s - 1];
  auto body = [&](int64_t c0, int64_t c1) {
    std::vector<int64_t> koff(s);
    for (int64_t c = c0; c < c1; ++c) {
      T* img = image + c * in;
      std::fill_n(img, in, T(0));
      for (int64_t kp = 0; kp < k; ++kp) {
        kernel_offsets(g, kp, koff);
        const T* src = col + (c * k + kp) * o;
        for_each_row(g, koff, [&](int64_t out_off, int64_t in_off, int64_t start) {
          if (in_off < 0) return;
          int64_t lo, hi;
          valid_range(start, stride, in_last, inner, lo, hi);
          T* dst = img + in_off + start;
          const T* row = src + out_off;
          for (int64_t j = lo; j < hi; ++j) dst[j * stride] = wrapping_add(dst[j * stride], row[j]);
        });
      }
    }
  };
  if (pool && channels > 1 && channels * k * o > 16384)
    pool->parallel_for(channels, 1, body);
  else
    body(0, channels);
}

template void im2col<float>(rt::ThreadPool*, const WindowGeom&, const float*, int64_t, float*, float);
template void im2col<double>(rt::ThreadPool*, const WindowGeom&, const double*, int64_t, double*, double);
template void im2col<int32_t>(rt::ThreadPool*, const WindowGeom&, const int32_t*, int64_t, int32_t*, int32_t);
#define TESSERA_COL2IM(T) template void col2im<T>(rt::ThreadPool*, const WindowGeom&, const T*, int64_t, T*)
TESSERA_COL2IM(float);
TESSERA_COL2IM(double);
TESSERA_COL2IM(rt::Float16);
TESSERA_COL2IM(rt::BFloat16);
TESSERA_COL2IM(int8_t);
TESSERA_COL2IM(int16_t);
TESSERA_COL2IM(int32_t);
TESSERA_COL2IM(int64_t);
TESSERA_COL2IM(uint8_t);
TESSERA_COL2IM(uint16_t);
TESSERA_COL2IM(uint32_t);
TESSERA_COL2IM(uint64_t);
#undef TESSERA_COL2IM

}  // namespace tessera::ops::kernels
