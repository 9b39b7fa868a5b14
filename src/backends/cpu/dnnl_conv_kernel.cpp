// Conv on oneDNN for float32: the primitive picks its own blocked layouts for activations and weights;
// inputs and outputs stay plain NCHW between nodes, so the kernel reorders in and out around the
// primitive. Constant weights are reordered when the session is built and the original released (a
// weight held once); other weights once per weight tensor. The kernel declines (KernelDef::supports)
// other element types, ranks and FusedConv's Z; shapes oneDNN refuses go to the reference kernel.
// FusedConv's activation follows conv_activation.h (post-op where oneDNN's is right, else after).
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <mutex>
#include <optional>

#include "backends/cpu/conv_activation.h"
#include "backends/cpu/dnnl_common.h"
#include "backends/cpu/dnnl_conv_util.h"
#include "runtime/dispatch.h"
#include "runtime/thread_pool.h"

namespace tessera::cpu {
namespace {

using dnnl::memory;
using Dims = memory::dims;

class DnnlConv : public rt::OpKernel {
 public:
  explicit DnnlConv(const rt::KernelInfo& info)
      : reference_(make_reference_kernel(info)),
        window_(WindowAttrs::read(info)),
        group_(info.get_int("group", 1)),
        act_(info) {
    if (const auto& t = info.input_type(0); t.shape) x_type_shape_ = *t.shape;
    has_bias_input_ = info.has_input(2);
  }

  // Float input and weights of rank 3 to 5 as inference found them, a known activation, no Z.
  static bool supports(const rt::KernelInfo& info) {
    if (info.input_dtype(0) != ir::DataType::kFloat || info.input_dtype(1) != ir::DataType::kFloat)
      return false;
    if (info.has_input(2) && info.input_dtype(2) != ir::DataType::kFloat) return false;
    const auto& shape = info.input_type(0).shape;
    const auto& wshape = info.input_type(1).shape;
    if (!shape || !wshape || shape->size() < 3 || shape->size() > 5 || wshape->size() != shape->size())
      return false;
    if (info.get_int("group", 1) < 1 || info.has_input(3)) return false;
    return info.op_type() != "FusedConv" || ConvActivation(info).supported();
  }

  // Constant weights: the bounds of FiniteSums, and when the input's shape is known (but for its batch)
  // the weights in the primitive's layout, the original released.
  void prepare(rt::PrepareContext& ctx) override {
    const rt::Tensor* w = ctx.constant(1);
    if (!w || w->dtype() != ir::DataType::kFloat || w->numel() == 0) return;
    std::lock_guard lock(mu_);
    sums_ = FiniteSums(w->data<float>(), w->dim(0), w->numel() / w->dim(0));
    auto xs = static_input_shape(*w);
    if (!xs || !reference_ok(*xs, w->shape())) return;
    Entry* e = entry(*xs, w->shape(), has_bias_input_, act_.fuse(true), false);
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
    if (!reference_ok(x.shape(), ws)) return reference(ctx, x);
    // Relu, Clip and HardSigmoid fuse when the sums are finite (checked, reading the input only where
    // nothing is known of it); the other activations need no check, but what is known of the input
    // still bounds the output, for the next convolution.
    const rt::Tensor* bias = ctx.optional_input(2);
    const std::optional<double> bound = act_.needs_finite_sums()
                                            ? conv_sums_bound(sums_, ctx.threads(), x, w, bias, nullptr)
                                            : conv_remembered_bound(sums_, x, bias, nullptr);
    const bool fused = act_.fuse(!act_.needs_finite_sums() || bound.has_value());
    Entry* e = entry(x.shape(), ws, ctx.has_input(2), fused);
    if (!e) return reference(ctx, x);
    ctx.set_path(e->pd.impl_info_str());
    set_dnnl_threads(ctx);
    rt::Tensor& y = run(ctx, *e, x, w);
    if (!fused) act_.apply(ctx.threads(), y.data<float>(), y.numel());
    if (!bound) return;
    if (const std::optional<double> out = act_.output_bound(*bound)) remember_bound(y, *out);
  }

  size_t prepared_bytes() const override {
    std::lock_guard lock(mu_);
    return reordered_bytes(cache_) + prepared_.bytes();
  }

 private:
  struct Entry {
    dnnl::convolution_forward prim;
    dnnl::convolution_forward::primitive_desc pd;
    memory::desc src_plain, dst_plain, wts_plain;
    ReorderedWeights weights;  // in the primitive's layout, from a weight tensor that is not constant
    rt::Shape out_shape;
  };

  // The reference kernel, for shapes oneDNN does not take; it needs the original weights, gone when
  // they were prepared: then the message says what does not fit.
  void reference(rt::KernelContext& ctx, const rt::Tensor& x) const {
    if (prepared_)
      ctx.fail(fmt::format("input {} does not fit the convolution's weights {} (laid out at session build)",
                           rt::Value(x).describe(), rt::shape_str(w_shape_)));
    if (!reference_) ctx.fail("no reference Conv kernel");
    reference_->compute(ctx);
  }

  // Shapes oneDNN can take; mismatches are left to the reference kernel's messages.
  bool reference_ok(const rt::Shape& x, const rt::Shape& w) const {
    return x.size() == w.size() && x.size() >= 3 && x.size() <= 5 && x[1] == w[1] * group_ &&
           w[0] % group_ == 0;
  }

