// Reference kernel of AffineGrid (ai.onnx 20): for size (N, C, H, W) or (N, C, D, H, W), each output
// position's normalised coordinates (x innermost, each in [-1, 1]: pixel centres, or the corner pixels'
// centres at +-1 with align_corners) are multiplied by theta[n] (2x3 or 3x4) to give grid[n, ..., :].
#include <fmt/format.h>

#include "ops/attention/ref_util.h"
#include "runtime/kernel.h"

namespace {

namespace rt = tessera::rt;
namespace refk = tessera::ops::refk;

// Normalised coordinate of pixel i of an axis of length len; a single pixel sits at the centre, 0.
double base_coord(int64_t i, int64_t len, bool align_corners) {
  if (len <= 1) return 0.0;
  const double l = static_cast<double>(len);
  if (align_corners) return -1.0 + 2.0 * static_cast<double>(i) / (l - 1);
  return (2.0 * static_cast<double>(i) + 1.0) / l - 1.0;
}

class AffineGrid : public rt::OpKernel {
 public:
  explicit AffineGrid(const rt::KernelInfo& info) : align_corners_(info.get_int("align_corners", 0) != 0) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& theta = ctx.input(0);
    const rt::Tensor& size_input = ctx.input(1);
    refk::require_float(theta, "theta");
    std::vector<int64_t> size = size_input.to_int64_vector();
    if (size.size() != 4 && size.size() != 5)
      ctx.fail(fmt::format("size must have 4 (N, C, H, W) or 5 (N, C, D, H, W) values, got {}", size.size()));
    for (size_t i = 0; i < size.size(); ++i)
      if (size[i] < 0) ctx.fail(fmt::format("size[{}] = {} is negative", i, size[i]));
    const int nd = static_cast<int>(size.size()) - 2;  // spatial axes: 2 or 3
    const int64_t n = size[0];
    if (theta.rank() != 3 || theta.dim(0) != n || theta.dim(1) != nd || theta.dim(2) != nd + 1)
      ctx.fail(fmt::format("theta {} must be [{}, {}, {}] for size of {} values",
                           rt::shape_str(theta.shape()), n, nd, nd + 1, size.size()));
    rt::Shape out_shape = {n};
    for (int d = 0; d < nd; ++d) out_shape.push_back(size[2 + d]);
    out_shape.push_back(nd);
    const int64_t total = rt::shape_numel(out_shape);
    std::vector<double> th = refk::to_doubles(theta, "AffineGrid theta");
    std::vector<double> out(static_cast<size_t>(total));
    // Spatial lengths in output order (D,) H, W; the coordinate vector is (x, y[, z], 1).
    const int64_t d_len = nd == 3 ? size[2] : 1, h_len = size[nd == 3 ? 3 : 2], w_len = size[nd == 3 ? 4 : 3];
    int64_t o = 0;
    for (int64_t b = 0; b < n; ++b) {
      const double* m = &th[static_cast<size_t>(b * nd * (nd + 1))];
      for (int64_t z = 0; z < d_len; ++z) {
        for (int64_t y = 0; y < h_len; ++y) {
          for (int64_t x = 0; x < w_len; ++x) {
            double v[4] = {base_coord(x, w_len, align_corners_), base_coord(y, h_len, align_corners_), 0.0,
                           0.0};
            if (nd == 3) v[2] = base_coord(z, d_len, align_corners_);
            v[nd] = 1.0;
            for (int r = 0; r < nd; ++r) {
              double acc = 0;
              for (int c = 0; c <= nd; ++c) acc += m[r * (nd + 1) + c] * v[c];
              out[static_cast<size_t>(o++)] = acc;
            }
          }
        }
      }
    }
    refk::store_doubles(ctx.output(0, theta.dtype(), out_shape), out, "AffineGrid grid");
  }

 private:
  bool align_corners_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(image_affine_grid) {
  reg.add(tessera::rt::KernelDef::of<AffineGrid>("AffineGrid"));
}
