// Reference kernel of GridSample (ai.onnx 16: 2-D; 20, 22: N-D). grid[n, o..., :] holds normalised
// coordinates in [-1, 1], innermost spatial axis first (x, then y, then z). Each is mapped to a pixel
// coordinate (align_corners: -1 and 1 are the centres of the corner pixels; otherwise their outer
// edges); coordinates outside the image are clamped (border) or mirrored (reflection) before sampling,
// and with zeros padding the taps outside read 0. Nearest rounds half to even (the conformance data
// does so in 3-D too, although PyTorch rounds half away from zero there); linear and cubic (Keys, a = -0.75)
// use 2 and 4 taps per axis.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "ops/attention/ref_util.h"
#include "ops/image/resize_ref.h"
#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using rt::KernelContext;
using rt::Tensor;

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

constexpr int kMaxSpatial = 8;

class GridSample : public rt::OpKernel {
 public:
  explicit GridSample(const rt::KernelInfo& info)
      : version_(info.since_version()), align_corners_(info.get_int("align_corners", 0) != 0) {
    std::string mode = info.get_string("mode", version_ >= 20 ? "linear" : "bilinear");
    if (mode == "nearest") {
      mode_ = Mode::kNearest;
    } else if (mode == "bilinear" || mode == "linear") {
      mode_ = Mode::kLinear;
    } else if (mode == "bicubic" || mode == "cubic") {
      mode_ = Mode::kCubic;
    } else {
      throw rt::KernelError(fmt::format("mode '{}' is not one of linear, nearest, cubic", mode));
    }
    std::string padding = info.get_string("padding_mode", "zeros");
    if (padding == "zeros") {
      padding_ = Padding::kZeros;
    } else if (padding == "border") {
      padding_ = Padding::kBorder;
    } else if (padding == "reflection") {
      padding_ = Padding::kReflection;
    } else {
      throw rt::KernelError(
          fmt::format("padding_mode '{}' is not one of zeros, border, reflection", padding));
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    const int rank = x.rank();
    const int spatial = rank - 2;
    if (rank < 3 || spatial > kMaxSpatial)
      ctx.fail(fmt::format("X must be [N, C, spatial...] with 1 to {} spatial axes, got {}", kMaxSpatial,
                           rt::shape_str(x.shape())));
    if (version_ < 20 && rank != 4)
      ctx.fail(fmt::format("GridSample-16 takes 4-D X, got {}", rt::shape_str(x.shape())));
    if (grid.rank() != rank || grid.dim(0) != x.dim(0) || grid.dim(-1) != spatial)
      ctx.fail(fmt::format("grid {} must be [N={}, out spatial..., {}] for X {}", rt::shape_str(grid.shape()),
                           x.dim(0), spatial, rt::shape_str(x.shape())));
    rt::Shape out_shape = {x.dim(0), x.dim(1)};
    for (int d = 1; d <= spatial; ++d) out_shape.push_back(grid.dim(d));
    Tensor& y = ctx.output(0, x.dtype(), out_shape);
    if (y.numel() == 0) return;
    for (int d = 2; d < rank; ++d)
      if (x.dim(d) == 0) ctx.fail(fmt::format("X {} has an empty spatial axis", rt::shape_str(x.shape())));
    tessera::ops::refk::require_float(grid, "grid");
    std::vector<double> g = tessera::ops::refk::to_doubles(grid, "GridSample grid");
    rt::dispatch(rt::NumericTypes{}, x.dtype(), "GridSample", [&]<class T>() { sample<T>(ctx, x, g, y); });
  }

 private:
  struct Tap {
    int64_t index;  // -1: outside (zeros padding)
    double weight;
  };

  // Mirrors v into [lo, hi] by the nearer border, as often as needed (fmod keeps huge values defined).
  static double reflect(double v, double lo, double hi) {
    const double range = hi - lo;
    if (range <= 0) return lo;
    if (v < lo) {
      const double m = std::fmod(lo - v, 2 * range);
      return m < range ? lo + m : hi - (m - range);
    }
    if (v > hi) {
      const double m = std::fmod(v - hi, 2 * range);
      return m < range ? hi - m : lo + (m - range);
    }
    return v;
  }

  // The pixel index that tap i reads, or -1 for a zero.
  int64_t pixel(int64_t i, int64_t size, double lo, double hi) const {
    if (i >= 0 && i < size) return i;
    switch (padding_) {
      case Padding::kZeros:
        return -1;
      case Padding::kBorder:
        return i < 0 ? 0 : size - 1;
      case Padding::kReflection:
        return std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<double>(i), lo, hi)), 0,
                                   size - 1);
    }
    return -1;
  }

  static double cubic(double t) {
    constexpr double a = -0.75;
    t = std::fabs(t);
    if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0;
  }

  // Taps of one spatial axis for normalised coordinate n.
  int axis_taps(double n, int64_t size, Tap* taps) const {
    const double s = static_cast<double>(size);
    double v = align_corners_ ? (n + 1) / 2 * (s - 1) : ((n + 1) * s - 1) / 2;
    const double lo = align_corners_ ? 0.0 : -0.5;
    const double hi = align_corners_ ? s - 1 : s - 0.5;
    if (mode_ == Mode::kNearest) v = std::nearbyint(v);
    if (v < lo || v > hi) {
      if (padding_ == Padding::kBorder) v = std::clamp(v, 0.0, s - 1);
      if (padding_ == Padding::kReflection) v = reflect(v, lo, hi);
    }
    if (!std::isfinite(v) || v < lo - 4 || v > hi + 4) {
      // Only zeros padding leaves a coordinate here (border and reflection brought it inside): every
      // tap reads 0. NaN coordinates read 0 too, or the first pixel under the other paddings.
      taps[0] = {padding_ == Padding::kZeros ? -1 : 0, 1.0};
      return 1;
    }
    if (mode_ == Mode::kNearest) {
      taps[0] = {pixel(static_cast<int64_t>(v), size, lo, hi), 1.0};
      return 1;
    }
    const double f = std::floor(v);
    const int64_t i0 = static_cast<int64_t>(f);
    const double t = v - f;
    if (mode_ == Mode::kLinear) {
      taps[0] = {pixel(i0, size, lo, hi), 1 - t};
      taps[1] = {pixel(i0 + 1, size, lo, hi), t};
      return 2;
    }
    for (int k = 0; k < 4; ++k) taps[k] = {pixel(i0 - 1 + k, size, lo, hi), cubic(t + 1 - k)};
    return 4;
  }

  template <class T>
  void sample(KernelContext& ctx, const Tensor& x, const std::vector<double>& g, Tensor& y) const {
    const int rank = x.rank(), spatial = rank - 2;
    const int64_t n_batch = x.dim(0), channels = x.dim(1);
    int64_t in_plane = 1, out_plane = 1;
    for (int d = 2; d < rank; ++d) {
      in_plane *= x.dim(d);
      out_plane *= y.dim(d);
    }
    const T* px = x.data<T>();
    T* py = y.data<T>();
    ctx.threads().parallel_for(n_batch * out_plane, 64, [&](int64_t begin, int64_t end) {
      Tap taps[kMaxSpatial][4];
      int count[kMaxSpatial];
      int64_t stride[kMaxSpatial];
      for (int64_t p = begin; p < end; ++p) {
        const int64_t b = p / out_plane, o = p % out_plane;
        const double* coords = &g[static_cast<size_t>(p * spatial)];
        int64_t st = 1;
        for (int d = spatial - 1; d >= 0; --d) {
          // Coordinate k of the grid is for spatial axis spatial-1-k (x is the innermost axis).
          count[d] = axis_taps(coords[spatial - 1 - d], x.dim(2 + d), taps[d]);
          stride[d] = st;
          st *= x.dim(2 + d);
        }
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = px + (b * channels + c) * in_plane;
          double acc = 0;
          int k[kMaxSpatial] = {};
          while (true) {
            double w = 1;
            int64_t off = 0;
            bool zero = false;
            for (int d = 0; d < spatial; ++d) {
              const Tap& t = taps[d][k[d]];
              w *= t.weight;
              if (t.index < 0) zero = true;
              off += t.index * stride[d];
            }
            if (!zero && w != 0) acc += w * static_cast<double>(static_cast<rt::compute_t<T>>(plane[off]));
            int d = spatial - 1;
            for (; d >= 0; --d) {
              if (++k[d] < count[d]) break;
              k[d] = 0;
            }
            if (d < 0) break;
          }
          py[(b * channels + c) * out_plane + o] = tessera::ops::resize_ref::from_double<T>(acc);
        }
      }
    });
  }

  int version_;
  bool align_corners_;
  Mode mode_ = Mode::kLinear;
  Padding padding_ = Padding::kZeros;
};

}  // namespace

TESSERA_REGISTER_KERNELS(image_grid_sample) {
  reg.add(tessera::rt::KernelDef::of<GridSample>("GridSample"));
}
