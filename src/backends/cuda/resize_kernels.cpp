// The CUDA backend's Resize (ai.onnx 10, 11, 13, 18, 19) and Upsample (7, 9): every mode (nearest with its
// rounding modes, linear, cubic with exclude_outside and antialias), coordinate transformation mode, roi,
// axes and keep_aspect_ratio_policy. The output sizes are worked out on the host from scales / sizes / roi
// (host inputs), as the CPU reference does (ops/image/resize_kernel.cpp); the interpolation runs on the GPU.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cuda/data_util.h"
#include "backends/cuda/kernel_util.h"
#include "backends/cuda/resize_ops.h"
#include "ops/image/resize_ref.h"
#include "runtime/half.h"

namespace tessera::cuda {

namespace {

namespace rr = ops::resize_ref;
using rt::DataType;
using rt::KernelContext;
using rt::Tensor;

bool is_float8(DataType t) {
  return t == DataType::kFloat8E4M3FN || t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2 ||
         t == DataType::kFloat8E5M2FNUZ || t == DataType::kFloat8E8M0;
}

// The options of a node, or a KernelError where the CPU reference would refuse them.
struct Parsed {
  rr::Options opts;
  std::vector<int64_t> axes;
  std::string policy = "stretch";
};

Parsed parse(const rt::KernelInfo& info) {
  Parsed p;
  const int version = info.since_version();
  p.opts.mode = rr::parse_mode(info.get_string("mode", "nearest"), version >= 11);
  if (version < 11) {
    p.opts.coord = rr::Coord::kAsymmetric;
    p.opts.nearest = rr::Nearest::kSimple;
    return p;
  }
  p.opts.coord = rr::parse_coord(info.get_string("coordinate_transformation_mode", "half_pixel"));
  if (p.opts.coord == rr::Coord::kHalfPixelSymmetric && version < 19)
    throw rt::KernelError("coordinate_transformation_mode 'half_pixel_symmetric' needs Resize-19");
  if (p.opts.coord == rr::Coord::kTfHalfPixelForNn && version >= 13)
    throw rt::KernelError("coordinate_transformation_mode 'tf_half_pixel_for_nn' was removed in Resize-13");
  p.opts.nearest = rr::parse_nearest(info.get_string("nearest_mode", "round_prefer_floor"));
  p.opts.cubic_a = info.get_float("cubic_coeff_a", -0.75f);
  p.opts.exclude_outside = info.get_int("exclude_outside", 0) != 0;
  p.opts.extrapolation = info.get_float("extrapolation_value", 0.0f);
  if (version >= 18) {
    p.opts.antialias = info.get_int("antialias", 0) != 0;
    if (info.has_attr("axes")) p.axes = info.get_ints("axes");
    p.policy = info.get_string("keep_aspect_ratio_policy", "stretch");
    if (p.policy != "stretch" && p.policy != "not_larger" && p.policy != "not_smaller")
      throw rt::KernelError(fmt::format("keep_aspect_ratio_policy '{}' is not supported", p.policy));
  }
  return p;
}

bool resize_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !info.has_input(0)) return false;
  Parsed p;
  try {
    p = parse(info);
  } catch (const rt::KernelError&) {
    return false;  // the CPU says what is wrong
  }
  const ir::Type& t = info.input_type(0);
  if (t.has_shape() && (t.shape->empty() || t.shape->size() > static_cast<size_t>(kResizeRank))) return false;
  const DataType dt = info.input_dtype(0);
  if (p.opts.mode == rr::Mode::kNearest)
    return storage_bytes(dt).has_value() && !(is_float8(dt) && p.opts.coord == rr::Coord::kTfCropAndResize);
  return scalar_type(dt).has_value() && dt != DataType::kBool;
}

// The extrapolation value in the element type, as raw bits (nearest copies elements).
uint64_t extrapolation_bits(DataType t, double v) {
  uint64_t bits = 0;
  auto put = [&](auto x) { std::memcpy(&bits, &x, sizeof(x)); };
  switch (t) {
    case DataType::kFloat:
      put(rr::from_double<float>(v));
      break;
    case DataType::kDouble:
      put(v);
      break;
    case DataType::kFloat16:
      put(rr::from_double<rt::Float16>(v).bits);
      break;
    case DataType::kBFloat16:
      put(rr::from_double<rt::BFloat16>(v).bits);
      break;
    case DataType::kBool:
      put(static_cast<uint8_t>(v != 0));
      break;
    case DataType::kInt8:
      put(rr::from_double<int8_t>(v));
      break;
    case DataType::kUint8:
      put(rr::from_double<uint8_t>(v));
      break;
    case DataType::kInt16:
      put(rr::from_double<int16_t>(v));
      break;
    case DataType::kUint16:
      put(rr::from_double<uint16_t>(v));
      break;
    case DataType::kInt32:
      put(rr::from_double<int32_t>(v));
      break;
    case DataType::kUint32:
      put(rr::from_double<uint32_t>(v));
      break;
    case DataType::kInt64:
      put(rr::from_double<int64_t>(v));
      break;
    case DataType::kUint64:
      put(rr::from_double<uint64_t>(v));
      break;
    default:
      break;
  }
  return bits;
}

