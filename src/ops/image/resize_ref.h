// The interpolation shared by the reference kernels of Resize and Upsample. Each output coordinate is
// mapped back to an input coordinate (coordinate_transformation_mode), then every axis contributes a
// few taps (input index, weight): one for nearest, two for linear, four for cubic, more when
// antialiasing a downscale widens the filter. An output element is the sum over the cartesian product
// of its axes' taps, computed in double. Indices outside the input are clamped to the edge (the
// spec's edge padding); tf_crop_and_resize outputs extrapolation_value for coordinates outside it.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace tessera::ops::resize_ref {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
// kSimple is the rule of Resize-10 and Upsample (before nearest_mode existed): floor when enlarging,
// ceil when shrinking, as ONNX Runtime does.
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct Options {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Nearest nearest = Nearest::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  bool antialias = false;
};

// One axis: input and output lengths, the scale (output / input, or as given) and the roi extent used
// by tf_crop_and_resize (normalised start and end).
struct Axis {
  int64_t in = 1, out = 1;
  double scale = 1.0;
  double roi_start = 0.0, roi_end = 1.0;
};

struct Taps {
  std::vector<int64_t> begin;  // taps of output position o: [begin[o], begin[o + 1])
  std::vector<int64_t> index;  // input index (clamped)
  std::vector<double> weight;
  std::vector<char> outside;  // tf_crop_and_resize: coordinate outside the input
};

inline Mode parse_mode(const std::string& s, bool allow_cubic) {
  if (s == "nearest") return Mode::kNearest;
  if (s == "linear" || s == "bilinear") return Mode::kLinear;
  if (s == "cubic" && allow_cubic) return Mode::kCubic;
  throw rt::KernelError(fmt::format("mode '{}' is not supported", s));
}

inline Coord parse_coord(const std::string& s) {
  if (s == "half_pixel") return Coord::kHalfPixel;
  if (s == "half_pixel_symmetric") return Coord::kHalfPixelSymmetric;
  if (s == "pytorch_half_pixel") return Coord::kPytorchHalfPixel;
  if (s == "align_corners") return Coord::kAlignCorners;
  if (s == "asymmetric") return Coord::kAsymmetric;
  if (s == "tf_half_pixel_for_nn") return Coord::kTfHalfPixelForNn;
  if (s == "tf_crop_and_resize") return Coord::kTfCropAndResize;
  throw rt::KernelError(fmt::format("coordinate_transformation_mode '{}' is not supported", s));
}

inline Nearest parse_nearest(const std::string& s) {
  if (s == "round_prefer_floor") return Nearest::kRoundPreferFloor;
  if (s == "round_prefer_ceil") return Nearest::kRoundPreferCeil;
  if (s == "floor") return Nearest::kFloor;
  if (s == "ceil") return Nearest::kCeil;
  throw rt::KernelError(fmt::format("nearest_mode '{}' is not supported", s));
}

// The input coordinate of output position x. As in the spec's reference, the "output width" of the
// formulas is scale * input length (not the rounded size), which matters for align_corners and
// tf_crop_and_resize when a scale does not divide evenly.
inline double source_coord(const Options& o, const Axis& a, double x) {
  const double in = static_cast<double>(a.in);
  const double out_w = a.scale * in;
  switch (o.coord) {
    case Coord::kHalfPixel:
      return (x + 0.5) / a.scale - 0.5;
    case Coord::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(a.out) / out_w;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (x + 0.5) / a.scale - 0.5;
    }
    case Coord::kPytorchHalfPixel:
      return a.out > 1 ? (x + 0.5) / a.scale - 0.5 : -0.5;
    case Coord::kAlignCorners:
      return out_w == 1 ? 0.0 : x * (in - 1) / (out_w - 1);
    case Coord::kAsymmetric:
      return x / a.scale;
    case Coord::kTfHalfPixelForNn:
      return (x + 0.5) / a.scale;
    case Coord::kTfCropAndResize: {
      const double extent = a.roi_end - a.roi_start;
      const double v = out_w == 1 ? extent * (in - 1) / 2 : x * extent * (in - 1) / (out_w - 1);
      return v + a.roi_start * (in - 1);
    }
  }
  return 0.0;
}

