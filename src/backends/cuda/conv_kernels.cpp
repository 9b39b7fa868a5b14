// The CUDA backend's convolutions through cuDNN in NCHW: Conv, ConvTranspose and com.microsoft FusedConv
// (every activation it has) over 1 to 3 spatial axes, with groups (depthwise included), dilations,
// strides, pads and auto_pad; the channels-last NhwcConv is conv_nhwc_kernels.cpp, pooling
// pool_kernels.cpp.
//
// cuDNN's legacy convolution API (cudnnConvolutionForward / BackwardData, still in cuDNN 9's cnn library)
// rather than the graph API: it exists unchanged in cuDNN 9.14 on the GPU machines and 9.19 here and takes
// every configuration above through one descriptor set. The algorithm is timed once per shape at session
// build (static shapes) or taken from the heuristic (conv_cudnn.h), kept in the kernel and on disk
// (conv_algo_cache.h). Float32 runs on FMA-only kernels (no TF32 unless the session's precision is kTf32);
// float16 and bfloat16 use tensor cores with float32 accumulation. Bias + Z + ReLU go into
// cudnnConvolutionBiasActivationForward (one call); other epilogues run as one kernel of ours after the
// convolution (conv_epilogue.h).
//
// cuDNN takes symmetric pads only: an input with asymmetric pads (SAME_* with an even window) is padded
// with zeros into a scratch tensor first, and a ConvTranspose whose pads are not symmetric (output_shape,
// output_padding, SAME_*) computes its unpadded output and crops it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <optional>

#include "backends/cuda/conv_algo_cache.h"
#include "backends/cuda/conv_cudnn.h"
#include "backends/cuda/conv_epilogue.h"
#include "backends/cuda/conv_nhwc_kernels.h"
#include "backends/cuda/conv_patch_kernels.h"
#include "backends/cuda/conv_util.h"
#include "backends/cuda/cudnn_handle.h"
#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernel_util.h"
#include "backends/cuda/pool_kernels.h"
#include "ops/nn/window_kernel_util.h"

