// The blocked-layout ops (ops/layout/blocked.h) on oneDNN: a blocked tensor [N, Cb, H, W, b] is exactly
// oneDNN's nChw{b}c memory of an [N, C, H, W] tensor, so the convolutions and pools read and write it
// directly, with no reorder around them; ReorderToBlocked / ReorderFromBlocked are oneDNN reorders.
// Weights stay plain OIHW in the graph and are reordered once into the primitive's layout.
#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <span>

#include "backends/cpu/conv_activation.h"
#include "backends/cpu/depthwise_conv.h"
#include "backends/cpu/dnnl_common.h"
#include "backends/cpu/dnnl_conv_util.h"
#include "backends/cpu/pointwise_conv.h"
#include "ops/layout/blocked.h"
#include "runtime/thread_pool.h"

namespace tessera::cpu {
namespace {

using dnnl::memory;
using Dims = memory::dims;
using tessera::ops::layout::channel_blocks;

std::optional<memory::format_tag> blocked_tag(int64_t block) {
  switch (block) {
    case 4:
      return memory::format_tag::nChw4c;
    case 8:
      return memory::format_tag::nChw8c;
    case 16:
      return memory::format_tag::nChw16c;
    default:
      return std::nullopt;
  }
}

// The [N, C, H, W] oneDNN view of a blocked tensor holding `channels` channels.
std::optional<memory::desc> blocked_desc(const rt::Shape& s, int64_t channels) {
  if (s.size() != 5 || channels > s[1] * s[4] || channels <= (s[1] - 1) * s[4]) return std::nullopt;
  auto tag = blocked_tag(s[4]);
  if (!tag) return std::nullopt;
  return memory::desc({s[0], channels, s[2], s[3]}, memory::data_type::f32, *tag);
}

// Reorder primitives by input shape: creating one costs more than running it on a small tensor.
class ReorderCache {
 public:
  void run(const rt::Shape& key, const memory::desc& from, const void* src, const memory::desc& to,
           void* dst) const {
    dnnl::engine& eng = dnnl_engine();
    dnnl::reorder prim;
    {
      std::lock_guard lock(mu_);
      auto it = cache_.find(key);
      if (it == cache_.end())
        it = cache_.emplace(key, dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to))).first;
      prim = it->second;
    }
    dnnl::stream strm(eng);
    memory a(from, eng, const_cast<void*>(src)), b(to, eng, dst);
    prim.execute(strm, a, b);
    strm.wait();
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, dnnl::reorder> cache_;
};

class DnnlToBlocked : public rt::OpKernel {
 public:
  explicit DnnlToBlocked(const rt::KernelInfo& info)
      : reference_(make_reference_kernel(info)), block_(info.get_int("block")) {}

  // A float NCHW input and a block oneDNN has a layout for.
  static bool supports(const rt::KernelInfo& info) {
    return inputs_float(info, {0}) && inferred_rank(info, 0) == 4 && blocked_tag(info.get_int("block", 0));
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    auto tag = blocked_tag(block_);
    if (x.rank() != 4 || !tag) return reference_->compute(ctx);
    set_dnnl_threads(ctx);
    rt::Tensor& y = ctx.output_uninitialized(
        0, x.dtype(), {x.dim(0), channel_blocks(x.dim(1), block_), x.dim(2), x.dim(3), block_});
    memory::desc plain(to_dims(x.shape()), memory::data_type::f32, memory::format_tag::nchw);
    reorders_.run(x.shape(), plain, x.raw(), memory::desc(to_dims(x.shape()), memory::data_type::f32, *tag),
                  y.raw());
  }

 private:
  rt::KernelPtr reference_;
  int64_t block_;
  ReorderCache reorders_;
};

class DnnlFromBlocked : public rt::OpKernel {
 public:
  explicit DnnlFromBlocked(const rt::KernelInfo& info)
      : reference_(make_reference_kernel(info)), channels_(info.get_int("channels")) {}

