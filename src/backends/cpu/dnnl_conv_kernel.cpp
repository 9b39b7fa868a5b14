// Conv on oneDNN for float32: the primitive picks its own blocked layouts for activations and weights;
// inputs and outputs stay plain NCHW between nodes, so the kernel reorders in and out around the
// primitive (weights once, while the same weight tensor comes back). Other element types and anything
// oneDNN refuses go to the reference kernel.
#include <fmt/format.h>

#include <map>
#include <mutex>
#include <optional>

#include "backends/cpu/dnnl_common.h"
#include "backends/cpu/dnnl_conv_util.h"
#include "runtime/dispatch.h"

namespace tessera::cpu {
namespace {

using dnnl::memory;
using Dims = memory::dims;

class DnnlConv : public rt::OpKernel {
 public:
  explicit DnnlConv(const rt::KernelInfo& info)
      : reference_(make_reference_kernel(info)),
        window_(WindowAttrs::read(info)),
        group_(info.get_int("group", 1)) {
    if (info.op_type() == "FusedConv") activation_ok_ = append_activation(info, post_ops_);
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
    ctx.set_path(e->pd.impl_info_str());
    set_dnnl_threads(ctx);
    run(ctx, *e, x, w);
  }

  size_t prepared_bytes() const override {
    std::lock_guard lock(mu_);
    return reordered_bytes(cache_);
  }

 private:
  struct Entry {
    dnnl::convolution_forward prim;
    dnnl::convolution_forward::primitive_desc pd;
    memory::desc src_plain, dst_plain, wts_plain;
    ReorderedWeights weights;  // in the primitive's layout
    rt::Shape out_shape;
  };

  void reference(rt::KernelContext& ctx) const {
    if (!reference_) ctx.fail("no reference Conv kernel");
    reference_->compute(ctx);
  }

  // Shapes oneDNN can take; mismatches are left to the reference kernel's messages.
  bool reference_ok(const rt::Tensor& x, const rt::Tensor& w) const {
    return x.dim(1) == w.dim(1) * group_ && w.dim(0) % group_ == 0;
  }

  Entry* entry(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Tensor& w) const {
    auto key = x.shape();
    key.insert(key.end(), w.shape().begin(), w.shape().end());
    auto it = cache_.find(key);
    if (it != cache_.end()) return &it->second;
    std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
    std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    auto g = window_geometry(window_, in, kernel);
    if (!g) return nullptr;
    rt::Shape out_shape{x.dim(0), w.dim(0)};
    out_shape.insert(out_shape.end(), g->out.begin(), g->out.end());
    bool has_bias = ctx.has_input(2);
    memory::desc src_any(to_dims(x.shape()), memory::data_type::f32, memory::format_tag::any);
    memory::desc dst_any(to_dims(out_shape), memory::data_type::f32, memory::format_tag::any);
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
      attr.set_post_ops(post_ops_);
      e.pd = dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_engine());
      e.prim = dnnl::convolution_forward(e.pd);
      e.src_plain = memory::desc(to_dims(x.shape()), memory::data_type::f32, plain_tag(x.shape().size()));
      e.dst_plain = memory::desc(to_dims(out_shape), memory::data_type::f32, plain_tag(out_shape.size()));
      e.wts_plain = memory::desc(wd, memory::data_type::f32, plain_tag(wd.size()));
      e.out_shape = out_shape;
      return &cache_.emplace(key, std::move(e)).first->second;
    } catch (const dnnl::error&) {
      return nullptr;  // a configuration oneDNN does not implement: the reference kernel runs it
    }
  }

  void run(rt::KernelContext& ctx, Entry& e, const rt::Tensor& x, const rt::Tensor& w) const {
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    const memory& weights = e.weights.get(w, e.wts_plain, e.pd.weights_desc(), strm);
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
  }

  dnnl::post_ops post_ops_;
  bool activation_ok_ = true;
  rt::KernelPtr reference_;
  WindowAttrs window_;
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