namespace tessera::cuda {

namespace {

// One configuration: work_shape is cuDNN's input (Conv, padded) or output (ConvTranspose, cropped after).
struct Plan : CudnnConvPlan {
  bool reshape = false;  // pad (Conv) or crop (ConvTranspose)
};

// A shape read as the geometry reads a tensor's: the node's inferred shape at session build, the input's
// at run time.
struct ShapeOf {
  const rt::Shape& s;
  int64_t dim(int64_t i) const { return s[static_cast<size_t>(i)]; }
  int64_t rank() const { return static_cast<int64_t>(s.size()); }
  const rt::Shape& shape() const { return s; }
};

// What both directions share once the geometry is known.
struct Geometry {
  std::vector<int64_t> x_dims, w_dims, y_dims;  // cuDNN's view (1-D padded to 2-D)
  std::vector<int64_t> pads, strides, dilations;
};

void pad_to_2d(Geometry& g) {
  if (g.pads.size() != 1) return;
  for (auto* v : {&g.x_dims, &g.w_dims, &g.y_dims}) v->push_back(1);
  g.pads.push_back(0);
  g.strides.push_back(1);
  g.dilations.push_back(1);
}

void set_descriptors(Plan& p, const Geometry& g, rt::DataType dt, int64_t group) {
  const cudnnDataType_t t = cudnn_type(dt);
  p.d.x.set(t, g.x_dims);
  p.d.y.set(t, g.y_dims);
  auto wd = to_int(g.w_dims, "weight shape");
  check_cudnn(
      cudnnSetFilterNdDescriptor(p.d.w.d, t, CUDNN_TENSOR_NCHW, static_cast<int>(wd.size()), wd.data()),
      "cudnnSetFilterNdDescriptor");
  auto pads = to_int(g.pads, "pads"), strides = to_int(g.strides, "strides"),
       dil = to_int(g.dilations, "dilations");
  check_cudnn(
      cudnnSetConvolutionNdDescriptor(p.d.conv.d, static_cast<int>(pads.size()), pads.data(), strides.data(),
                                      dil.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
      "cudnnSetConvolutionNdDescriptor");
  check_cudnn(cudnnSetConvolutionGroupCount(p.d.conv.d, static_cast<int>(group)),
              "cudnnSetConvolutionGroupCount");
  std::vector<int64_t> bias_dims(g.y_dims.size(), 1);
  bias_dims[1] = g.y_dims[1];
  p.bias.set(t, bias_dims);
}

class ConvKernel : public rt::OpKernel {
 public:
  ConvKernel(const rt::KernelInfo& info, bool transpose, bool tf32)
      : transpose_(transpose),
        tf32_(tf32 && info.input_dtype(0) == rt::DataType::kFloat),
        attrs_(ops::kernels::read_window_attrs(info)),
        group_(info.get_int("group", 1)),
        output_padding_(info.get_ints("output_padding", {})),
        output_shape_(info.get_ints("output_shape", {})),
        act_(read_activation(info)),
        static_x_(static_input_shape(info, 0)),
        static_w_(static_input_shape(info, 1)),
        static_type_(info.input_dtype(0)) {
    set_relu(relu_);
  }

  // With static shapes, the algorithm is chosen when the session is built, by timing the candidates,
  // rather than from the heuristic on the first run.
  void prepare(rt::PrepareContext& ctx) override {
    if (!static_x_ || !static_w_ || static_x_->size() < 3 || static_x_->size() > 5 ||
        static_w_->size() != static_x_->size())
      return;
    try {
      CudnnHandle h = cudnn_handle(native(ctx.stream()));
      std::lock_guard lock(mu_);
      plan(h.handle, ShapeOf{*static_x_}, ShapeOf{*static_w_}, static_type_, true);
    } catch (const rt::KernelError&) {
      // Bad attributes or shapes: the first run reports them, naming the node.
    }
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor& w = ctx.input(1);
    const rt::Tensor* b = ctx.optional_input(2);
    const rt::Tensor* z = ctx.optional_input(3);
    const ElemType t = conv_input_type(ctx, x, w, b, z);
    if (x.rank() < 3 || x.rank() > 5)
      ctx.fail(fmt::format("input X has shape {}; the CUDA kernel takes 1 to 3 spatial axes",
                           rt::shape_str(x.shape())));
    if (w.rank() != x.rank())
      ctx.fail(fmt::format("input W has shape {} but X has {}; their ranks must match",
                           rt::shape_str(w.shape()), rt::shape_str(x.shape())));
    if (group_ < 1) ctx.fail(fmt::format("group is {}; it must be at least 1", group_));
    cudaStream_t s = native(ctx.stream());
    CudnnHandle h = cudnn_handle(s);
    std::lock_guard lock(mu_);
    Plan& p = plan(h.handle, ShapeOf{x.shape()}, ShapeOf{w.shape()}, x.dtype(), false);
    ctx.set_path(p.path);
    check_bias_and_z(ctx, b, z, p.out_shape[1], p.out_shape);
    if (p.empty) {  // an empty batch or output: nothing to compute
      empty_conv_output(ctx, x.dtype(), p.out_shape, b || z || act_.act != ConvAct::kNone);
      return;
    }
    rt::Tensor ws = conv_workspace(ctx, p.workspace), work;
    const float one = 1.f, zero = 0.f;
    if (!transpose_) {
      const void* in = x.raw();
      if (p.reshape)  // asymmetric pads: cuDNN reads a zero-padded copy
        in = zero_padded_input(ctx, t, x, p.work_shape, p.copy, work);
      // conv + Z + bias, then ReLU, in one call where cuDNN takes it (the first refusal is remembered).
      const bool fused = p.fused && b && act_.act == ConvAct::kRelu;
      rt::Tensor& y = fused && !z ? ctx.output(0, x.dtype(), p.out_shape)
                                  : ctx.output_uninitialized(0, x.dtype(), p.out_shape);
      if (y.numel() == 0) return;
      auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(p.algo);
      if (fused && conv_bias_relu({h.handle, p.d, p.bias, relu_, p.algo, ws.raw(), p.workspace, in, w.raw(),
                                   b->raw(), z ? z->raw() : nullptr, y.raw()},
                                  p.fused))
        return;
      check_cudnn(
          cudnnConvolutionForward(h.handle, &one, p.d.x.d, in, p.d.w.d, w.raw(), p.d.conv.d, algo,
                                  p.workspace ? ws.raw() : nullptr, p.workspace, &zero, p.d.y.d, y.raw()),
          "cudnnConvolutionForward");
      epilogue(ctx, p, y, b, z);
      return;
    }
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), p.out_shape);
    if (y.numel() == 0) return;
    void* out = y.raw();
    if (p.reshape) {  // pads that are not symmetric: the unpadded output, cropped below
      work = ctx.scratch_uninitialized(x.dtype(), p.work_shape);
      out = work.raw();
    }
    auto algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(p.algo);
    check_cudnn(
        cudnnConvolutionBackwardData(h.handle, &one, p.d.w.d, w.raw(), p.d.x.d, x.raw(), p.d.conv.d, algo,
                                     p.workspace ? ws.raw() : nullptr, p.workspace, &zero, p.d.y.d, out),
        "cudnnConvolutionBackwardData");
    if (p.reshape) {
      launch_shifted_copy(t, work.raw(), y.raw(), p.copy, s);
      check_launch(ctx);
    }
    epilogue(ctx, p, y, b, z);
  }