inline double cubic_weight(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

inline int64_t nearest_index(const Options& o, const Axis& a, double xo) {
  if (o.nearest == Nearest::kSimple) {
    return a.scale < 1 ? static_cast<int64_t>(std::ceil(xo)) : static_cast<int64_t>(std::floor(xo));
  }
  // i0 < xo <= i0 + 1, so the ratio lies in (0, 1]; an integral xo picks itself.
  const double i0 = std::ceil(xo) - 1;
  const double ratio = xo - i0;
  bool upper = true;
  if (ratio != 1.0) {
    switch (o.nearest) {
      case Nearest::kRoundPreferFloor:
        upper = ratio > 0.5;
        break;
      case Nearest::kRoundPreferCeil:
        upper = ratio >= 0.5;
        break;
      case Nearest::kFloor:
        upper = false;
        break;
      default:
        upper = true;
    }
  }
  return static_cast<int64_t>(i0) + (upper ? 1 : 0);
}

inline Taps make_taps(const Options& o, const Axis& a) {
  Taps t;
  t.begin.push_back(0);
  t.outside.assign(static_cast<size_t>(a.out), 0);
  const int64_t last = a.in - 1;
  for (int64_t x = 0; x < a.out; ++x) {
    double xo = source_coord(o, a, static_cast<double>(x));
    if (o.coord == Coord::kTfCropAndResize && !(xo >= 0 && xo <= static_cast<double>(last))) {
      t.outside[x] = 1;
    }
    // Only a wild roi moves a coordinate far outside the input (and its output is the extrapolation
    // value then); bounding it keeps the index arithmetic below defined.
    const double margin = 8.0;
    if (!(xo >= -margin)) xo = -margin;
    if (!(xo <= static_cast<double>(a.in) + margin)) xo = static_cast<double>(a.in) + margin;
    if (o.mode == Mode::kNearest) {
      t.index.push_back(std::clamp<int64_t>(nearest_index(o, a, xo), 0, last));
      t.weight.push_back(1.0);
      t.begin.push_back(static_cast<int64_t>(t.index.size()));
      continue;
    }
    // Taps i0 + k for k in [first, first + n), weighted by the filter at (index - xo) * filter_scale.
    const double filter_scale = o.antialias ? std::min(a.scale, 1.0) : 1.0;
    const double support = o.mode == Mode::kLinear ? 1.0 : 2.0;
    const int64_t first = static_cast<int64_t>(std::floor(-support / filter_scale)) + 1;
    const int64_t n = 2 - 2 * first;
    const int64_t i0 = static_cast<int64_t>(std::ceil(xo)) - 1;
    std::vector<double> w(static_cast<size_t>(n));
    std::vector<int64_t> idx(static_cast<size_t>(n));
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      idx[k] = i0 + first + k;
      const double d = (static_cast<double>(idx[k]) - xo) * filter_scale;
      w[k] = o.mode == Mode::kLinear ? std::max(0.0, 1.0 - std::fabs(d)) : cubic_weight(d, o.cubic_a);
      sum += w[k];
    }
    if (o.antialias && sum != 0)
      for (double& v : w) v /= sum;
    if (o.exclude_outside) {
      sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        if (idx[k] < 0 || idx[k] > last) w[k] = 0;
        sum += w[k];
      }
      if (sum != 0)
        for (double& v : w) v /= sum;
    }
    for (int64_t k = 0; k < n; ++k) {
      if (w[k] == 0) continue;  // contributes nothing; keeps the product of taps small
      t.index.push_back(std::clamp<int64_t>(idx[k], 0, last));
      t.weight.push_back(w[k]);
    }
    t.begin.push_back(static_cast<int64_t>(t.index.size()));
  }
  return t;
}

template <class T>
T from_double(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    const double r = std::nearbyint(v);
    if (r <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  } else if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return static_cast<T>(static_cast<float>(v));
  }
}

