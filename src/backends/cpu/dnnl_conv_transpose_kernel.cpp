// ConvTranspose on oneDNN (deconvolution) for float32 with 1-3 spatial axes. Sizes and pads resolve as
// in the reference kernel (output_shape, auto_pad SAME_*, output_padding); oneDNN knows no
// output_padding, which is the same as that much less end padding, so a node whose end padding would
// go negative, and other element types, go to the reference kernel. Weights [C, M/group, k...] are read
// in place through oneDNN's iohw-style tags and reordered once into the primitive's layout.
#include <fmt/format.h>

#include <map>
#include <mutex>

#include "backends/cpu/dnnl_common.h"

namespace tessera::cpu {
namespace {

using dnnl::memory;
using Dims = memory::dims;

class DnnlConvTranspose : public rt::OpKernel {
 public:
  explicit DnnlConvTranspose(const rt::KernelInfo& info)
      : reference_(make_reference_kernel(info)),
        auto_pad_(info.get_string("auto_pad", "NOTSET")),
        dilations_(info.get_ints("dilations", {})),
        strides_(info.get_ints("strides", {})),
        pads_(info.get_ints("pads", {})),
        output_padding_(info.get_ints("output_padding", {})),
        output_shape_(info.get_ints("output_shape", {})),
        group_(info.get_int("group", 1)) {}

  // Float input, weights and bias, input and weights of the same rank 3 to 5, group 1 or more.
  static bool supports(const rt::KernelInfo& info) {
    const int64_t rank = inferred_rank(info, 0);
    return inputs_float(info, {0, 1, 2}) && rank >= 3 && rank <= 5 && inferred_rank(info, 1) == rank &&
           info.get_int("group", 1) >= 1;
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor& w = ctx.input(1);
    // Shapes that do not fit: the reference kernel reports them.
    if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank() || x.dim(1) != w.dim(0) ||
        w.dim(0) % group_ != 0 || (ctx.has_input(2) && ctx.input(2).numel() != w.dim(1) * group_))
      return reference_->compute(ctx);
    std::lock_guard lock(mu_);
    Entry* e = entry(ctx, x, w);
    if (!e) return reference_->compute(ctx);
    set_dnnl_threads(ctx);
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    const memory& weights = e->weights.get(w, e->wts_user, e->pd.weights_desc(), strm);
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, e->out_shape);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, memory(e->pd.src_desc(), eng, const_cast<void*>(x.raw()))},
        {DNNL_ARG_WEIGHTS, weights},
        {DNNL_ARG_DST, memory(e->pd.dst_desc(), eng, y.raw())}};
    if (ctx.has_input(2))
      args.emplace(DNNL_ARG_BIAS, memory(e->pd.bias_desc(), eng, const_cast<void*>(ctx.input(2).raw())));
    e->prim.execute(strm, args);
    strm.wait();
  }

  size_t prepared_bytes() const override {
    std::lock_guard lock(mu_);
    return reordered_bytes(cache_);
  }

 private:
  struct Entry {
    dnnl::deconvolution_forward::primitive_desc pd;
    dnnl::deconvolution_forward prim;
    memory::desc wts_user;
    ReorderedWeights weights;
    rt::Shape out_shape;
  };

  Entry* entry(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Tensor& w) const {
    rt::Shape key = x.shape();
    key.insert(key.end(), w.shape().begin(), w.shape().end());
    key.push_back(ctx.has_input(2));
    if (auto it = cache_.find(key); it != cache_.end()) return &it->second;
    const size_t sp = static_cast<size_t>(x.rank() - 2);
    auto at = [&](const std::vector<int64_t>& v, size_t i, int64_t d) { return v.size() == sp ? v[i] : d; };
    if ((!pads_.empty() && pads_.size() != 2 * sp) ||
        (!output_padding_.empty() && output_padding_.size() != sp) ||
        (!output_shape_.empty() && output_shape_.size() != sp && output_shape_.size() != sp + 2))
      return nullptr;
    const bool same = auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER";
    const int64_t m = w.dim(1) * group_;
    rt::Shape out{x.dim(0), m};
    Dims strides, dilates, pad_l, pad_r;
    for (size_t i = 0; i < sp; ++i) {
      int64_t in = x.dim(static_cast<int64_t>(2 + i)), k = w.dim(static_cast<int64_t>(2 + i));
      int64_t s = at(strides_, i, 1), d = at(dilations_, i, 1), op = at(output_padding_, i, 0);
      if (s < 1 || d < 1 || op < 0 || k < 1) return nullptr;
      int64_t full = s * (in - 1) + op + d * (k - 1) + 1;
      int64_t pb = 0, pe = 0, size;
      if (!output_shape_.empty() || same) {
        // The split of the reference kernel (and of ONNX's reference implementation).
        int64_t target = !output_shape_.empty() ? output_shape_[output_shape_.size() - sp + i] : in * s;
        int64_t total = full - target;
        int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
        pb = auto_pad_ == "SAME_UPPER" ? half : total - half;
        pe = total - pb;
        size = target;
      } else {
        if (auto_pad_ == "NOTSET" && !pads_.empty()) {
          pb = pads_[i];
          pe = pads_[i + sp];
        }
        size = full - pb - pe;
      }
      if (size < 1 || pb < 0 || pe - op < 0) return nullptr;
      strides.push_back(s);
      dilates.push_back(d - 1);
      pad_l.push_back(pb);
      pad_r.push_back(pe - op);
      out.push_back(size);
    }
    using tag = memory::format_tag;
    // [C, M, k...] read as oneDNN's (M, C, k...): the first two axes swapped ("iohw").
    static const tag kWeightTags[] = {tag::undef, tag::bac, tag::bacd, tag::bacde};
    static const tag kGroupTags[] = {tag::undef, tag::acbd, tag::acbde, tag::acbdef};
    Dims wd{m, x.dim(1)};
    for (size_t i = 0; i < sp; ++i) wd.push_back(w.dim(static_cast<int64_t>(2 + i)));
    memory::desc wts_user;
    if (group_ == 1) {
      wts_user = memory::desc(wd, memory::data_type::f32, kWeightTags[sp]);
    } else {
      wd[0] /= group_;
      wd[1] /= group_;
      wd.insert(wd.begin(), group_);
      wts_user = memory::desc(wd, memory::data_type::f32, kGroupTags[sp]);
    }
    memory::desc src(to_dims(x.shape()), memory::data_type::f32, plain_tag(x.shape().size()));
    memory::desc dst(to_dims(out), memory::data_type::f32, plain_tag(out.size()));
    memory::desc wts_any(wd, memory::data_type::f32, tag::any);
    memory::desc bias({m}, memory::data_type::f32, tag::a);
    using DF = dnnl::deconvolution_forward;
    try {
      auto desc = ctx.has_input(2)
                      ? DF::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                 src, wts_any, bias, dst, strides, dilates, pad_l, pad_r)
                      : DF::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                 src, wts_any, dst, strides, dilates, pad_l, pad_r);
      DF::primitive_desc pd(desc, dnnl_engine());
      Entry e{pd, DF(pd), wts_user, {}, out};
      return &cache_.emplace(key, std::move(e)).first->second;
    } catch (const dnnl::error&) {
      return nullptr;
    }
  }

  rt::KernelPtr reference_;
  std::string auto_pad_;
  std::vector<int64_t> dilations_, strides_, pads_, output_padding_, output_shape_;
  int64_t group_;
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, Entry> cache_;
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_conv_transpose) {
  reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::DnnlConvTranspose>("ConvTranspose"));
}