 private:
  // Bias, Z and the activation in place on the node's output, in one kernel.
  void epilogue(rt::KernelContext& ctx, const Plan& p, rt::Tensor& y, const rt::Tensor* b,
                const rt::Tensor* z) const {
    if (!b && !z && act_.act == ConvAct::kNone) return;
    Epilogue e = act_;
    e.channels = p.out_shape[1];
    e.inner = 1;
    for (size_t d = 2; d < p.out_shape.size(); ++d) e.inner *= p.out_shape[d];
    launch_epilogue(*elem_type(y.dtype()), y.raw(), b ? b->raw() : nullptr, z ? z->raw() : nullptr, y.numel(),
                    e, native(ctx.stream()));
    check_launch(ctx);
  }

  Plan& plan(cudnnHandle_t h, ShapeOf x, ShapeOf w, rt::DataType dt, bool benchmark) const {
    const rt::Shape key = conv_plan_key(x.shape(), w.shape(), dt);
    auto it = plans_.find(key);
    if (it != plans_.end()) return *it->second;
    auto p = std::make_unique<Plan>();
    Geometry g = transpose_ ? transpose_geometry(*p, x, w) : conv_geometry(*p, x, w);
    pad_to_2d(g);
    for (const auto* dims : {&g.x_dims, &g.w_dims, &g.y_dims})
      p->empty |= std::find(dims->begin(), dims->end(), 0) != dims->end();
    if (p->empty) return *plans_.emplace(key, std::move(p)).first->second;
    set_descriptors(*p, g, dt, group_);
    std::string k = fmt::format("{}{}|{}{}|x{}|w{}|y{}|p{}|s{}|d{}|g{}", algo_key_prefix(),
                                transpose_ ? "bwd-data" : "fwd", ir::dtype_name(dt), tf32_ ? "-tf32" : "",
                                g.x_dims, g.w_dims, g.y_dims, g.pads, g.strides, g.dilations, group_);
    AlgoPick pick = choose_algo(h, p->d, !transpose_, dt, tf32_, k, benchmark);
    p->algo = pick.algo;
    p->workspace = pick.workspace;
    p->path = fmt::format("cuDNN {} algo {}{}", transpose_ ? "backward-data" : "forward", p->algo,
                          p->reshape ? (transpose_ ? " + crop" : " + pad") : "");
    return *plans_.emplace(key, std::move(p)).first->second;
  }

