// Reference kernel of MaxRoiPool (Fast R-CNN's RoI pooling, as Caffe and ONNX Runtime compute it): each
// region's corners are scaled and rounded to pixels, split into a pooled_shape grid of bins (floor of
// the start, ceil of the end), and each bin takes the maximum of X within it, 0 for an empty bin.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/dispatch.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using rt::KernelContext;
using rt::Tensor;

class MaxRoiPool : public rt::OpKernel {
 public:
  explicit MaxRoiPool(const rt::KernelInfo& info)
      : pooled_(info.get_ints("pooled_shape")), scale_(info.get_float("spatial_scale", 1.f)) {
    if (pooled_.size() != 2 || pooled_[0] < 1 || pooled_[1] < 1)
      throw rt::KernelError(fmt::format("pooled_shape {} must be two positive sizes", pooled_));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& rois = ctx.input(1);
    if (x.rank() != 4)
      ctx.fail("input X has shape " + rt::shape_str(x.shape()) + "; it must be [N, C, H, W]");
    if (rois.rank() != 2 || rois.dim(1) != 5)
      ctx.fail("input rois has shape " + rt::shape_str(rois.shape()) + "; it must be [num_rois, 5]");
    if (rois.dtype() != x.dtype()) ctx.fail("inputs X and rois must have the same element type");
    const int64_t r = rois.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), ph = pooled_[0], pw = pooled_[1];
    for (int64_t i = 0; i < rois.numel(); ++i) {
      double v = rois.to_double(i);
      if (!std::isfinite(v) || std::abs(v) * std::max(1.f, std::abs(scale_)) > 1e15)
        ctx.fail(fmt::format("input rois has an invalid value {} at {}", v, i));
      if (i % 5 == 0 && (v < 0 || v >= static_cast<double>(x.dim(0)) || v != std::floor(v)))
        ctx.fail(fmt::format("rois[{}] has batch index {}; X has a batch of {}", i / 5, v, x.dim(0)));
    }
    rt::dispatch(rt::FloatTypes{}, x.dtype(), "MaxRoiPool", [&]<class T>() {
      using C = rt::compute_t<T>;
      Tensor& y = ctx.output(0, x.dtype(), {r, c, ph, pw});
      const T* xp = x.data<T>();
      const T* rp = rois.data<T>();
      T* yp = y.data<T>();
      ctx.threads().parallel_for(r * c, 1, [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
          const int64_t roi = q / c, ch = q % c;
          const T* box = rp + roi * 5;
          const int64_t b = static_cast<int64_t>(static_cast<double>(box[0]));
          auto px = [&](T v) { return static_cast<int64_t>(std::round(static_cast<float>(v) * scale_)); };
          const int64_t x0 = px(box[1]), y0 = px(box[2]), x1 = px(box[3]), y1 = px(box[4]);
          const int64_t rh = std::max<int64_t>(y1 - y0 + 1, 1), rw = std::max<int64_t>(x1 - x0 + 1, 1);
          const float bh = static_cast<float>(rh) / static_cast<float>(ph);
          const float bw = static_cast<float>(rw) / static_cast<float>(pw);
          const T* plane = xp + (b * c + ch) * h * w;
          T* out = yp + q * ph * pw;
          for (int64_t i = 0; i < ph; ++i) {
            int64_t hs = std::clamp<int64_t>(static_cast<int64_t>(std::floor(i * bh)) + y0, 0, h);
            int64_t he = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((i + 1) * bh)) + y0, 0, h);
            for (int64_t j = 0; j < pw; ++j) {
              int64_t ws = std::clamp<int64_t>(static_cast<int64_t>(std::floor(j * bw)) + x0, 0, w);
              int64_t we = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((j + 1) * bw)) + x0, 0, w);
              C best = -std::numeric_limits<C>::infinity();
              bool empty = he <= hs || we <= ws;
              for (int64_t yy = hs; yy < he; ++yy)
                for (int64_t xx = ws; xx < we; ++xx)
                  best = std::max(best, static_cast<C>(plane[yy * w + xx]));
              out[i * pw + j] = static_cast<T>(empty ? C(0) : best);
            }
          }
        }
      });
    });
  }

 private:
  std::vector<int64_t> pooled_;
  float scale_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_max_roi_pool) {
  reg.add(tessera::rt::KernelDef::of<MaxRoiPool>("MaxRoiPool"));
}
