// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool on oneDNN's pooling for plain float32
// [N, C, spatial...] tensors with 1 to 3 spatial axes (the blocked-layout pools are in
// dnnl_blocked_kernel.cpp). The window geometry (pads, auto_pad, ceil_mode, dilations) comes from
// dnnl_conv_util.h, shared with the convolutions; a global pool is a window of the whole spatial extent.
// Taken to the reference kernel: other element types, MaxPool's Indices output, AveragePool counting the
// pads together with ceil_mode (ONNX counts the explicit pads but not the ceil-mode overhang in the
// divisor, which oneDNN cannot express), and geometries window_geometry or oneDNN refuse.
#include <map>
#include <mutex>

#include "backends/cpu/conv_activation.h"
#include "backends/cpu/dnnl_common.h"
#include "backends/cpu/dnnl_conv_util.h"

namespace tessera::cpu {
namespace {

using dnnl::memory;

class DnnlPool : public rt::OpKernel {
 public:
  explicit DnnlPool(const rt::KernelInfo& info) : reference_(make_reference_kernel(info)) {
    const std::string& op = info.op_type();
    global_ = op == "GlobalAveragePool" || op == "GlobalMaxPool";
    if (!global_) window_ = WindowAttrs::read(info);
    if (op == "MaxPool" || op == "GlobalMaxPool") {
      alg_ = dnnl::algorithm::pooling_max;
      // Indices (output 1) are not computed here; storage_order only concerns them.
      if (info.has_output(1)) supported_ = false;
    } else {
      bool include = !global_ && info.get_int("count_include_pad", 0) != 0;
      if (include && window_.ceil_mode) supported_ = false;
      alg_ = include ? dnnl::algorithm::pooling_avg_include_padding
                     : dnnl::algorithm::pooling_avg_exclude_padding;
    }
  }

  // Float input of rank 3 to 5; not MaxPool's Indices, nor AveragePool counting pads with ceil_mode.
  static bool supports(const rt::KernelInfo& info) {
    const int64_t rank = inferred_rank(info, 0);
    return inputs_float(info, {0}) && rank >= 3 && rank <= 5 && DnnlPool(info).supported_;
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    if (x.rank() < 3 || x.rank() > 5 || x.numel() == 0) return reference(ctx);
    // oneDNN's max drops a NaN in the window (max(NaN, v) is v); the reference keeps it, as PyTorch's
    // max pooling does. Only an input nothing is known of is read for NaN.
    if (alg_ == dnnl::algorithm::pooling_max && may_hold_nan(ctx.threads(), x)) return reference(ctx);
    std::lock_guard lock(mu_);
    auto it = cache_.find(x.shape());
    if (it == cache_.end()) {
      std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
      std::optional<WindowGeometry> g;
      if (global_) {
        WindowAttrs whole;
        whole.auto_pad = "NOTSET";
        g = window_geometry(whole, spatial, spatial);
      } else {
        g = window_geometry(window_, spatial, window_.kernel);
      }
      if (!g) return reference(ctx);
      rt::Shape out = {x.dim(0), x.dim(1)};
      out.insert(out.end(), g->out.begin(), g->out.end());
      memory::desc src(to_dims(x.shape()), memory::data_type::f32, plain_tag(x.shape().size()));
      memory::desc dst(to_dims(out), memory::data_type::f32, plain_tag(out.size()));
      memory::dims kernel = global_ ? to_dims(spatial) : to_dims(window_.kernel);
      try {
        dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg_, src, dst, g->strides,
                                         kernel, g->dilates, g->pad_l, g->pad_r);
        dnnl::pooling_v2_forward::primitive_desc pd(d, dnnl_engine());
        it = cache_
                 .emplace(x.shape(), Entry{src, dst, dnnl::pooling_v2_forward(pd), out,
                                           global_ || every_window_reads_data(*g, window_.kernel)})
                 .first;
      } catch (const dnnl::error&) {
        return reference(ctx);
      }
    }
    set_dnnl_threads(ctx);
    const Entry& e = it->second;
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, e.out);
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    e.prim.execute(strm, {{DNNL_ARG_SRC, memory(e.src, eng, const_cast<void*>(x.raw()))},
                          {DNNL_ARG_DST, memory(e.dst, eng, y.raw())}});
    strm.wait();
    // A max or an average of X's values is no larger than X's largest magnitude: the next convolution
    // need not read the output (conv_activation.h, KnownMagnitudes).
    if (e.bounded) pass_bound(x, y);
  }

 private:
  struct Entry {
    memory::desc src, dst;
    dnnl::pooling_v2_forward prim;
    rt::Shape out;
    bool bounded;  // every window holds an input value (none only padding)
  };

  // Whether every window of a dense (undilated) geometry overlaps the input: pads, the ceil-mode
  // overhang included, shorter than the window on both sides. A window of padding alone would make a
  // max pool's lowest float.
  static bool every_window_reads_data(const WindowGeometry& g, const std::vector<int64_t>& kernel) {
    if (kernel.size() != g.dilates.size()) return false;
    for (size_t i = 0; i < kernel.size(); ++i)
      if (g.dilates[i] != 0 || g.pad_l[i] >= kernel[i] || g.pad_r[i] >= kernel[i]) return false;
    return true;
  }

  void reference(rt::KernelContext& ctx) const {
    if (!reference_) ctx.fail("no reference pooling kernel");
    reference_->compute(ctx);
  }

  rt::KernelPtr reference_;
  WindowAttrs window_;
  dnnl::algorithm alg_;
  bool global_ = false, supported_ = true;
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, Entry> cache_;
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_pool) {
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"})
    reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::DnnlPool>(op));
}