  Geometry conv_geometry(Plan& p, ShapeOf x, ShapeOf w) const {
    if (x.dim(1) != w.dim(1) * group_)
      throw rt::KernelError(fmt::format("input X has {} channels but W {} takes {} per group x {} groups",
                                        x.dim(1), rt::shape_str(w.shape()), w.dim(1), group_));
    if (w.dim(0) % group_ != 0)
      throw rt::KernelError(fmt::format("group {} does not divide W's {} output channels", group_, w.dim(0)));
    const size_t sp = static_cast<size_t>(x.rank() - 2);
    std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
    std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    ops::kernels::WindowGeom wg = ops::kernels::resolve_window(attrs_, in, kernel);
    Geometry g;
    g.x_dims = x.shape();
    g.w_dims = w.shape();
    g.strides = wg.strides;
    g.dilations = wg.dilations;
    g.pads.assign(wg.pads.begin(), wg.pads.begin() + static_cast<long>(sp));
    p.out_shape = {x.dim(0), w.dim(0)};
    p.out_shape.insert(p.out_shape.end(), wg.out.begin(), wg.out.end());
    for (size_t d = 0; d < sp; ++d) p.reshape |= wg.pads[d] != wg.pads[d + sp];
    if (p.reshape) {
      p.work_shape = x.shape();
      p.copy.rank = static_cast<int>(x.rank());
      for (size_t d = 0; d < x.shape().size(); ++d) p.copy.x_dims[d] = x.dim(static_cast<int64_t>(d));
      for (size_t d = 0; d < sp; ++d) {
        p.work_shape[d + 2] += wg.pads[d] + wg.pads[d + sp];
        p.copy.shift[d + 2] = -wg.pads[d];
        g.pads[d] = 0;
      }
      for (size_t d = 0; d < p.work_shape.size(); ++d) p.copy.y_dims[d] = p.work_shape[d];
      g.x_dims = p.work_shape;
    }
    g.y_dims = p.out_shape;
    return g;
  }

  // ConvTranspose's sizes and pads as the reference kernel (ops/nn/conv_transpose_kernel.cpp) and the
  // ONNX specification have them.
  Geometry transpose_geometry(Plan& p, ShapeOf x, ShapeOf w) const {
    const int64_t c = x.dim(1);
    if (w.dim(0) != c)
      throw rt::KernelError(
          fmt::format("input W is for {} input channels (its first axis) but X has {}", w.dim(0), c));
    if (c % group_ != 0)
      throw rt::KernelError(fmt::format("group {} does not divide X's {} channels", group_, c));
    const size_t sp = static_cast<size_t>(x.rank() - 2);
    std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
    std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    ops::kernels::WindowAttrs plain = attrs_;
    plain.auto_pad = "VALID";
    plain.pads.clear();
    plain.ceil_mode = false;
    std::vector<int64_t> big(sp, int64_t{1} << 30);
    ops::kernels::WindowGeom wg = ops::kernels::resolve_window(plain, big, kernel);
    std::vector<int64_t> op = output_padding_.empty() ? std::vector<int64_t>(sp, 0) : output_padding_;
    if (op.size() != sp)
      throw rt::KernelError(fmt::format("output_padding {} must have {} entries", output_padding_, sp));
    std::vector<int64_t> pads(2 * sp, 0);
    if (attrs_.auto_pad == "NOTSET" && !attrs_.pads.empty()) {
      if (attrs_.pads.size() != 2 * sp)
        throw rt::KernelError(fmt::format("pads {} must have {} entries", attrs_.pads, 2 * sp));
      pads = attrs_.pads;
    }
    if (!output_shape_.empty() && output_shape_.size() != sp && output_shape_.size() != sp + 2)
      throw rt::KernelError(fmt::format("output_shape {} must have {} entries", output_shape_, sp));
    const bool same = attrs_.auto_pad == "SAME_UPPER" || attrs_.auto_pad == "SAME_LOWER";
    const int64_t m = w.dim(1) * group_;
    p.out_shape = {x.dim(0), m};
    rt::Shape full = {x.dim(0), m};  // the output without pads or output_padding
    for (size_t i = 0; i < sp; ++i) {
      const int64_t eff = wg.dilations[i] * (wg.kernel[i] - 1) + 1;
      const int64_t natural = wg.strides[i] * (in[i] - 1) + eff;
      int64_t target = 0;
      if (!output_shape_.empty() || same) {
        target =
            !output_shape_.empty() ? output_shape_[output_shape_.size() - sp + i] : in[i] * wg.strides[i];
        const int64_t total = natural + op[i] - target;
        const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
        pads[i] = attrs_.auto_pad == "SAME_UPPER" ? half : total - half;
        pads[i + sp] = total - pads[i];
      } else {
        target = natural + op[i] - pads[i] - pads[i + sp];
      }
      if (target <= 0 || op[i] < 0)
        throw rt::KernelError(
            fmt::format("the output would have size {} along spatial axis {} (pads {}, output_padding {})",
                        target, i, pads, op));
      p.out_shape.push_back(target);
      full.push_back(natural);
      p.reshape |= pads[i] != pads[i + sp] || pads[i] < 0 || op[i] != 0;
    }
    Geometry g;
    g.x_dims = x.shape();
    g.w_dims = w.shape();
    g.strides = wg.strides;
    g.dilations = wg.dilations;
    if (p.reshape) {
      g.pads.assign(sp, 0);
      g.y_dims = full;
      p.work_shape = full;
      p.copy.rank = static_cast<int>(full.size());
      for (size_t d = 0; d < full.size(); ++d) {
        p.copy.x_dims[d] = full[d];
        p.copy.y_dims[d] = p.out_shape[d];
        p.copy.shift[d] = d < 2 ? 0 : pads[d - 2];
      }
    } else {
      g.pads.assign(pads.begin(), pads.begin() + static_cast<long>(sp));
      g.y_dims = p.out_shape;
    }
    return g;
  }