// Resizes x by the per-axis spec into output 0.
void run_resize(KernelContext& ctx, const Tensor& x, const std::vector<rr::Axis>& spec,
                const rr::Options& o) {
  rt::Shape out_shape;
  for (const rr::Axis& a : spec) out_shape.push_back(a.out);
  const int64_t n = rt::shape_numel(out_shape);  // throws on overflow
  Tensor& y = ctx.output_uninitialized(0, x.dtype(), out_shape);
  if (n == 0) return;
  if (x.numel() == 0) ctx.fail("cannot resize an empty input to a non-empty output");
  ResizeSpec s;
  s.rank = static_cast<int>(spec.size());
  s.mode = static_cast<int>(o.mode);
  s.coord = static_cast<int>(o.coord);
  s.nearest = static_cast<int>(o.nearest);
  s.cubic_a = o.cubic_a;
  s.exclude_outside = o.exclude_outside;
  s.antialias = o.antialias;
  s.extrapolation = o.extrapolation;
  s.extrapolation_bits = extrapolation_bits(x.dtype(), o.extrapolation);
  for (size_t d = 0; d < spec.size(); ++d)
    s.axes[d] = {spec[d].in, spec[d].out, spec[d].scale, spec[d].roi_start, spec[d].roi_end};
  if (o.mode == rr::Mode::kNearest)
    launch_resize_nearest(*storage_bytes(x.dtype()), x.raw(), y.raw(), s, n, native(ctx.stream()));
  else
    launch_resize_interpolate(*scalar_type(x.dtype()), x.raw(), y.raw(), s, n, native(ctx.stream()));
  check_launch(ctx);
}

class Resize : public rt::OpKernel {
 public:
  explicit Resize(const rt::KernelInfo& info) : version_(info.since_version()), p_(parse(info)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    if (rank == 0) ctx.fail("X must have rank 1 or more");
    if (rank > kResizeRank)
      ctx.fail(fmt::format("the CUDA Resize takes up to rank {}, got {}", kResizeRank, rank));
    const std::vector<int64_t> axes = resized_axes(ctx, rank);
    std::vector<rr::Axis> spec(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) spec[d].in = spec[d].out = x.dim(static_cast<int>(d));
    const Tensor* scales = ctx.optional_input(version_ >= 11 ? 2 : 1);
    const Tensor* sizes = version_ >= 11 ? ctx.optional_input(3) : nullptr;
    if (scales && scales->numel() == 0) scales = nullptr;
    if (sizes && sizes->numel() == 0) sizes = nullptr;
    if (scales && sizes) ctx.fail("both scales and sizes are given; give only one");
    if (!scales && !sizes) ctx.fail("neither scales nor sizes is given");
    if (sizes)
      from_sizes(ctx, *sizes, axes, spec);
    else
      from_scales(ctx, *scales, axes, spec);
    if (p_.opts.coord == rr::Coord::kTfCropAndResize) read_roi(ctx, axes, spec);

    run_resize(ctx, x, spec, p_.opts);
  }

 private:
  std::vector<int64_t> resized_axes(const KernelContext& ctx, int64_t rank) const {
    std::vector<int64_t> axes;
    if (p_.axes.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
      return axes;
    }
    for (int64_t a : p_.axes) {
      if (a < -rank || a >= rank) ctx.fail(fmt::format("axes value {} is out of range for rank {}", a, rank));
      const int64_t n = a < 0 ? a + rank : a;
      if (std::find(axes.begin(), axes.end(), n) != axes.end())
        ctx.fail(fmt::format("axes repeats axis {}", a));
      axes.push_back(n);
    }
    return axes;
  }

