// Patch convolutions as one matrix product (Conv and com.tessera NhwcConv): where the kernel equals the
// stride, with no pads, dilation 1 and one group (ViT's 16x16 stride-16 patch embedding), the windows
// do not overlap and the convolution is P [N*oH*oW, K] x W^T [K, M], P the input cut into its patches
// (K = C*kH*kW, in the weight's order). cuDNN runs it as an implicit GEMM at a tenth of the tensor
// cores' rate (0.27 ms for ViT-B/16 at batch 32, 7.4 GFLOP); here one copy kernel makes P
// (conv_patch.h) and cuBLASLt multiplies:
//  - NhwcConv (X [N, H, W, C], W [M, kH, kW, C]): Y [N*oH*oW, M] = P W^T + B, the bias in cuBLASLt's
//    epilogue: Y is already channels-last;
//  - Conv (X [N, C, H, W], W [M, C, kH, kW]): the same product and bias epilogue into scratch
//    [N, oH*oW, M], then a tiled transpose of each image to [N, M, oH*oW] (data_ops.h).
// Float16 and bfloat16 accumulate in float32 (cuBLASLt, matmul_lt.h); float32 stays float32 unless the
// session's precision is TF32. X's batch may vary, its other axes and W are static. Kernels of one pixel
// (1x1) stay with cuDNN, and so does anything with an activation or a residual Z (NhwcConv's fused
// forms); TESSERA_CUDA_PATCH_GEMM=off leaves every convolution to cuDNN (comparisons).
#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/conv_patch.h"
#include "backends/cuda/data_ops.h"
#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernel_util.h"
#include "backends/cuda/matmul_lt.h"

namespace tessera::cuda {

namespace {

bool patch_gemm_enabled() {
  const char* v = std::getenv("TESSERA_CUDA_PATCH_GEMM");
  return !v || std::string_view(v) != "off";
}

bool all_equal(const std::vector<int64_t>& v, int64_t want) {
  for (int64_t x : v)
    if (x != want) return false;
  return true;
}

// A shape of rank 4 with no zero-sized axis, static but for the batch axis where `any_batch` (-1 there),
// or nullopt.
std::optional<rt::Shape> static_shape4(const rt::KernelInfo& info, size_t i, bool any_batch) {
  const auto& t = info.input_type(i);
  if (!t.is_tensor() || !t.shape || t.shape->size() != 4) return std::nullopt;
  rt::Shape s;
  for (const auto& d : *t.shape) {
    if (s.empty() && any_batch && !d.is_static()) {
      s.push_back(-1);
      continue;
    }
    if (!d.is_static() || d.value <= 0) return std::nullopt;
    s.push_back(d.value);
  }
  return s;
}

// Whether the node is a patch convolution this kernel takes (see the file comment).
bool patch_supports(const rt::KernelInfo& info, bool nhwc) {
  if (!patch_gemm_enabled()) return false;
  const size_t inputs = info.input_count();
  if (inputs < 2 || inputs > 3 || info.output_count() != 1 || !all_tensors(info)) return false;
  if (!same_float_inputs(info, inputs)) return false;
  if (nhwc && !info.get_string("activation", "").empty()) return false;
  auto x = static_shape4(info, 0, true), w = static_shape4(info, 1, false);
  if (!x || !w) return false;
  const int64_t kh = (*w)[nhwc ? 1 : 2], kw = (*w)[nhwc ? 2 : 3];
  const int64_t c = (*x)[nhwc ? 3 : 1], wc = (*w)[nhwc ? 3 : 1];
  const int64_t h = (*x)[nhwc ? 1 : 2], ww = (*x)[nhwc ? 2 : 3];
  if (c != wc || kh * kw < 2 || kh > h || kw > ww) return false;
  if (info.get_int("group", 1) != 1) return false;
  const std::string pad = info.get_string("auto_pad", "NOTSET");
  if (pad != "NOTSET" && pad != "VALID") return false;
  if (!all_equal(info.get_ints("pads", {}), 0) || !all_equal(info.get_ints("dilations", {}), 1)) return false;
  const auto ks = info.get_ints("kernel_shape", {kh, kw});
  return info.get_ints("strides", {}) == std::vector<int64_t>{kh, kw} && ks == std::vector<int64_t>{kh, kw};
}

class PatchConvKernel : public rt::OpKernel {
 public:
  PatchConvKernel(bool nhwc, bool tf32) : nhwc_(nhwc), tf32_(tf32) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor& w = ctx.input(1);
    const rt::Tensor* b = ctx.optional_input(2);
    check_inputs(ctx, x, w, b);
    const rt::Shape& xs = x.shape();
    const rt::Shape& ws = w.shape();
    const int64_t n = xs[0], m = ws[0];
    const int64_t c = xs[nhwc_ ? 3 : 1], h = xs[nhwc_ ? 1 : 2], wd = xs[nhwc_ ? 2 : 3];
    const int64_t kh = ws[nhwc_ ? 1 : 2], kw = ws[nhwc_ ? 2 : 3];
    const int64_t oh = h / kh, ow = wd / kw, k = c * kh * kw;
    const rt::DataType dt = x.dtype();
    const auto esize = static_cast<int64_t>(rt::dtype_bytes(dt, 1));
    cudaStream_t s = native(ctx.stream());

