// Conv on oneDNN for float32: the primitive picks its own blocked layouts for activations and weights;
// inputs and outputs stay plain NCHW between nodes, so the kernel reorders in and out around the
// primitive (weights once, while the same weight tensor comes back). Other element types and anything
// oneDNN refuses go to the reference kernel.
#include <fmt/format.h>

#include <cfloat>
#include <map>
#include <mutex>
#include <optional>

#include "backends/cpu/dnnl_common.h"
#include "runtime/dispatch.h"

namespace tessera::cpu {
namespace {

using dnnl::memory;
using Dims = memory::dims;

struct ConvGeometry {
  Dims strides, dilates, pad_l, pad_r;  // dilates in oneDNN's convention (0 = dense)
  rt::Shape out;
};

class DnnlConv : public rt::OpKernel {
 public:
  explicit DnnlConv(const rt::KernelInfo& info)
      : reference_(make_reference_kernel(info)),
        auto_pad_(info.get_string("auto_pad", "NOTSET")),
        dilations_(info.get_ints("dilations", {})),
        strides_(info.get_ints("strides", {})),
        pads_(info.get_ints("pads", {})),
        group_(info.get_int("group", 1)) {
    if (info.op_type() == "FusedConv") set_activation(info);
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor& w = ctx.input(1);
    if (x.dtype() != ir::DataType::kFloat || w.dtype() != ir::DataType::kFloat || x.rank() < 3 ||
        x.rank() > 5 || w.rank() != x.rank() || group_ < 1 || !reference_ok(x, w) || !activation_ok_ ||
        ctx.has_input(3)) {
      return reference(ctx);
    }
    std::lock_guard lock(mu_);
    Entry* e = entry(ctx, x, w);
    if (!e) return reference(ctx);
    set_dnnl_threads(ctx);
    run(ctx, *e, x, w);
  }

 private:
  struct Entry {
    dnnl::convolution_forward prim;
    dnnl::convolution_forward::primitive_desc pd;
    memory::desc src_plain, dst_plain, wts_plain;
    memory weights;  // in the primitive's layout
    // The tensor they were reordered from, held so that its storage cannot be freed and reused: the
    // same storage then means the same values (values never change once produced).
    rt::Tensor weights_src;
    rt::Shape out_shape;
  };

  // FusedConv's activation as a oneDNN post-op; one oneDNN lacks leaves the node to the reference.
  void set_activation(const rt::KernelInfo& info) {
    std::string act = info.get_string("activation", "");
    auto params = info.get_floats("activation_params", {});
    auto param = [&](size_t i, float d) { return i < params.size() ? params[i] : d; };
    using A = dnnl::algorithm;
    if (act.empty()) return;
    if (act == "Relu") {
      post_ = {A::eltwise_relu, 0.f, 0.f};
    } else if (act == "LeakyRelu") {
      post_ = {A::eltwise_relu, param(0, 0.01f), 0.f};
    } else if (act == "Clip") {
      post_ = {A::eltwise_clip, param(0, -FLT_MAX), param(1, FLT_MAX)};
    } else if (act == "Sigmoid") {
      post_ = {A::eltwise_logistic, 0.f, 0.f};
    } else if (act == "Tanh") {
      post_ = {A::eltwise_tanh, 0.f, 0.f};
    } else {
      activation_ok_ = false;
    }
  }

  void reference(rt::KernelContext& ctx) const {
    if (!reference_) ctx.fail("no reference Conv kernel");
    reference_->compute(ctx);
  }

  // Shapes oneDNN can take; mismatches are left to the reference kernel's messages.
  bool reference_ok(const rt::Tensor& x, const rt::Tensor& w) const {
    return x.dim(1) == w.dim(1) * group_ && w.dim(0) % group_ == 0;
  }

  std::optional<ConvGeometry> geometry(const rt::Tensor& x, const rt::Tensor& w) const {
    size_t sp = static_cast<size_t>(x.rank() - 2);
    ConvGeometry g;
    g.out = {x.dim(0), w.dim(0)};
    for (size_t i = 0; i < sp; ++i) {
      int64_t in = x.shape()[2 + i], k = w.shape()[2 + i];
      int64_t s = strides_.size() == sp ? strides_[i] : 1;
      int64_t d = dilations_.size() == sp ? dilations_[i] : 1;
      if (s < 1 || d < 1) return std::nullopt;
      int64_t ek = d * (k - 1) + 1;
      int64_t pb = 0, pe = 0, out;
      if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
        out = (in + s - 1) / s;
        int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in);
        pb = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
        pe = total - pb;
      } else {
        if (auto_pad_ == "NOTSET" && pads_.size() == 2 * sp) {
          pb = pads_[i];
          pe = pads_[i + sp];
        }
        out = (in + pb + pe - ek) / s + 1;
      }
      if (out < 1 || pb < 0 || pe < 0) return std::nullopt;
      g.strides.push_back(s);
      g.dilates.push_back(d - 1);
      g.pad_l.push_back(pb);
      g.pad_r.push_back(pe);
      g.out.push_back(out);
    }
    return g;
  }