// Resizes x into y (already allocated with the output shape); axes has one entry per dimension.
inline void resize(rt::KernelContext& ctx, const rt::Tensor& x, const std::vector<Axis>& axes,
                   const Options& o, rt::Tensor& y) {
  const int rank = x.rank();
  if (y.numel() == 0) return;
  if (x.numel() == 0) throw rt::KernelError("cannot resize an empty input to a non-empty output");
  std::vector<Taps> taps;
  for (const Axis& a : axes) taps.push_back(make_taps(o, a));
  std::vector<int64_t> in_stride(static_cast<size_t>(rank), 1);
  for (int d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * x.dim(d + 1);
  // Over the output in blocks of kBlock elements, not rows (one row can hold most of a large output),
  // each block walking its positions odometer style: the threads stay evenly loaded, and a cancelled
  // run stops between blocks. `taps_at` is the per-block scratch of the interpolating combine.
  auto run = [&]<class T>(auto&& combine) {
    constexpr int64_t kBlock = 4096;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    const int64_t total = y.numel(), blocks = (total + kBlock - 1) / kBlock;
    ctx.threads().parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
      std::vector<int64_t> pos(static_cast<size_t>(rank), 0), taps_at(static_cast<size_t>(rank), 0);
      for (int64_t b = b0; b < b1; ++b) {
        if (ctx.cancelled()) throw rt::KernelError("run cancelled");
        const int64_t begin = b * kBlock, end = std::min(total, begin + kBlock);
        int64_t rem = begin;
        for (int d = rank - 1; d >= 0; --d) {
          pos[d] = rem % y.dim(d);
          rem /= y.dim(d);
        }
        for (int64_t i = begin; i < end; ++i) {
          py[i] = combine(px, pos, taps_at);
          for (int d = rank - 1; d >= 0 && ++pos[d] == y.dim(d); --d) pos[d] = 0;
        }
      }
    });
  };
  bool any_crop = o.coord == Coord::kTfCropAndResize;
  auto outside = [&](const std::vector<int64_t>& pos) {
    if (!any_crop) return false;
    for (int d = 0; d < rank; ++d)
      if (taps[d].outside[pos[d]]) return true;
    return false;
  };
  if (o.mode == Mode::kNearest) {
    // Nearest only copies elements, so the one-byte float8 types travel as their bytes; only an
    // extrapolation value would need converting to them.
    rt::DataType storage = x.dtype();
    if (storage == rt::DataType::kFloat8E4M3FN || storage == rt::DataType::kFloat8E4M3FNUZ ||
        storage == rt::DataType::kFloat8E5M2 || storage == rt::DataType::kFloat8E5M2FNUZ ||
        storage == rt::DataType::kFloat8E8M0) {
      if (any_crop) throw rt::KernelError("tf_crop_and_resize is not supported for float8 inputs");
      storage = rt::DataType::kUint8;
    }
    rt::dispatch(rt::AllTypes{}, storage, "Resize", [&]<class T>() {
      const T extrap = [&] {
        if constexpr (std::is_same_v<T, std::string>) {
          return std::string();
        } else if constexpr (std::is_same_v<T, bool>) {
          return o.extrapolation != 0;
        } else {
          return from_double<T>(o.extrapolation);
        }
      }();
      run.template operator()<T>(
          [&](const T* px, const std::vector<int64_t>& pos, std::vector<int64_t>&) -> T {
            if (outside(pos)) return extrap;
            int64_t off = 0;
            for (int d = 0; d < rank; ++d) off += taps[d].index[taps[d].begin[pos[d]]] * in_stride[d];
            return px[off];
          });
    });
    return;
  }
  rt::dispatch(rt::NumericTypes{}, x.dtype(), "Resize", [&]<class T>() {
    run.template operator()<T>(
        [&](const T* px, const std::vector<int64_t>& pos, std::vector<int64_t>& k) -> T {
          if (outside(pos)) return from_double<T>(o.extrapolation);
          // Sum over the cartesian product of the axes' taps, odometer style (k: the tap per axis).
          for (int d = 0; d < rank; ++d) k[d] = taps[d].begin[pos[d]];
          double acc = 0;
          while (true) {
            double w = 1;
            int64_t off = 0;
            for (int d = 0; d < rank; ++d) {
              w *= taps[d].weight[k[d]];
              off += taps[d].index[k[d]] * in_stride[d];
            }
            acc += w * static_cast<double>(static_cast<rt::compute_t<T>>(px[off]));
            int d = rank - 1;
            for (; d >= 0; --d) {
              if (++k[d] < taps[d].begin[pos[d] + 1]) break;
              k[d] = taps[d].begin[pos[d]];
            }
            if (d < 0) break;
          }
          return from_double<T>(acc);
        });
  });
}

}  // namespace tessera::ops::resize_ref
