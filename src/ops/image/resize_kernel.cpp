// Reference kernel of Resize (ai.onnx 10, 11, 13, 18, 19); the interpolation itself is in resize_ref.h.
// Output sizes come from 'sizes' (with keep_aspect_ratio_policy, one common scale for every resized
// axis, rounded half up) or from 'scales' (floor(input * scale)); only the axes named by 'axes' (18+)
// change. Resize-10 has neither coordinate_transformation_mode nor nearest_mode: it maps coordinates
// asymmetrically and rounds nearest neighbours the way ONNX Runtime does for that version.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ops/image/resize_ref.h"
#include "runtime/kernel.h"

namespace {

namespace rt = tessera::rt;
namespace rr = tessera::ops::resize_ref;
using rt::KernelContext;
using rt::Tensor;

class Resize : public rt::OpKernel {
 public:
  explicit Resize(const rt::KernelInfo& info) : version_(info.since_version()) {
    opts_.mode = rr::parse_mode(info.get_string("mode", "nearest"), version_ >= 11);
    if (version_ < 11) {
      opts_.coord = rr::Coord::kAsymmetric;
      opts_.nearest = rr::Nearest::kSimple;
      return;
    }
    opts_.coord = rr::parse_coord(info.get_string("coordinate_transformation_mode", "half_pixel"));
    if (opts_.coord == rr::Coord::kHalfPixelSymmetric && version_ < 19)
      throw rt::KernelError("coordinate_transformation_mode 'half_pixel_symmetric' needs Resize-19");
    if (opts_.coord == rr::Coord::kTfHalfPixelForNn && version_ >= 13)
      throw rt::KernelError("coordinate_transformation_mode 'tf_half_pixel_for_nn' was removed in Resize-13");
    opts_.nearest = rr::parse_nearest(info.get_string("nearest_mode", "round_prefer_floor"));
    opts_.cubic_a = info.get_float("cubic_coeff_a", -0.75f);
    opts_.exclude_outside = info.get_int("exclude_outside", 0) != 0;
    opts_.extrapolation = info.get_float("extrapolation_value", 0.0f);
    if (version_ >= 18) {
      opts_.antialias = info.get_int("antialias", 0) != 0;
      if (info.has_attr("axes")) axes_ = info.get_ints("axes");
      policy_ = info.get_string("keep_aspect_ratio_policy", "stretch");
      if (policy_ != "stretch" && policy_ != "not_larger" && policy_ != "not_smaller")
        throw rt::KernelError(fmt::format("keep_aspect_ratio_policy '{}' is not supported", policy_));
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    if (rank == 0) ctx.fail("X must have rank 1 or more");
    std::vector<int64_t> axes = resized_axes(ctx, rank);
    std::vector<rr::Axis> spec(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) spec[d].in = spec[d].out = x.dim(static_cast<int>(d));

    const Tensor* scales = ctx.optional_input(version_ >= 11 ? 2 : 1);
    const Tensor* sizes = version_ >= 11 ? ctx.optional_input(3) : nullptr;
    if (scales && scales->numel() == 0) scales = nullptr;
    if (sizes && sizes->numel() == 0) sizes = nullptr;
    if (scales && sizes) ctx.fail("both scales and sizes are given; give only one");
    if (!scales && !sizes) ctx.fail("neither scales nor sizes is given");
    if (sizes) {
      from_sizes(ctx, *sizes, axes, spec);
    } else {
      from_scales(ctx, *scales, axes, spec);
    }
    if (opts_.coord == rr::Coord::kTfCropAndResize) read_roi(ctx, axes, spec);

    rt::Shape out_shape;
    for (const rr::Axis& a : spec) out_shape.push_back(a.out);
    rt::shape_numel(out_shape);  // throws on overflow
    Tensor& y = ctx.output(0, x.dtype(), out_shape);
    rr::resize(ctx, x, spec, opts_, y);
  }

 private:
  std::vector<int64_t> resized_axes(const KernelContext& ctx, int64_t rank) const {
    std::vector<int64_t> axes;
    if (axes_.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
      return axes;
    }
    for (int64_t a : axes_) {
      if (a < -rank || a >= rank) ctx.fail(fmt::format("axes value {} is out of range for rank {}", a, rank));
      int64_t n = a < 0 ? a + rank : a;
      if (std::find(axes.begin(), axes.end(), n) != axes.end())
        ctx.fail(fmt::format("axes repeats axis {}", a));
      axes.push_back(n);
    }
    return axes;
  }

  void from_scales(const KernelContext& ctx, const Tensor& scales, const std::vector<int64_t>& axes,
                   std::vector<rr::Axis>& spec) const {
    if (scales.numel() != static_cast<int64_t>(axes.size()))
      ctx.fail(fmt::format("scales has {} values for {} resized axes", scales.numel(), axes.size()));
    for (size_t k = 0; k < axes.size(); ++k) {
      // Scales are float: the spec's output size is floor(input * float scale).
      const double s = static_cast<double>(static_cast<float>(scales.to_double(static_cast<int64_t>(k))));
      if (!(s > 0) || !std::isfinite(s)) ctx.fail(fmt::format("scales[{}] = {} must be positive", k, s));
      rr::Axis& a = spec[axes[k]];
      a.scale = s;
      const double out = std::floor(s * static_cast<double>(a.in));
      if (out > 9.0e18) ctx.fail(fmt::format("scales[{}] = {} gives an output size too large", k, s));
      a.out = static_cast<int64_t>(out);
    }
  }

  void from_sizes(const KernelContext& ctx, const Tensor& sizes, const std::vector<int64_t>& axes,
                  std::vector<rr::Axis>& spec) const {
    if (sizes.numel() != static_cast<int64_t>(axes.size()))
      ctx.fail(fmt::format("sizes has {} values for {} resized axes", sizes.numel(), axes.size()));
    std::vector<int64_t> want = sizes.to_int64_vector();
    for (size_t k = 0; k < axes.size(); ++k) {
      if (want[k] < 0) ctx.fail(fmt::format("sizes[{}] = {} is negative", k, want[k]));
      if (spec[axes[k]].in == 0 && want[k] != 0)
        ctx.fail(fmt::format("cannot resize axis {} of length 0 to {}", axes[k], want[k]));
    }
    if (policy_ == "stretch") {
      for (size_t k = 0; k < axes.size(); ++k) {
        rr::Axis& a = spec[axes[k]];
        a.out = want[k];
        a.scale = a.in == 0 ? 1.0 : static_cast<double>(want[k]) / static_cast<double>(a.in);
      }
      return;
    }
    // One scale for all resized axes: the largest that fits (not_larger) or the smallest that covers.
    double scale = policy_ == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t in = spec[axes[k]].in;
      if (in == 0) continue;
      const double s = static_cast<double>(want[k]) / static_cast<double>(in);
      scale = policy_ == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    if (!std::isfinite(scale)) scale = 1.0;
    for (int64_t d : axes) {
      rr::Axis& a = spec[d];
      a.scale = scale;
      a.out = static_cast<int64_t>(scale * static_cast<double>(a.in) + 0.5);
    }
  }

  static void read_roi(const KernelContext& ctx, const std::vector<int64_t>& axes,
                       std::vector<rr::Axis>& spec) {
    const Tensor* roi = ctx.optional_input(1);
    if (!roi || roi->numel() == 0) return;  // the whole input
    const int64_t n = static_cast<int64_t>(axes.size());
    if (roi->numel() != 2 * n)
      ctx.fail(
          fmt::format("roi has {} values; tf_crop_and_resize needs a start and an end for each of the {} "
                      "resized axes",
                      roi->numel(), n));
    for (int64_t k = 0; k < n; ++k) {
      spec[axes[k]].roi_start = roi->to_double(k);
      spec[axes[k]].roi_end = roi->to_double(n + k);
    }
  }

  int version_;
  rr::Options opts_;
  std::vector<int64_t> axes_;
  std::string policy_ = "stretch";
};

}  // namespace

TESSERA_REGISTER_KERNELS(image_resize) {
  reg.add(tessera::rt::KernelDef::of<Resize>("Resize"));
}