  Entry* entry(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Tensor& w) const {
    auto key = x.shape();
    key.insert(key.end(), w.shape().begin(), w.shape().end());
    auto it = cache_.find(key);
    if (it != cache_.end()) return &it->second;
    auto g = geometry(x, w);
    if (!g) return nullptr;
    bool has_bias = ctx.has_input(2);
    memory::desc src_any(to_dims(x.shape()), memory::data_type::f32, memory::format_tag::any);
    memory::desc dst_any(to_dims(g->out), memory::data_type::f32, memory::format_tag::any);
    Dims wd = to_dims(w.shape());
    if (group_ > 1) {
      wd[0] /= group_;
      wd.insert(wd.begin(), group_);
    }
    memory::desc wts_any(wd, memory::data_type::f32, memory::format_tag::any);
    memory::desc bias_md({w.dim(0)}, memory::data_type::f32, memory::format_tag::a);
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
      if (post_) {
        dnnl::post_ops ops;
        ops.append_eltwise(1.0f, post_->alg, post_->alpha, post_->beta);
        attr.set_post_ops(ops);
      }
      e.pd = dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_engine());
      e.prim = dnnl::convolution_forward(e.pd);
      e.src_plain = memory::desc(to_dims(x.shape()), memory::data_type::f32, plain_tag(x.shape().size()));
      e.dst_plain = memory::desc(to_dims(g->out), memory::data_type::f32, plain_tag(g->out.size()));
      e.wts_plain = memory::desc(wd, memory::data_type::f32, plain_tag(wd.size()));
      e.out_shape = g->out;
      return &cache_.emplace(key, std::move(e)).first->second;
    } catch (const dnnl::error&) {
      return nullptr;  // a configuration oneDNN does not implement: the reference kernel runs it
    }
  }

  void run(rt::KernelContext& ctx, Entry& e, const rt::Tensor& x, const rt::Tensor& w) const {
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    if (e.weights_src.storage() != w.storage()) {
      memory plain(e.wts_plain, eng, const_cast<void*>(w.raw()));
      e.weights = memory(e.pd.weights_desc(), eng);
      dnnl::reorder(plain, e.weights).execute(strm, plain, e.weights);
      e.weights_src = w;
    }
    rt::Tensor& y = ctx.output(0, ir::DataType::kFloat, e.out_shape);
    memory src(e.src_plain, eng, const_cast<void*>(x.raw()));
    rt::Tensor src_buf, dst_buf;
    memory src_m = src;
    if (e.pd.src_desc() != e.src_plain) {
      src_buf = ctx.scratch(ir::DataType::kUint8, {static_cast<int64_t>(e.pd.src_desc().get_size())});
      src_m = memory(e.pd.src_desc(), eng, src_buf.raw());
      dnnl::reorder(src, src_m).execute(strm, src, src_m);
    }
    memory dst(e.dst_plain, eng, y.raw());
    memory dst_m = dst;
    if (e.pd.dst_desc() != e.dst_plain) {
      dst_buf = ctx.scratch(ir::DataType::kUint8, {static_cast<int64_t>(e.pd.dst_desc().get_size())});
      dst_m = memory(e.pd.dst_desc(), eng, dst_buf.raw());
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, e.weights}, {DNNL_ARG_DST, dst_m}};
    if (ctx.has_input(2)) {
      const rt::Tensor& b = ctx.input(2);
      if (b.dtype() != ir::DataType::kFloat || b.numel() != e.out_shape[1])
        ctx.fail(fmt::format("bias must be float[{}], got {}", e.out_shape[1], rt::Value(b).describe()));
      args.emplace(DNNL_ARG_BIAS, memory(e.pd.bias_desc(), eng, const_cast<void*>(b.raw())));
    }
    e.prim.execute(strm, args);
    if (dst_m != dst) dnnl::reorder(dst_m, dst).execute(strm, dst_m, dst);
    strm.wait();
  }

  struct PostOp {
    dnnl::algorithm alg;
    float alpha, beta;
  };
  std::optional<PostOp> post_;
  bool activation_ok_ = true;
  rt::KernelPtr reference_;
  std::string auto_pad_;
  std::vector<int64_t> dilations_, strides_, pads_;
  int64_t group_;
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, Entry> cache_;
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_conv) {
  reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::DnnlConv>("Conv"));
  reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::DnnlConv>("FusedConv", "com.microsoft"));
}
