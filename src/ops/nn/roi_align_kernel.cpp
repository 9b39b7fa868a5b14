// Reference kernel of RoiAlign, following ONNX Runtime's formulation (which the ONNX reference mirrors):
// each output bin averages (mode avg) or takes the max (mode max) of a grid of bilinear samples. In max
// mode a sample's value is the largest of its four weighted corner terms, as ONNX Runtime defines it.
// coordinate_transformation_mode half_pixel shifts the scaled box by -0.5; output_half_pixel (the only
// behaviour before opset 16) does not, and stretches boxes smaller than a pixel to one pixel.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ops/nn/gemm_kernel_util.h"
#include "runtime/dispatch.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

class RoiAlign : public rt::OpKernel {
 public:
  explicit RoiAlign(const rt::KernelInfo& info)
      : max_mode_(info.get_string("mode", "avg") == "max"),
        out_h_(info.get_int("output_height", 1)),
        out_w_(info.get_int("output_width", 1)),
        sampling_ratio_(info.get_int("sampling_ratio", 0)),
        scale_(info.get_float("spatial_scale", 1.f)) {
    std::string mode = info.get_string("mode", "avg");
    if (mode != "avg" && mode != "max")
      throw rt::KernelError("mode is '" + mode + "'; it must be 'avg' or 'max'");
    std::string ctm = info.since_version() >= 16
                          ? info.get_string("coordinate_transformation_mode", "half_pixel")
                          : std::string("output_half_pixel");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      throw rt::KernelError("coordinate_transformation_mode is '" + ctm + "'");
    half_pixel_ = ctm == "half_pixel";
    if (out_h_ < 1 || out_w_ < 1)
      throw rt::KernelError(
          fmt::format("output_height {} and output_width {} must be positive", out_h_, out_w_));
    if (sampling_ratio_ < 0)
      throw rt::KernelError(fmt::format("sampling_ratio is {}; it must be >= 0", sampling_ratio_));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& rois = ctx.input(1);
    const Tensor& bi = ctx.input(2);
    if (x.rank() != 4)
      ctx.fail("input X has shape " + rt::shape_str(x.shape()) + "; it must be [N, C, H, W]");
    if (rois.rank() != 2 || rois.dim(1) != 4)
      ctx.fail("input rois has shape " + rt::shape_str(rois.shape()) + "; it must be [num_rois, 4]");
    if (bi.rank() != 1 || bi.dim(0) != rois.dim(0))
      ctx.fail(fmt::format("input batch_indices has shape {}; it must be [{}]", rt::shape_str(bi.shape()),
                           rois.dim(0)));
    if (rois.dtype() != x.dtype()) ctx.fail("inputs X and rois must have the same element type");
    if (bi.dtype() != rt::DataType::kInt64) ctx.fail("input batch_indices must be int64");
    const int64_t r = rois.dim(0), c = x.dim(1);
    for (int64_t i = 0; i < r; ++i) {
      int64_t b = bi.data<int64_t>()[i];
      if (b < 0 || b >= x.dim(0))
        ctx.fail(fmt::format("batch_indices[{}] is {}; X has a batch of {}", i, b, x.dim(0)));
    }
    for (int64_t i = 0; i < rois.numel(); ++i) {
      if (!std::isfinite(rois.to_double(i)))
        ctx.fail(fmt::format("input rois has a non-finite coordinate at {}", i));
    }
    rt::dispatch(rt::FloatTypes{}, x.dtype(), "RoiAlign", [&]<class T>() {
      Tensor& y = ctx.output(0, x.dtype(), {r, c, out_h_, out_w_});
      const T* xp = x.data<T>();
      const T* rp = rois.data<T>();
      T* yp = y.data<T>();
      ctx.threads().parallel_for(r * c, 1, [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
          const int64_t roi = q / c, ch = q % c;
          const int64_t b = bi.data<int64_t>()[roi];
          const T* plane = xp + (b * c + ch) * x.dim(2) * x.dim(3);
          pool_roi<T>(plane, x.dim(2), x.dim(3), rp + roi * 4, yp + q * out_h_ * out_w_);
        }
      });
    });
  }

 private:
  template <class T>
  void pool_roi(const T* plane, int64_t height, int64_t width, const T* box, T* out) const {
    using F = real_t<T>;
    const F offset = half_pixel_ ? F(0.5) : F(0);
    const F x0 = static_cast<F>(box[0]) * scale_ - offset, y0 = static_cast<F>(box[1]) * scale_ - offset;
    const F x1 = static_cast<F>(box[2]) * scale_ - offset, y1 = static_cast<F>(box[3]) * scale_ - offset;
    F roi_w = x1 - x0, roi_h = y1 - y0;
    if (!half_pixel_) {
      roi_w = std::max(roi_w, F(1));
      roi_h = std::max(roi_h, F(1));
    }
    const F bin_h = roi_h / static_cast<F>(out_h_), bin_w = roi_w / static_cast<F>(out_w_);
    const F gh =
        sampling_ratio_ > 0 ? static_cast<F>(sampling_ratio_) : std::ceil(roi_h / static_cast<F>(out_h_));
    const F gw =
        sampling_ratio_ > 0 ? static_cast<F>(sampling_ratio_) : std::ceil(roi_w / static_cast<F>(out_w_));
    // Boxes come from the data: a huge one would ask for an absurd number of samples per bin.
    if (gh * gw > F(1 << 24)) {
      throw rt::KernelError(
          fmt::format("a region of {} x {} pixels needs {} samples per bin; that is too many",
                      static_cast<double>(roi_h), static_cast<double>(roi_w), static_cast<double>(gh * gw)));
    }
    const int64_t grid_h = std::max<int64_t>(0, static_cast<int64_t>(gh));
    const int64_t grid_w = std::max<int64_t>(0, static_cast<int64_t>(gw));
    const F count = static_cast<F>(std::max<int64_t>(grid_h * grid_w, 1));
    for (int64_t ph = 0; ph < out_h_; ++ph) {
      for (int64_t pw = 0; pw < out_w_; ++pw) {
        F acc = 0;
        bool first = true;
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const F yy = y0 + ph * bin_h + (iy + F(0.5)) * bin_h / static_cast<F>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const F xx = x0 + pw * bin_w + (ix + F(0.5)) * bin_w / static_cast<F>(grid_w);
            F v = sample<T, F>(plane, height, width, yy, xx);
            if (!max_mode_) {
              acc += v;
            } else if (first || v > acc) {
              acc = v;
            }
            first = false;
          }
        }
        out[ph * out_w_ + pw] = static_cast<T>(max_mode_ ? acc : acc / count);
      }
    }
  }

  // Bilinear sample at (y, x); zero more than a pixel outside, clamped to the edge within it. In max mode,
  // the largest weighted corner.
  template <class T, class F>
  F sample(const T* plane, int64_t height, int64_t width, F y, F x) const {
    if (height <= 0 || width <= 0) return 0;
    if (y < F(-1) || y > static_cast<F>(height) || x < F(-1) || x > static_cast<F>(width)) return 0;
    y = std::max(y, F(0));
    x = std::max(x, F(0));
    int64_t y_lo = static_cast<int64_t>(y), x_lo = static_cast<int64_t>(x), y_hi, x_hi;
    if (y_lo >= height - 1) {
      y_hi = y_lo = height - 1;
      y = static_cast<F>(y_lo);
    } else {
      y_hi = y_lo + 1;
    }
    if (x_lo >= width - 1) {
      x_hi = x_lo = width - 1;
      x = static_cast<F>(x_lo);
    } else {
      x_hi = x_lo + 1;
    }
    const F ly = y - y_lo, lx = x - x_lo, hy = 1 - ly, hx = 1 - lx;
    const F v1 = hy * hx * static_cast<F>(plane[y_lo * width + x_lo]);
    const F v2 = hy * lx * static_cast<F>(plane[y_lo * width + x_hi]);
    const F v3 = ly * hx * static_cast<F>(plane[y_hi * width + x_lo]);
    const F v4 = ly * lx * static_cast<F>(plane[y_hi * width + x_hi]);
    if (max_mode_) return std::max(std::max(v1, v2), std::max(v3, v4));
    return v1 + v2 + v3 + v4;
  }

  bool max_mode_;
  bool half_pixel_ = true;
  int64_t out_h_, out_w_, sampling_ratio_;
  float scale_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_roi_align) {
  reg.add(tessera::rt::KernelDef::of<RoiAlign>("RoiAlign"));
}