  // A float blocked input.
  static bool supports(const rt::KernelInfo& info) {
    return inputs_float(info, {0}) && inferred_rank(info, 0) == 5;
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    auto from = blocked_desc(x.shape(), channels_);
    if (!from) return reference_->compute(ctx);  // channels that do not fit the blocks: its message
    set_dnnl_threads(ctx);
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), {x.dim(0), channels_, x.dim(2), x.dim(3)});
    if (x.dim(2) * x.dim(3) == 1) {
      // A pooled classifier head: each image's blocks are its channels in order, then the padding.
      const auto* src = x.data<float>();
      float* dst = y.data<float>();
      const int64_t row = x.dim(1) * x.dim(4);
      for (int64_t n = 0; n < x.dim(0); ++n)
        std::memcpy(dst + n * channels_, src + n * row, static_cast<size_t>(channels_) * sizeof(float));
      return;
    }
    reorders_.run(x.shape(), *from, x.raw(),
                  memory::desc(to_dims(y.shape()), memory::data_type::f32, memory::format_tag::nchw),
                  y.raw());
  }

 private:
  rt::KernelPtr reference_;
  int64_t channels_;
  ReorderCache reorders_;
};

// Copies `from` into `to` (same size) in 64 KiB chunks across the pool.
void parallel_copy(rt::KernelContext& ctx, const rt::Tensor& from, rt::Tensor& to) {
  const auto* src = static_cast<const std::byte*>(from.raw());
  auto* dst = static_cast<std::byte*>(to.raw());
  const int64_t bytes = static_cast<int64_t>(to.nbytes()), chunk = 64 * 1024;
  ctx.threads().parallel_for((bytes + chunk - 1) / chunk, 1, [&](int64_t b, int64_t e) {
    std::memcpy(dst + b * chunk, src + b * chunk,
                static_cast<size_t>(std::min(e * chunk, bytes) - b * chunk));
  });
}

class DnnlBlockedConv : public rt::OpKernel {
 public:
  explicit DnnlBlockedConv(const rt::KernelInfo& info)
      : reference_(make_reference_kernel(info)),
        window_(WindowAttrs::read(info)),
        group_(info.get_int("group", 1)),
        block_(info.get_int("block")),
        act_(info) {
    own_epilogue_ = own_activation(act_);
    if (const auto& t = info.input_type(0); t.shape) x_type_shape_ = *t.shape;
    has_bias_ = info.has_input(2);
    has_z_ = info.has_input(3);
  }

  // Float input (blocked, or plain NCHW for a first convolution) and float OIHW weights as inference
  // found them, a block oneDNN knows and a known activation.
  static bool supports(const rt::KernelInfo& info) {
    for (size_t i = 0; i < 4; ++i)
      if ((i < 2 || info.has_input(i)) && info.input_dtype(i) != ir::DataType::kFloat) return false;
    const auto& xs = info.input_type(0).shape;
    const auto& ws = info.input_type(1).shape;
    if (!xs || !ws || (xs->size() != 4 && xs->size() != 5) || ws->size() != 4) return false;
    return info.get_int("group", 1) >= 1 && blocked_tag(info.get_int("block", 0)) &&
           ConvActivation(info).supported();
  }

  // Constant weights: FiniteSums' bounds, and when the input's shape is known (but for its batch) the
  // weights in oneDNN's layout for it, the original released. The own kernels (8 threads or more) pack
  // theirs from that copy on their first run.
  void prepare(rt::PrepareContext& ctx) override {
    const rt::Tensor* w = ctx.constant(1);
    if (!w || w->dtype() != ir::DataType::kFloat || w->numel() == 0 || w->rank() != 4) return;
    std::lock_guard lock(mu_);
    sums_ = FiniteSums(w->data<float>(), w->dim(0), w->numel() / w->dim(0));
    auto xs = static_input_shape();
    if (!xs) return;
    Entry* e = entry(*xs, w->shape(), has_bias_, has_z_, act_.fuse(true), false);
    // Winograd's weights format can be reordered into but not out of: a run whose primitive wants
    // another form of it (other threads, other shapes) would need the original, which is kept.
    const bool reorderable = e && e->pd.weights_desc().data.format_kind == dnnl_blocked;
    if (!reorderable) {
      cache_.clear();
      return;
    }
    prepared_.prepare(*w, e->wts_plain, e->pd.weights_desc());
    w_shape_ = w->shape();
    // oneDNN makes a primitive for the OpenMP threads of the moment, unknown here (the session's pool
    // sets them per run): the runs make their own.
    cache_.clear();
    ctx.release(1);
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    std::lock_guard lock(mu_);
    const rt::Tensor* w = prepared_ ? nullptr : &ctx.input(1);
    const rt::Shape& ws = w ? w->shape() : w_shape_;
    if (pointwise_fits(ctx, x, ws)) return run_pointwise(ctx, x, w);
    if (auto g = depthwise_fits(ctx, x, ws)) return run_depthwise(ctx, x, w, *g);
    // Relu, Clip and HardSigmoid fuse when the sums are finite (checked, reading the input if it must);
    // the other activations need no check, but what is known of the input still bounds the output.
    const std::optional<double> bound =
        act_.needs_finite_sums() ? sums_bound(ctx, x, w) : remembered_bound(ctx, x);
    const bool fused = act_.fuse(!act_.needs_finite_sums() || bound.has_value());
    Entry* e = entry(x.shape(), ws, ctx.has_input(2), ctx.has_input(3), fused);
    if (!e) return reference(ctx, x);
    ctx.set_path(e->pd.impl_info_str());
    set_dnnl_threads(ctx);
    rt::Tensor& y = run(ctx, *e, x, w);
    if (!fused) {
      act_.apply(ctx.threads(), y.data<float>(), y.numel());
      if (!act_.keeps_zero()) clear_blocked_padding(y.data<float>(), y.shape(), ws[0]);
    }
    if (bound) remember_output(y, *bound);
  }