  static void from_scales(const KernelContext& ctx, const Tensor& scales, const std::vector<int64_t>& axes,
                          std::vector<rr::Axis>& spec) {
    if (scales.numel() != static_cast<int64_t>(axes.size()))
      ctx.fail(fmt::format("scales has {} values for {} resized axes", scales.numel(), axes.size()));
    for (size_t k = 0; k < axes.size(); ++k) {
      // Scales are float: the output size is floor(input * float scale).
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
    const std::vector<int64_t> want = sizes.to_int64_vector();
    for (size_t k = 0; k < axes.size(); ++k) {
      if (want[k] < 0) ctx.fail(fmt::format("sizes[{}] = {} is negative", k, want[k]));
      if (spec[axes[k]].in == 0 && want[k] != 0)
        ctx.fail(fmt::format("cannot resize axis {} of length 0 to {}", axes[k], want[k]));
    }
    if (p_.policy == "stretch") {
      for (size_t k = 0; k < axes.size(); ++k) {
        rr::Axis& a = spec[axes[k]];
        a.out = want[k];
        a.scale = a.in == 0 ? 1.0 : static_cast<double>(want[k]) / static_cast<double>(a.in);
      }
      return;
    }
    // One scale for all resized axes: the largest that fits (not_larger) or the smallest that covers.
    const bool not_larger = p_.policy == "not_larger";
    double scale = not_larger ? std::numeric_limits<double>::infinity() : 0.0;
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t in = spec[axes[k]].in;
      if (in == 0) continue;
      const double s = static_cast<double>(want[k]) / static_cast<double>(in);
      scale = not_larger ? std::min(scale, s) : std::max(scale, s);
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
    const auto n = static_cast<int64_t>(axes.size());
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
  Parsed p_;
};

// Upsample (7, 9; replaced by Resize): scales from the attribute (7) or the host input (9), asymmetric
// coordinates, nearest floored or linear, as the CPU reference (ops/image/upsample_kernel.cpp).
class Upsample : public rt::OpKernel {
 public:
  explicit Upsample(const rt::KernelInfo& info) : version_(info.since_version()) {
    opts_.mode = rr::parse_mode(info.get_string("mode", "nearest"), false);
    opts_.coord = rr::Coord::kAsymmetric;
    opts_.nearest = rr::Nearest::kSimple;
    if (version_ < 9) attr_scales_ = info.get_floats("scales");
  }
  static bool supports(const rt::KernelInfo& info) {
    if (!all_tensors(info) || !info.has_input(0) || info.since_version() < 7) return false;
    const std::string mode = info.get_string("mode", "nearest");
    const DataType dt = info.input_dtype(0);
    if (mode == "nearest") return storage_bytes(dt).has_value();
    return (mode == "linear" || mode == "bilinear") && scalar_type(dt) && dt != DataType::kBool;
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    std::vector<double> scales;
    if (version_ >= 9) {
      const Tensor& sc = ctx.input(1);
      for (int64_t i = 0; i < sc.numel(); ++i) scales.push_back(static_cast<float>(sc.to_double(i)));
    } else {
      scales.assign(attr_scales_.begin(), attr_scales_.end());
    }
    if (x.rank() == 0) ctx.fail("X must have rank 1 or more");
    if (x.rank() > kResizeRank)
      ctx.fail(fmt::format("the CUDA Upsample takes up to rank {}, got {}", kResizeRank, x.rank()));
    if (static_cast<int64_t>(scales.size()) != x.rank())
      ctx.fail(fmt::format("scales has {} values for an input of rank {}", scales.size(), x.rank()));
    std::vector<rr::Axis> spec(scales.size());
    for (size_t d = 0; d < scales.size(); ++d) {
      if (!(scales[d] > 0) || !std::isfinite(scales[d]))
        ctx.fail(fmt::format("scales[{}] = {} must be positive", d, scales[d]));
      spec[d].in = x.dim(static_cast<int>(d));
      spec[d].scale = scales[d];
      const double out = std::floor(scales[d] * static_cast<double>(spec[d].in));
      if (out > 9.0e18) ctx.fail(fmt::format("scales[{}] = {} gives an output size too large", d, scales[d]));
      spec[d].out = static_cast<int64_t>(out);
    }
    run_resize(ctx, x, spec, opts_);
  }

 private:
  int version_;
  rr::Options opts_;
  std::vector<float> attr_scales_;
};

}  // namespace

void register_resize_kernels(KernelTable& t) {
  t.add(cuda_def(
            "Upsample", Upsample::supports,
            [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Upsample>(i); }, 7, 9),
        HostIo{{1}, {}});
  // roi, scales and sizes (Resize-10: scales at 1) decide the output shape: read on the host.
  t.add(cuda_def(
            "Resize", resize_supported,
            [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Resize>(i); }, 10),
        HostIo{{1, 2, 3}, {}});
}

}  // namespace tessera::cuda