    rt::Tensor p = ctx.scratch_uninitialized(dt, {n * oh * ow, k});
    PatchGeom g;
    g.n = n;
    g.oh = oh;
    g.ow = ow;
    g.planes = nhwc_ ? 1 : c;
    g.h = h;
    g.kh = kh;
    const int64_t run_bytes = (nhwc_ ? kw * c : kw) * esize, pitch_bytes = (nhwc_ ? wd * c : wd) * esize;
    g.unit = patch_unit(run_bytes, pitch_bytes, x.raw(), p.raw());
    g.run = run_bytes / g.unit;
    g.pitch = pitch_bytes / g.unit;
    launch_patchify(g, x.raw(), p.raw(), s);
    check_launch(ctx);

    // P W^T + B into Y itself (NhwcConv: channels-last already) or, for Conv, into scratch [N, oH*oW, M]
    // then one tiled transpose per image to [N, M, oH*oW]. (A batched W P_n^T straight into NCHW ran at
    // 89 TFLOP/s against 370 on the H100: 196-column products.)
    rt::Tensor& y =
        ctx.output_uninitialized(0, dt, nhwc_ ? rt::Shape{n, oh, ow, m} : rt::Shape{n, m, oh, ow});
    rt::Tensor rows;
    if (!nhwc_) rows = ctx.scratch_uninitialized(dt, {n * oh * ow, m});
    void* d = nhwc_ ? y.raw() : rows.raw();
    const void* bias = b ? b->raw() : nullptr;
    LtProblem q;
    q.dtype = dt;
    q.tf32 = tf32_ && dt == rt::DataType::kFloat;
    q.m = n * oh * ow;
    q.n = m;
    q.k = k;
    q.tb = true;  // W [M, K] is B^T
    q.epilogue = b ? Epilogue::kBias : Epilogue::kNone;
    q.align = common_alignment({p.raw(), w.raw(), d, bias});
    lt_.run(ctx, q, p.raw(), w.raw(), d, bias, 1.f, 0.f);
    if (nhwc_) {
      ctx.set_path("patch GEMM (copy + cuBLASLt, bias epilogue)");
      return;
    }
    ctx.set_path("patch GEMM (copy + cuBLASLt + transpose to NCHW)");
    launch_transpose_tiles(static_cast<int>(esize), rows.raw(), y.raw(), n, oh * ow, m, s);
    check_launch(ctx);
  }

 private:
  // The run-time shapes against what `supports` saw at session build (a model fed other sizes).
  void check_inputs(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Tensor& w,
                    const rt::Tensor* b) const {
    const char* layout = nhwc_ ? "[N, H, W, C] and [M, kH, kW, C]" : "[N, C, H, W] and [M, C, kH, kW]";
    if (x.rank() != 4 || w.rank() != 4)
      ctx.fail(fmt::format("X {} and W {} must both have rank 4 ({})", rt::shape_str(x.shape()),
                           rt::shape_str(w.shape()), layout));
    if (x.dtype() != w.dtype() || (b && b->dtype() != x.dtype()))
      ctx.fail("X, W and B must have one element type");
    const size_t ca = nhwc_ ? 3 : 1, ha = nhwc_ ? 1 : 2, wa = nhwc_ ? 2 : 3;
    if (x.shape()[ca] != w.shape()[ca])
      ctx.fail(fmt::format("X {} has {} channels but W {} takes {} ({})", rt::shape_str(x.shape()),
                           x.shape()[ca], rt::shape_str(w.shape()), w.shape()[ca], layout));
    if (w.shape()[ha] > x.shape()[ha] || w.shape()[wa] > x.shape()[wa] || x.numel() == 0 || w.numel() == 0)
      ctx.fail(fmt::format("the {}x{} window of W {} does not fit X {}", w.shape()[ha], w.shape()[wa],
                           rt::shape_str(w.shape()), rt::shape_str(x.shape())));
    if (b && (b->rank() != 1 || b->shape()[0] != w.shape()[0]))
      ctx.fail(fmt::format("B {} must be [{}] (one value per output channel)", rt::shape_str(b->shape()),
                           w.shape()[0]));
  }

  bool nhwc_, tf32_;
  LtMatmul lt_;
};

}  // namespace

void register_patch_conv_kernels(KernelTable& t) {
  const bool tf32 = t.precision == passes::Precision::kTf32;
  // Above the cuDNN kernels (cuda_def's priority 10) for the nodes `supports` takes.
  rt::KernelDef nchw = cuda_def(
      "Conv", [](const rt::KernelInfo& i) { return patch_supports(i, false); },
      [tf32](const rt::KernelInfo&) -> rt::KernelPtr {
        return std::make_unique<PatchConvKernel>(false, tf32);
      });
  nchw.priority = 11;
  nchw.name = "cuda-patch-gemm";
  t.add(std::move(nchw));
  rt::KernelDef nhwc = cuda_def(
      "NhwcConv", [](const rt::KernelInfo& i) { return patch_supports(i, true); },
      [tf32](const rt::KernelInfo&) -> rt::KernelPtr {
        return std::make_unique<PatchConvKernel>(true, tf32);
      });
  nhwc.priority = 11;
  nhwc.name = "cuda-patch-gemm";
  t.add(std::move(nhwc.in_domain("com.tessera")));
}

}  // namespace tessera::cuda