  size_t prepared_bytes() const override {
    std::lock_guard lock(mu_);
    const size_t own =
        pointwise_.packed.size() + pointwise_.bias.size() + depthwise_.packed.size() + depthwise_.bias.size();
    return reordered_bytes(cache_) + prepared_.bytes() + own * sizeof(float);
  }

 private:
  struct Entry {
    dnnl::convolution_forward prim;
    dnnl::convolution_forward::primitive_desc pd;
    memory::desc wts_plain;
    ReorderedWeights weights;
    rt::Shape out_shape;  // blocked
  };

  // The activation as the own kernels' clip (Relu, Clip, or none); nullopt for the others, which the
  // oneDNN path applies.
  static std::optional<PointwiseEpilogue> own_activation(const ConvActivation& act) {
    PointwiseEpilogue ep;
    if (act.none()) return ep;
    if (!act.is_clip(ep.lo, ep.hi)) return std::nullopt;
    ep.clip = true;
    return ep;
  }

  // The input's inferred shape with a symbolic batch taken as 1; nullopt when another dimension is not
  // known.
  std::optional<rt::Shape> static_input_shape() const {
    if (x_type_shape_.size() != 4 && x_type_shape_.size() != 5) return std::nullopt;
    rt::Shape s;
    for (size_t i = 0; i < x_type_shape_.size(); ++i) {
      if (x_type_shape_[i].is_static()) {
        s.push_back(x_type_shape_[i].value);
      } else if (i == 0) {
        s.push_back(1);
      } else {
        return std::nullopt;
      }
    }
    return s;
  }

  // A bound of this run's convolution sums' magnitudes (bias and Z included) when they are all finite
  // (ConvActivation::fuse), reading X and Z where nothing is known of them.
  std::optional<double> sums_bound(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Tensor* w) const {
    return conv_sums_bound(sums_, ctx.threads(), x, w, ctx.optional_input(2), ctx.optional_input(3));
  }

  // The same bound from what is remembered of X and Z, reading neither (nullopt when not known).
  std::optional<double> remembered_bound(rt::KernelContext& ctx, const rt::Tensor& x) const {
    return conv_remembered_bound(sums_, x, ctx.optional_input(2), ctx.optional_input(3));
  }

  // What the output is known to hold after the activation, for the next convolution's check.
  void remember_output(const rt::Tensor& y, double sums) const {
    if (const std::optional<double> out = act_.output_bound(sums)) remember_bound(y, *out);
  }

  // The plain OIHW weights, for the own kernels to pack: the input, or the prepared copy reordered back.
  std::vector<float> plain_weights(const rt::Tensor* w) const {
    if (w) return std::vector<float>(w->data<float>(), w->data<float>() + w->numel());
    dnnl::stream strm(dnnl_engine());
    return prepared_.plain(strm);
  }

