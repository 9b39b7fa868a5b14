// The CUDA backend's AffineGrid (20) and GridSample (ai.onnx 16: 2-D; 20, 22: N-D up to 8 spatial axes):
// every mode and padding mode, x of the number types, grid of the float types.
#include <fmt/format.h>

#include "backends/cuda/data_util.h"
#include "backends/cuda/grid_sample_ops.h"
#include "backends/cuda/kernel_util.h"

namespace tessera::cuda {

namespace {

using rt::DataType;

int mode_of(const rt::KernelInfo& info) {
  const std::string m = info.get_string("mode", info.since_version() >= 20 ? "linear" : "bilinear");
  if (m == "nearest") return 0;
  if (m == "bilinear" || m == "linear") return 1;
  if (m == "bicubic" || m == "cubic") return 2;
  return -1;
}

int padding_of(const rt::KernelInfo& info) {
  const std::string p = info.get_string("padding_mode", "zeros");
  if (p == "zeros") return 0;
  if (p == "border") return 1;
  if (p == "reflection") return 2;
  return -1;
}

bool float_type(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kDouble;
}

bool grid_sample_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !info.has_input(0) || !info.has_input(1)) return false;
  if (mode_of(info) < 0 || padding_of(info) < 0) return false;  // the CPU names the bad attribute
  const DataType x = info.input_dtype(0);
  return scalar_type(x) && x != DataType::kBool && float_type(info.input_dtype(1));
}

class GridSample : public rt::OpKernel {
 public:
  explicit GridSample(const rt::KernelInfo& info)
      : version_(info.since_version()),
        mode_(mode_of(info)),
        padding_(padding_of(info)),
        align_corners_(info.get_int("align_corners", 0) != 0) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor& grid = ctx.input(1);
    const int rank = x.rank();
    const int spatial = rank - 2;
    if (rank < 3 || spatial > kGridSpatial)
      ctx.fail(fmt::format("X must be [N, C, spatial...] with 1 to {} spatial axes, got {}", kGridSpatial,
                           rt::shape_str(x.shape())));
    if (version_ < 20 && rank != 4)
      ctx.fail(fmt::format("GridSample-16 takes 4-D X, got {}", rt::shape_str(x.shape())));
    if (grid.rank() != rank || grid.dim(0) != x.dim(0) || grid.dim(-1) != spatial)
      ctx.fail(fmt::format("grid {} must be [N={}, out spatial..., {}] for X {}", rt::shape_str(grid.shape()),
                           x.dim(0), spatial, rt::shape_str(x.shape())));
    rt::Shape out_shape = {x.dim(0), x.dim(1)};
    for (int d = 1; d <= spatial; ++d) out_shape.push_back(grid.dim(d));
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), out_shape);
    if (y.numel() == 0) return;
    for (int d = 2; d < rank; ++d)
      if (x.dim(d) == 0) ctx.fail(fmt::format("X {} has an empty spatial axis", rt::shape_str(x.shape())));
    GridSampleSpec s;
    s.spatial = spatial;
    s.mode = mode_;
    s.padding = padding_;
    s.align_corners = align_corners_;
    s.batch = x.dim(0);
    s.channels = x.dim(1);
    for (int d = 0; d < spatial; ++d) {
      s.in_dims[d] = x.dim(2 + d);
      s.in_plane *= x.dim(2 + d);
      s.out_plane *= y.dim(2 + d);
    }
    launch_grid_sample(*scalar_type(x.dtype()), x.raw(), *scalar_type(grid.dtype()), grid.raw(), y.raw(), s,
                       native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  int version_, mode_, padding_;
  bool align_corners_;
};

// AffineGrid (20): the size input is read on the host.
class AffineGrid : public rt::OpKernel {
 public:
  explicit AffineGrid(const rt::KernelInfo& info) : align_corners_(info.get_int("align_corners", 0) != 0) {}
  static bool supports(const rt::KernelInfo& info) {
    return all_tensors(info) && info.has_input(0) && info.has_input(1) && float_type(info.input_dtype(0));
  }
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& theta = ctx.input(0);
    const std::vector<int64_t> size = ctx.input(1).to_int64_vector();
    if (size.size() != 4 && size.size() != 5)
      ctx.fail(fmt::format("size must have 4 (N, C, H, W) or 5 (N, C, D, H, W) values, got {}", size.size()));
    for (size_t i = 0; i < size.size(); ++i)
      if (size[i] < 0) ctx.fail(fmt::format("size[{}] = {} is negative", i, size[i]));
    const int nd = static_cast<int>(size.size()) - 2;
    const int64_t n = size[0];
    if (theta.rank() != 3 || theta.dim(0) != n || theta.dim(1) != nd || theta.dim(2) != nd + 1)
      ctx.fail(fmt::format("theta {} must be [{}, {}, {}] for size of {} values",
                           rt::shape_str(theta.shape()), n, nd, nd + 1, size.size()));
    rt::Shape out_shape = {n};
    for (int d = 0; d < nd; ++d) out_shape.push_back(size[2 + d]);
    out_shape.push_back(nd);
    rt::Tensor& grid = ctx.output_uninitialized(0, theta.dtype(), out_shape);
    const int64_t d_len = nd == 3 ? size[2] : 1, h_len = size[nd == 3 ? 3 : 2], w_len = size[nd == 3 ? 4 : 3];
    launch_affine_grid(*scalar_type(theta.dtype()), theta.raw(), grid.raw(), n, nd, d_len, h_len, w_len,
                       align_corners_, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  bool align_corners_;
};

}  // namespace

void register_grid_sample_kernels(KernelTable& t) {
  t.add(cuda_def(
            "AffineGrid", AffineGrid::supports,
            [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<AffineGrid>(i); }, 20),
        HostIo{{1}, {}});
  t.add(cuda_def(
      "GridSample", grid_sample_supported,
      [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<GridSample>(i); }, 16));
}

}  // namespace tessera::cuda