  // The input's inferred shape with a symbolic batch taken as 1; nullopt when another dimension is not
  // known.
  std::optional<rt::Shape> static_input_shape(const rt::Tensor& w) const {
    if (x_type_shape_.size() != static_cast<size_t>(w.rank())) return std::nullopt;
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

  // The cached primitive for these shapes, made when missing; `with_primitive` false (session build)
  // makes the primitive descriptor only, whose weights layout is all prepare() needs.
  Entry* entry(const rt::Shape& xs, const rt::Shape& ws, bool has_bias, bool fused,
               bool with_primitive = true) const {
    auto key = xs;
    key.insert(key.end(), ws.begin(), ws.end());
    key.push_back(has_bias);
    key.push_back(fused);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      if (with_primitive && !it->second.prim) it->second.prim = make_conv_primitive(it->second.pd);
      return &it->second;
    }
    std::vector<int64_t> in(xs.begin() + 2, xs.end());
    std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
    auto g = window_geometry(window_, in, kernel);
    if (!g) return nullptr;
    rt::Shape out_shape{xs[0], ws[0]};
    out_shape.insert(out_shape.end(), g->out.begin(), g->out.end());
    memory::desc src_any(to_dims(xs), memory::data_type::f32, memory::format_tag::any);
    memory::desc dst_any(to_dims(out_shape), memory::data_type::f32, memory::format_tag::any);
    Dims wd = to_dims(ws);
    if (group_ > 1) {
      wd[0] /= group_;
      wd.insert(wd.begin(), group_);
    }
    memory::desc wts_any(wd, memory::data_type::f32, memory::format_tag::any);
    memory::desc bias_md({ws[0]}, memory::data_type::f32, memory::format_tag::a);
    try {
      auto desc = has_bias
                      ? dnnl::convolution_forward::desc(
                            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any,
                            wts_any, bias_md, dst_any, g->strides, g->dilates, g->pad_l, g->pad_r)
                      : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::convolution_direct, src_any, wts_any,
                                                        dst_any, g->strides, g->dilates, g->pad_l, g->pad_r);
      Entry e;
      dnnl::primitive_attr attr;
      attr.set_post_ops(act_.post_ops(fused));
      e.pd = dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_engine());
      if (with_primitive) e.prim = make_conv_primitive(e.pd);
      e.src_plain = memory::desc(to_dims(xs), memory::data_type::f32, plain_tag(xs.size()));
      e.dst_plain = memory::desc(to_dims(out_shape), memory::data_type::f32, plain_tag(out_shape.size()));
      e.wts_plain = memory::desc(wd, memory::data_type::f32, plain_tag(wd.size()));
      e.out_shape = out_shape;
      return &cache_.emplace(key, std::move(e)).first->second;
    } catch (const dnnl::error&) {
      return nullptr;  // a configuration oneDNN does not implement: the reference kernel runs it
    }
  }

  rt::Tensor& run(rt::KernelContext& ctx, Entry& e, const rt::Tensor& x, const rt::Tensor* w) const {
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    const memory weights = w ? e.weights.get(*w, e.wts_plain, e.pd.weights_desc(), strm)
                             : prepared_.get(e.pd.weights_desc(), strm);
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, e.out_shape);
    memory src(e.src_plain, eng, const_cast<void*>(x.raw()));
    rt::Tensor src_buf, dst_buf;
    memory src_m = src;
    if (e.pd.src_desc() != e.src_plain) {
      src_buf =
          ctx.scratch_uninitialized(ir::DataType::kUint8, {static_cast<int64_t>(e.pd.src_desc().get_size())});
      src_m = memory(e.pd.src_desc(), eng, src_buf.raw());
      dnnl::reorder(src, src_m).execute(strm, src, src_m);
    }
    memory dst(e.dst_plain, eng, y.raw());
    memory dst_m = dst;
    if (e.pd.dst_desc() != e.dst_plain) {
      dst_buf =
          ctx.scratch_uninitialized(ir::DataType::kUint8, {static_cast<int64_t>(e.pd.dst_desc().get_size())});
      dst_m = memory(e.pd.dst_desc(), eng, dst_buf.raw());
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst_m}};
    if (ctx.has_input(2)) {
      const rt::Tensor& b = ctx.input(2);
      if (b.dtype() != ir::DataType::kFloat || b.numel() != e.out_shape[1])
        ctx.fail(fmt::format("bias must be float[{}], got {}", e.out_shape[1], rt::Value(b).describe()));
      args.emplace(DNNL_ARG_BIAS, memory(e.pd.bias_desc(), eng, const_cast<void*>(b.raw())));
    }
    e.prim.execute(strm, args);
    if (dst_m != dst) dnnl::reorder(dst_m, dst).execute(strm, dst_m, dst);
    strm.wait();
    return y;
  }

  rt::KernelPtr reference_;
  WindowAttrs window_;
  int64_t group_;
  ConvActivation act_;
  ir::Shape x_type_shape_;
  bool has_bias_input_ = false;
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, Entry> cache_;
  FiniteSums sums_;                   // of constant weights
  mutable PreparedWeights prepared_;  // constant weights in the primitive's layout (input 1 released)
  rt::Shape w_shape_;
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_conv) {
  reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::DnnlConv>("Conv"));
  reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::DnnlConv>("FusedConv", "com.microsoft"));
}