  // Tessera's own kernels (pointwise_conv.h, depthwise_conv.h) take 1x1 convolutions with stride 1 and
  // depthwise ones over a 16-blocked X with 8 threads or more. Measured on the GPU test machine's Xeon
  // (2026-11-21, docs/benchmarks-cpu.md): at 16 threads the 1x1 kernel saved 0.9 ms of ResNet-50's 9.2
  // (its dynamic split beats oneDNN's static one); at 2 threads oneDNN's was as fast on ResNet-50 and
  // 15% faster on MobileNetV2. TESSERA_OWN_CONV=on or =off forces the choice for both kernels (to
  // compare), TESSERA_OWN_DEPTHWISE for the depthwise one alone.
  bool own_kernel_wanted(rt::KernelContext& ctx, const rt::Tensor& x, bool depthwise = false) const {
    static const std::optional<bool> all = env_switch("TESSERA_OWN_CONV");
    static const std::optional<bool> dw = env_switch("TESSERA_OWN_DEPTHWISE");
    const bool wanted = (depthwise && dw ? *dw : all.value_or(ctx.threads().size() >= 8));
    return wanted && own_epilogue_ && pointwise_supported() && block_ == 16 && x.rank() == 5 &&
           x.dim(4) == 16;
  }

  static bool all_equal(const memory::dims& d, int64_t v) {
    return std::all_of(d.begin(), d.end(), [v](auto e) { return e == v; });
  }

  bool pointwise_fits(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Shape& w) const {
    if (!own_kernel_wanted(ctx, x) || group_ != 1 || w[2] != 1 || w[3] != 1) return false;
    if (x.dim(1) != channel_blocks(w[1], 16)) return false;
    auto g = window_geometry(window_, {x.dim(2), x.dim(3)}, {1, 1});
    return g && g->out[0] == x.dim(2) && g->out[1] == x.dim(3) && all_equal(g->pad_l, 0) &&
           all_equal(g->pad_r, 0) && all_equal(g->strides, 1);
  }

  // One group per channel, weights [C, 1, KH, KW], no dilation.
  std::optional<WindowGeometry> depthwise_fits(rt::KernelContext& ctx, const rt::Tensor& x,
                                               const rt::Shape& w) const {
    if (!own_kernel_wanted(ctx, x, true) || group_ < 2 || w[0] != group_ || w[1] != 1) return std::nullopt;
    if (x.dim(1) != channel_blocks(group_, 16)) return std::nullopt;
    auto g = window_geometry(window_, {x.dim(2), x.dim(3)}, {w[2], w[3]});
    if (!g || !all_equal(g->dilates, 0) || g->out[0] < 1 || g->out[1] < 1) return std::nullopt;
    return g;
  }

  // The output of an own kernel, `ep.z` set from Z: a dying Z is the output itself, overwritten in place
  // (each pixel's Z is read where its output is written).
  rt::Tensor& own_output(rt::KernelContext& ctx, const rt::Shape& out_shape, PointwiseEpilogue& ep) const {
    if (const rt::Tensor* z = ctx.optional_input(3)) {
      if (z->dtype() != ir::DataType::kFloat || z->shape() != out_shape)
        ctx.fail(fmt::format("Z {} must have the output's blocked shape {}", rt::Value(*z).describe(),
                             rt::shape_str(out_shape)));
      ep.z = z->data<float>();
      if (rt::Tensor* y = ctx.output_reusing(0, 3, ir::DataType::kFloat, out_shape)) {
        KnownMagnitudes::instance().forget(*y);  // Z's storage now gets the output
        return *y;
      }
    }
    return ctx.output_uninitialized(0, ir::DataType::kFloat, out_shape);
  }

  const rt::Tensor* checked_bias(rt::KernelContext& ctx, const rt::Shape& w) const {
    const rt::Tensor* bias = ctx.optional_input(2);
    if (bias && (bias->dtype() != ir::DataType::kFloat || bias->numel() != w[0]))
      ctx.fail(fmt::format("bias must be float[{}], got {}", w[0], rt::Value(*bias).describe()));
    return bias;
  }

  // Whether the packed weights were made from `w` (null: the prepared weights) and `bias` (held
  // tensors: same storage, same values).
  bool packed_from(const rt::Tensor* w, const rt::Tensor* bias) const {
    const bool same_w = w ? packed_src_.storage() == w->storage() : packed_prepared_;
    return same_w && (!bias || packed_bias_src_.storage() == bias->storage());
  }
  void remember_packed(const rt::Tensor* w, const rt::Tensor* bias) const {
    packed_src_ = w ? *w : rt::Tensor();
    packed_prepared_ = !w;
    packed_bias_src_ = bias ? *bias : rt::Tensor();
  }

