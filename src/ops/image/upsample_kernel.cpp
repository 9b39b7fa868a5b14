// Reference kernel of Upsample (ai.onnx 1, 7, 9, 10; replaced by Resize): each output dimension is
// floor(input * scale); coordinates map back asymmetrically (x / scale), nearest neighbours are
// floored (as ONNX Runtime does) and linear interpolation clamps at the edge. Shares the interpolation
// of Resize (resize_ref.h).
#include <fmt/format.h>

#include <cmath>

#include "ops/image/resize_ref.h"
#include "runtime/kernel.h"

namespace {

namespace rt = tessera::rt;
namespace rr = tessera::ops::resize_ref;

class Upsample : public rt::OpKernel {
 public:
  explicit Upsample(const rt::KernelInfo& info) : version_(info.since_version()) {
    opts_.mode = rr::parse_mode(info.get_string("mode", "nearest"), false);
    opts_.coord = rr::Coord::kAsymmetric;
    opts_.nearest = rr::Nearest::kSimple;
    if (version_ < 7) {
      attr_scales_ = {1.0f, 1.0f, info.get_float("height_scale"), info.get_float("width_scale")};
    } else if (version_ < 9) {
      attr_scales_ = info.get_floats("scales");
    }
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    std::vector<double> scales;
    if (version_ >= 9) {
      const rt::Tensor& s = ctx.input(1);
      for (int64_t i = 0; i < s.numel(); ++i) scales.push_back(static_cast<float>(s.to_double(i)));
    } else {
      scales.assign(attr_scales_.begin(), attr_scales_.end());
    }
    if (x.rank() == 0) ctx.fail("X must have rank 1 or more");
    if (static_cast<int64_t>(scales.size()) != x.rank())
      ctx.fail(fmt::format("scales has {} values for an input of rank {}", scales.size(), x.rank()));
    std::vector<rr::Axis> spec(scales.size());
    rt::Shape out_shape;
    for (size_t d = 0; d < scales.size(); ++d) {
      if (!(scales[d] > 0) || !std::isfinite(scales[d]))
        ctx.fail(fmt::format("scales[{}] = {} must be positive", d, scales[d]));
      spec[d].in = x.dim(static_cast<int>(d));
      spec[d].scale = scales[d];
      const double out = std::floor(scales[d] * static_cast<double>(spec[d].in));
      if (out > 9.0e18) ctx.fail(fmt::format("scales[{}] = {} gives an output size too large", d, scales[d]));
      spec[d].out = static_cast<int64_t>(out);
      out_shape.push_back(spec[d].out);
    }
    rt::shape_numel(out_shape);
    rt::Tensor& y = ctx.output(0, x.dtype(), out_shape);
    rr::resize(ctx, x, spec, opts_, y);
  }

 private:
  int version_;
  rr::Options opts_;
  std::vector<float> attr_scales_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(image_upsample) {
  reg.add(tessera::rt::KernelDef::of<Upsample>("Upsample"));
}