  bool transpose_;
  bool tf32_;  // float32 may use TF32 tensor cores (the session's precision is kTf32)
  ops::kernels::WindowAttrs attrs_;
  int64_t group_;
  std::vector<int64_t> output_padding_, output_shape_;
  Epilogue act_;  // the activation; channels and inner are set per plan
  std::optional<rt::Shape> static_x_, static_w_;
  rt::DataType static_type_;
  ActDesc relu_;
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, std::unique_ptr<Plan>> plans_;
};

// X, W and optionally B (and FusedConv's Z) of one float type, 1 to 3 spatial axes where the rank is known.
bool conv_supports(const rt::KernelInfo& info, size_t max_inputs) {
  if (!conv_inputs_supported(info, max_inputs)) return false;
  const auto& shape = info.input_type(0).shape;
  return !shape || (shape->size() >= 3 && shape->size() <= 5);
}

}  // namespace

void register_conv_kernels(KernelTable& t) {
  const bool tf32 = t.precision == passes::Precision::kTf32;
  t.add(cuda_def(
      "Conv", [](const rt::KernelInfo& i) { return conv_supports(i, 3); },
      [tf32](const rt::KernelInfo& i) -> rt::KernelPtr {
        return std::make_unique<ConvKernel>(i, false, tf32);
      }));
  t.add(cuda_def(
      "ConvTranspose", [](const rt::KernelInfo& i) { return conv_supports(i, 3); },
      [tf32](const rt::KernelInfo& i) -> rt::KernelPtr {
        return std::make_unique<ConvKernel>(i, true, tf32);
      }));
  t.add(cuda_def(
            "FusedConv", [](const rt::KernelInfo& i) { return conv_supports(i, 4) && known_activation(i); },
            [tf32](const rt::KernelInfo& i) -> rt::KernelPtr {
              return std::make_unique<ConvKernel>(i, false, tf32);
            })
            .in_domain("com.microsoft"));
  register_nhwc_conv_kernels(t);
  register_patch_conv_kernels(t);  // above cuDNN for kernel == stride (ViT patch embedding)
  register_pool_kernels(t);
}

}  // namespace tessera::cuda