  void run_pointwise(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Tensor* w) const {
    ctx.set_path("own pointwise");
    const rt::Shape& ws = w ? w->shape() : w_shape_;
    const rt::Tensor* bias = checked_bias(ctx, ws);
    if (!packed_from(w, bias)) {
      pointwise_ =
          pack_pointwise(plain_weights(w).data(), bias ? bias->data<float>() : nullptr, ws[0], ws[1]);
      remember_packed(w, bias);
    }
    rt::Shape out_shape = x.shape();
    out_shape[1] = pointwise_.out_blocks;
    PointwiseEpilogue ep = *own_epilogue_;
    // The own kernels' clip keeps NaN: no check, but a bound for the next convolution when X and Z are
    // known (before Z's storage becomes the output).
    const std::optional<double> bound = remembered_bound(ctx, x);
    rt::Tensor& y = own_output(ctx, out_shape, ep);
    pointwise_conv(ctx.threads(), x.data<float>(), x.dim(0), x.dim(2) * x.dim(3), pointwise_, ep,
                   y.data<float>());
    if (bound) remember_output(y, *bound);
  }

  void run_depthwise(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Tensor* w,
                     const WindowGeometry& g) const {
    ctx.set_path("own depthwise");
    const rt::Shape& ws = w ? w->shape() : w_shape_;
    const rt::Tensor* bias = checked_bias(ctx, ws);
    if (!packed_from(w, bias)) {
      depthwise_ =
          pack_depthwise(plain_weights(w).data(), bias ? bias->data<float>() : nullptr, ws[0], ws[2], ws[3]);
      remember_packed(w, bias);
    }
    DepthwiseGeometry dg{x.dim(2),     x.dim(3),     g.out[0],   g.out[1],
                         g.strides[0], g.strides[1], g.pad_l[0], g.pad_l[1]};
    rt::Shape out_shape = {x.dim(0), x.dim(1), dg.oh, dg.ow, 16};
    PointwiseEpilogue ep = *own_epilogue_;
    const std::optional<double> bound = remembered_bound(ctx, x);
    rt::Tensor& y = own_output(ctx, out_shape, ep);
    depthwise_conv(ctx.threads(), x.data<float>(), x.dim(0), dg, depthwise_, ep, y.data<float>());
    if (bound) remember_output(y, *bound);
  }

  // The reference kernel, for shapes oneDNN does not take; it needs the original weights, gone when
  // they were prepared: then the message says what does not fit.
  void reference(rt::KernelContext& ctx, const rt::Tensor& x) const {
    if (prepared_)
      ctx.fail(fmt::format("input {} does not fit the convolution's weights {} (laid out at session build)",
                           rt::Value(x).describe(), rt::shape_str(w_shape_)));
    if (!reference_) ctx.fail("no reference BlockedConv kernel");
    reference_->compute(ctx);
  }

  // The source as oneDNN sees it: blocked, or plain NCHW for a first convolution.
  std::optional<memory::desc> src_desc(const rt::Shape& x, int64_t channels) const {
    if (x.size() == 5) return x[4] == block_ ? blocked_desc(x, channels) : std::nullopt;
    if (x.size() != 4 || x[1] != channels) return std::nullopt;
    return memory::desc(to_dims(x), memory::data_type::f32, memory::format_tag::nchw);
  }

  // Winograd's F(2x2 | 4x4, 3x3) for 3x3 stride-1 convolutions over 16-channel multiples with outputs of
  // 14x14 or more: on two of the GPU test machine's Xeon cores it ran ResNet-50's stages 1-3 in 0.50-0.59
  // ms per convolution against 0.85-0.92 direct (2026-11-21, bench/ab_switch.sh); the 7x7 ones of stage 4
  // gained nothing. Its rounding differs from a direct sum's by ~1e-5 relative (ResNet-50 still matches
  // PyTorch to 2.5e-5). oneDNN falls back to the direct algorithm where it has no Winograd kernel.
  // TESSERA_WINOGRAD=off turns it off.
  bool winograd_wanted(const rt::Shape& w, const WindowGeometry& g, int64_t cin, int64_t cout) const {
    static const bool on = env_switch("TESSERA_WINOGRAD").value_or(true);
    return on && group_ == 1 && w[2] == 3 && w[3] == 3 && all_equal(g.strides, 1) &&
           all_equal(g.dilates, 0) && cin % 16 == 0 && cout % 16 == 0 && g.out[0] >= 14 && g.out[1] >= 14;
  }

