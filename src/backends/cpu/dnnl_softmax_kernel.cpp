// Softmax and LogSoftmax on oneDNN for float32 (attention's row softmax is a large share of a
// transformer's time). Before opset 13 both ops flatten the input to 2-D at `axis` and normalise each
// row; from 13 they normalise along one axis. Both map onto oneDNN's softmax over one dimension of a
// plain tensor: the 2-D view for the old semantics, the tensor itself for the new.
#include <map>
#include <mutex>

#include "backends/cpu/dnnl_common.h"

namespace tessera::cpu {
namespace {

using dnnl::memory;

class DnnlSoftmax : public rt::OpKernel {
 public:
  explicit DnnlSoftmax(const rt::KernelInfo& info)
      : reference_(make_reference_kernel(info)),
        log_(info.op_type() == "LogSoftmax"),
        coerce_2d_(info.since_version() < 13),
        axis_(info.get_int("axis", info.since_version() < 13 ? 1 : -1)) {}

  // Float input of known rank 1 or more with an axis inside it.
  static bool supports(const rt::KernelInfo& info) {
    const int64_t rank = inferred_rank(info, 0);
    const int64_t axis = info.get_int("axis", info.since_version() < 13 ? 1 : -1);
    return inputs_float(info, {0}) && rank >= 1 && axis >= -rank && axis < rank;
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    int64_t rank = x.rank();
    int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (rank == 0 || axis < 0 || axis >= rank || x.numel() == 0) {  // a shape inference did not foresee
      if (!reference_) ctx.fail("no reference softmax kernel");
      return reference_->compute(ctx);
    }
    rt::Shape view = x.shape();
    int dim = static_cast<int>(axis);
    if (coerce_2d_) {
      int64_t outer = 1;
      for (int64_t i = 0; i < axis; ++i) outer *= x.shape()[static_cast<size_t>(i)];
      view = {outer, x.numel() / outer};
      dim = 1;
    }
    std::lock_guard lock(mu_);
    auto key = view;
    key.push_back(dim);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      memory::desc md(to_dims(view), memory::data_type::f32, plain_tag(view.size()));
      try {
        Entry e{md, {}};
        if (log_) {
          dnnl::logsoftmax_forward::primitive_desc pd(
              dnnl::logsoftmax_forward::desc(dnnl::prop_kind::forward_inference, md, dim), dnnl_engine());
          e.prim = dnnl::logsoftmax_forward(pd);
        } else {
          dnnl::softmax_forward::primitive_desc pd(
              dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, dim), dnnl_engine());
          e.prim = dnnl::softmax_forward(pd);
        }
        it = cache_.emplace(key, std::move(e)).first;
      } catch (const dnnl::error&) {
        return reference_->compute(ctx);
      }
    }
    set_dnnl_threads(ctx);
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, x.shape());
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    memory src(it->second.md, eng, const_cast<void*>(x.raw()));
    memory dst(it->second.md, eng, y.raw());
    it->second.prim.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    strm.wait();
  }

 private:
  struct Entry {
    memory::desc md;
    dnnl::primitive prim;
  };
  rt::KernelPtr reference_;
  bool log_, coerce_2d_;
  int64_t axis_;
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, Entry> cache_;
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_softmax) {
  for (const char* op : {"Softmax", "LogSoftmax"})
    reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::DnnlSoftmax>(op));
}