  // The cached primitive for these shapes, made when missing; `with_primitive` false (session build)
  // makes the primitive descriptor only, whose weights layout is all prepare() needs.
  Entry* entry(const rt::Shape& x, const rt::Shape& w, bool has_bias, bool has_z, bool fused,
               bool with_primitive = true) const {
    rt::Shape key = x;
    key.insert(key.end(), w.begin(), w.end());
    key.push_back(has_bias);
    key.push_back(has_z);
    key.push_back(fused);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      if (with_primitive && !it->second.prim) it->second.prim = make_conv_primitive(it->second.pd);
      return &it->second;
    }
    if (w.size() != 4 || x.size() < 4) return nullptr;
    int64_t cin = w[1] * group_, cout = w[0];
    if (cout % group_ != 0) return nullptr;
    auto src = src_desc(x, cin);
    if (!src) return nullptr;
    int64_t h = x[2], wd = x[3];
    auto g = window_geometry(window_, {h, wd}, {w[2], w[3]});
    if (!g) return nullptr;
    memory::desc dst({x[0], cout, g->out[0], g->out[1]}, memory::data_type::f32, *blocked_tag(block_));
    Dims wdims = to_dims(w);
    if (group_ > 1) {
      wdims[0] /= group_;
      wdims.insert(wdims.begin(), group_);
    }
    memory::desc wts_any(wdims, memory::data_type::f32, memory::format_tag::any);
    memory::desc bias_md({cout}, memory::data_type::f32, memory::format_tag::a);
    // Z is copied into the output first and added by a sum post-op, before the activation.
    dnnl::post_ops ops;
    if (has_z) ops.append_sum(1.f);
    const dnnl::post_ops activation = act_.post_ops(fused);
    for (int i = 0; i < activation.len(); ++i) {
      float scale, alpha, beta;
      dnnl::algorithm alg;
      activation.get_params_eltwise(i, scale, alg, alpha, beta);
      ops.append_eltwise(scale, alg, alpha, beta);
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    using CF = dnnl::convolution_forward;
    std::vector<dnnl::algorithm> algorithms = {dnnl::algorithm::convolution_direct};
    if (winograd_wanted(w, *g, cin, cout))
      algorithms.insert(algorithms.begin(), dnnl::algorithm::convolution_winograd);
    for (dnnl::algorithm alg : algorithms) {
      try {
        auto desc = has_bias ? CF::desc(dnnl::prop_kind::forward_inference, alg, *src, wts_any, bias_md, dst,
                                        g->strides, g->dilates, g->pad_l, g->pad_r)
                             : CF::desc(dnnl::prop_kind::forward_inference, alg, *src, wts_any, dst,
                                        g->strides, g->dilates, g->pad_l, g->pad_r);
        Entry e;
        e.pd = CF::primitive_desc(desc, attr, dnnl_engine());
        if (with_primitive) e.prim = make_conv_primitive(e.pd);
        e.wts_plain = memory::desc(wdims, memory::data_type::f32, plain_tag(wdims.size()));
        e.out_shape = {x[0], channel_blocks(cout, block_), g->out[0], g->out[1], block_};
        return &cache_.emplace(key, std::move(e)).first->second;
      } catch (const dnnl::error&) {
        // No kernel for this configuration and algorithm: try the next, else the reference kernel.
      }
    }
    return nullptr;
  }

  rt::Tensor& run(rt::KernelContext& ctx, Entry& e, const rt::Tensor& x, const rt::Tensor* w) const {
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    const memory weights = w ? e.weights.get(*w, e.wts_plain, e.pd.weights_desc(), strm)
                             : prepared_.get(e.pd.weights_desc(), strm);
    const int64_t cout = e.pd.dst_desc().dims()[1];
    rt::Tensor* out = nullptr;
    if (const rt::Tensor* z = ctx.optional_input(3)) {
      if (z->dtype() != ir::DataType::kFloat || z->shape() != e.out_shape)
        ctx.fail(fmt::format("Z {} must have the output's blocked shape {}", rt::Value(*z).describe(),
                             rt::shape_str(e.out_shape)));
      // The sum post-op adds to what the output holds. A residual usually dies here: then the output
      // is Z itself, summed into in place; otherwise Z is copied in parallel (megabytes: one thread
      // copying cost as much as the convolution on 16).
      out = ctx.output_reusing(0, 3, ir::DataType::kFloat, e.out_shape);
      if (out) KnownMagnitudes::instance().forget(*out);  // Z's storage now gets the output
      if (!out) {
        out = &ctx.output_uninitialized(0, ir::DataType::kFloat, e.out_shape);
        parallel_copy(ctx, *z, *out);
      }
    } else {
      out = &ctx.output_uninitialized(0, ir::DataType::kFloat, e.out_shape);
    }
    rt::Tensor& y = *out;
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, memory(e.pd.src_desc(), eng, const_cast<void*>(x.raw()))},
        {DNNL_ARG_WEIGHTS, weights},
        {DNNL_ARG_DST, memory(e.pd.dst_desc(), eng, y.raw())}};
    if (ctx.has_input(2)) {
      const rt::Tensor& b = ctx.input(2);
      if (b.dtype() != ir::DataType::kFloat || b.numel() != cout)
        ctx.fail(fmt::format("bias must be float[{}], got {}", cout, rt::Value(b).describe()));
      args.emplace(DNNL_ARG_BIAS, memory(e.pd.bias_desc(), eng, const_cast<void*>(b.raw())));
    }
    e.prim.execute(strm, args);
    strm.wait();
    return y;
  }

  rt::KernelPtr reference_;
  WindowAttrs window_;
  int64_t group_, block_;
  ConvActivation act_;
  std::optional<PointwiseEpilogue> own_epilogue_;
  ir::Shape x_type_shape_;
  bool has_bias_ = false, has_z_ = false;
  FiniteSums sums_;                   // of constant weights
  mutable PreparedWeights prepared_;  // constant weights in oneDNN's layout (input 1 released)
  rt::Shape w_shape_;
  mutable bool packed_prepared_ = false;
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, Entry> cache_;
  mutable PointwiseWeights pointwise_;  // the own kernels' packed weights (one of the two is used)
  mutable DepthwiseWeights depthwise_;
  mutable rt::Tensor packed_src_, packed_bias_src_;  // held: the same storage means the same values
};

class DnnlBlockedPool : public rt::OpKernel {
 public:
  explicit DnnlBlockedPool(const rt::KernelInfo& info)
      : reference_(make_reference_kernel(info)), window_(WindowAttrs::read(info)) {
    if (info.op_type() == "BlockedMaxPool") {
      alg_ = dnnl::algorithm::pooling_max;
    } else {
      bool include = info.get_int("count_include_pad", 0) != 0;
      // ONNX counts the explicit pads but not the ceil-mode overhang in the divisor: oneDNN cannot say so.
      if (include && window_.ceil_mode) supported_ = false;
      alg_ = include ? dnnl::algorithm::pooling_avg_include_padding
                     : dnnl::algorithm::pooling_avg_exclude_padding;
    }
  }

  // A float blocked input; not AveragePool counting pads with ceil_mode.
  static bool supports(const rt::KernelInfo& info) {
    return inputs_float(info, {0}) && inferred_rank(info, 0) == 5 && DnnlBlockedPool(info).supported_;
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    if (x.rank() != 5) return reference_->compute(ctx);
    auto src = blocked_desc(x.shape(), x.dim(1) * x.dim(4));
    auto g = window_geometry(window_, {x.dim(2), x.dim(3)}, window_.kernel);
    if (!src || !g) return reference_->compute(ctx);
    if (is_subsampling(*g)) return subsample(ctx, x, *g);
    // oneDNN's max drops a NaN in the window: an input that may hold one goes to the reference kernel.
    if (alg_ == dnnl::algorithm::pooling_max && may_hold_nan(ctx.threads(), x))
      return reference_->compute(ctx);
    std::lock_guard lock(mu_);
    auto it = cache_.find(x.shape());
    if (it == cache_.end()) {
      memory::desc dst({x.dim(0), x.dim(1) * x.dim(4), g->out[0], g->out[1]}, memory::data_type::f32,
                       *blocked_tag(x.dim(4)));
      try {
        dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg_, *src, dst, g->strides,
                                         to_dims(window_.kernel), g->dilates, g->pad_l, g->pad_r);
        dnnl::pooling_v2_forward::primitive_desc pd(d, dnnl_engine());
        it = cache_.emplace(x.shape(), Entry{pd, dnnl::pooling_v2_forward(pd), g->out}).first;
      } catch (const dnnl::error&) {
        return reference_->compute(ctx);
      }
    }
    set_dnnl_threads(ctx);
    rt::Tensor& y = ctx.output_uninitialized(
        0, x.dtype(), {x.dim(0), x.dim(1), it->second.out[0], it->second.out[1], x.dim(4)});
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    it->second.prim.execute(
        strm, {{DNNL_ARG_SRC, memory(it->second.pd.src_desc(), eng, const_cast<void*>(x.raw()))},
               {DNNL_ARG_DST, memory(it->second.pd.dst_desc(), eng, y.raw())}});
    strm.wait();
    remember_pooled(x, y);
  }

 private:
  // A max or an average of X's values (padding counting as zeros) is no larger than X's largest
  // magnitude: what FiniteSums knows of X holds for the output, and the next convolution need not read
  // it.
  static void remember_pooled(const rt::Tensor& x, const rt::Tensor& y) {
    KnownMagnitudes& scanned = KnownMagnitudes::instance();
    if (auto known = scanned.find(x)) scanned.add(y, known->bits, false);
  }

  // A 1x1 window without padding picks every strides-th pixel (what the layout pass puts before a
  // strided 1x1 convolution): a copy of one block of channels per pixel, which oneDNN's pooling does
  // several times slower.
  bool is_subsampling(const WindowGeometry& g) const {
    auto zero = [](const memory::dims& d) {
      return std::all_of(d.begin(), d.end(), [](auto v) { return v == 0; });
    };
    return window_.kernel == std::vector<int64_t>{1, 1} && !window_.ceil_mode && zero(g.pad_l) &&
           zero(g.pad_r);
  }

  static void subsample(rt::KernelContext& ctx, const rt::Tensor& x, const WindowGeometry& g) {
    const int64_t h = x.dim(2), w = x.dim(3), b = x.dim(4), oh = g.out[0], ow = g.out[1];
    const int64_t sh = g.strides[0], sw = g.strides[1];
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), {x.dim(0), x.dim(1), oh, ow, b});
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    const size_t pixel = static_cast<size_t>(b) * sizeof(float);
    // One output row per item: n * blocks * oh of them.
    ctx.threads().parallel_for(x.dim(0) * x.dim(1) * oh, std::max<int64_t>(1, 1024 / (ow * b)),
                               [&](int64_t r0, int64_t r1) {
                                 for (int64_t r = r0; r < r1; ++r) {
                                   const int64_t plane = r / oh, i = r % oh;
                                   const float* in = src + ((plane * h + i * sh) * w) * b;
                                   float* out = dst + r * ow * b;
                                   for (int64_t j = 0; j < ow; ++j)
                                     std::memcpy(out + j * b, in + j * sw * b, pixel);
                                 }
                               });
    remember_pooled(x, y);
  }

  struct Entry {
    dnnl::pooling_v2_forward::primitive_desc pd;
    dnnl::pooling_v2_forward prim;
    std::vector<int64_t> out;
  };
  rt::KernelPtr reference_;
  WindowAttrs window_;
  dnnl::algorithm alg_;
  bool supported_ = true;
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, Entry> cache_;
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_blocked) {
  using namespace tessera::cpu;
  const char* d = tessera::ops::layout::kDomain;
  reg.add(dnnl_kernel<DnnlToBlocked>("ReorderToBlocked", d));
  reg.add(dnnl_kernel<DnnlFromBlocked>("ReorderFromBlocked", d));
  reg.add(dnnl_kernel<DnnlBlockedConv>("BlockedConv", d));
  reg.add(dnnl_kernel<DnnlBlockedPool>("BlockedMaxPool", d));
  reg.add(dnnl_kernel<DnnlBlockedPool>("BlockedAveragePool", d));
}
