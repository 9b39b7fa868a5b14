// Add, Sub, Mul, Div and com.microsoft BiasGelu on oneDNN for float32: the bias adds, residual adds
// and scalings between a transformer's matrix products, and BiasGelu as an add with a GELU post-op.
// oneDNN broadcasts only its second operand, so a product whose first operand would need broadcasting
// swaps operands when the op commutes and otherwise goes to the reference kernel, as do other element
// types and the legacy (opset < 7) broadcast attributes.
#include <algorithm>
#include <map>
#include <mutex>

#include "backends/cpu/conv_activation.h"
#include "backends/cpu/dnnl_common.h"
#include "backends/cpu/own_eltwise.h"
#include "runtime/broadcast.h"
#include "runtime/thread_pool.h"

namespace tessera::cpu {
namespace {

using dnnl::memory;

class DnnlBinary : public rt::OpKernel {
 public:
  explicit DnnlBinary(const rt::KernelInfo& info) : reference_(make_reference_kernel(info)) {
    const std::string& op = info.op_type();
    gelu_ = op == "BiasGelu";
    commutes_ = op == "Add" || op == "Mul" || gelu_;
    alg_ = op == "Sub"   ? dnnl::algorithm::binary_sub
           : op == "Mul" ? dnnl::algorithm::binary_mul
           : op == "Div" ? dnnl::algorithm::binary_div
                         : dnnl::algorithm::binary_add;
  }

  // Float operands of known ranks up to 6 (BiasGelu: a bias row), Add/Sub/Mul/Div from opset 7.
  static bool supports(const rt::KernelInfo& info) {
    const int64_t ra = inferred_rank(info, 0), rb = inferred_rank(info, 1);
    if (!inputs_float(info, {0, 1}) || ra < 0 || rb < 0 || std::max(ra, rb) > 6) return false;
    if (info.op_type() == "BiasGelu") return rb == 1 && ra >= 1;
    return info.since_version() >= 7;
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& a = ctx.input(0);
    const rt::Tensor& b = ctx.input(1);
    if (a.numel() == 0 || b.numel() == 0 || std::max(a.rank(), b.rank()) > 6 ||
        (gelu_ && (b.rank() != 1 || a.rank() < 1 || a.dim(-1) != b.dim(0))))
      return reference(ctx);
    rt::Shape out = rt::broadcast_shapes(a.shape(), b.shape());
    const rt::Tensor* first = &a;
    const rt::Tensor* second = &b;
    if (a.shape() != out) {
      if (!commutes_ || b.shape() != out) return reference(ctx);
      std::swap(first, second);
    }
    if (!gelu_ && bias_like(out, second->shape())) return rows(ctx, *first, *second, out);
    if (gelu_ && env_switch("TESSERA_OWN_ELTWISE") != false) return own_bias_gelu(ctx, *first, *second, out);
    std::lock_guard lock(mu_);
    rt::Shape key = first->shape();
    key.push_back(-1);
    key.insert(key.end(), second->shape().begin(), second->shape().end());
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      rt::Shape s1(out.size() - second->shape().size(), 1);
      s1.insert(s1.end(), second->shape().begin(), second->shape().end());
      // oneDNN has no rank 0: a scalar result is a one-element vector to it.
      rt::Shape s0 = out.empty() ? rt::Shape{1} : out;
      if (s1.empty()) s1 = {1};
      memory::desc md0(to_dims(s0), memory::data_type::f32, plain_tag(s0.size()));
      memory::desc md1(to_dims(s1), memory::data_type::f32, plain_tag(s1.size()));
      try {
        dnnl::primitive_attr attr;
        if (gelu_) {
          dnnl::post_ops ops;
          ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
          attr.set_post_ops(ops);
        }
        dnnl::binary::primitive_desc pd(dnnl::binary::desc(alg_, md0, md1, md0), attr, dnnl_engine());
        it = cache_.emplace(key, Entry{md0, md1, dnnl::binary(pd)}).first;
      } catch (const dnnl::error&) {
        return reference(ctx);
      }
    }
    set_dnnl_threads(ctx);
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, out);
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    memory m0(it->second.md0, eng, const_cast<void*>(first->raw()));
    memory m1(it->second.md1, eng, const_cast<void*>(second->raw()));
    memory md(it->second.md0, eng, y.raw());
    it->second.prim.execute(strm, {{DNNL_ARG_SRC_0, m0}, {DNNL_ARG_SRC_1, m1}, {DNNL_ARG_DST, md}});
    strm.wait();
    remember_output_bound(a, b, y);
  }

 private:
  struct Entry {
    memory::desc md0, md1;
    dnnl::binary prim;
  };

  // Whether `s` broadcasts against `out` along leading axes only (a bias over the rows of `out`), and
  // is not all of it. oneDNN 2.6 runs that broadcast in its scalar reference implementation (~20x
  // slower than memory speed: 0.2 ms for a BERT bias add on 16 cores), so rows() takes it.
  static bool bias_like(const rt::Shape& out, const rt::Shape& s) {
    size_t lead = 0;
    while (lead < s.size() && s[lead] == 1) ++lead;
    size_t tail = s.size() - lead;
    if (tail == 0 || tail > out.size()) return false;
    for (size_t i = 0; i < tail; ++i)
      if (s[lead + i] != out[out.size() - tail + i]) return false;
    return rt::shape_numel(s) < rt::shape_numel(out);
  }

  void rows(rt::KernelContext& ctx, const rt::Tensor& a, const rt::Tensor& b, const rt::Shape& out) const {
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, out);
    const int64_t inner = b.numel(), n = y.numel() / inner;
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* py = y.data<float>();
    dnnl::algorithm alg = alg_;
    // About 4K elements a chunk (see dnnl_layer_norm_kernel.cpp).
    ctx.threads().parallel_for(n, std::max<int64_t>(1, 4096 / inner), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* x = pa + r * inner;
        float* o = py + r * inner;
        switch (alg) {
          case dnnl::algorithm::binary_sub:
            for (int64_t j = 0; j < inner; ++j) o[j] = x[j] - pb[j];
            break;
          case dnnl::algorithm::binary_mul:
            for (int64_t j = 0; j < inner; ++j) o[j] = x[j] * pb[j];
            break;
          case dnnl::algorithm::binary_div:
            for (int64_t j = 0; j < inner; ++j) o[j] = x[j] / pb[j];
            break;
          default:
            for (int64_t j = 0; j < inner; ++j) o[j] = x[j] + pb[j];
        }
      }
    });
    remember_output_bound(a, b, y);
  }

  // A residual Add (or a Sub, a Mul) of tensors whose magnitudes are known bounds its output: the next
  // convolution need not read it (conv_activation.h, KnownMagnitudes). Not for Div and BiasGelu.
  void remember_output_bound(const rt::Tensor& a, const rt::Tensor& b, const rt::Tensor& y) const {
    if (gelu_ || alg_ == dnnl::algorithm::binary_div) return;
    const std::optional<double> ka = known_bound(a);
    const std::optional<double> kb = ka ? known_bound(b) : std::nullopt;
    if (!kb) return;
    remember_bound(y, alg_ == dnnl::algorithm::binary_mul ? *ka * *kb : *ka + *kb);
  }

  // GELU(a + bias) on the own accurate math (own_eltwise.h): oneDNN's gelu_erf post-op cancels for
  // negative values (docs/accuracy.md).
  static void own_bias_gelu(rt::KernelContext& ctx, const rt::Tensor& a, const rt::Tensor& b,
                            const rt::Shape& out) {
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, out);
    eltwise_rows({EltwiseKind::kGeluErf}, a.data<float>(), b.data<float>(), b.numel(), y.data<float>(),
                 y.numel(), ctx.threads());
    ctx.set_path(eltwise_path());
  }

  void reference(rt::KernelContext& ctx) const {
    if (!reference_) ctx.fail("no reference kernel");
    reference_->compute(ctx);
  }

  rt::KernelPtr reference_;
  dnnl::algorithm alg_;
  bool gelu_ = false, commutes_ = false;
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, Entry> cache_;
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_binary) {
  using tessera::cpu::DnnlBinary;
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) reg.add(tessera::cpu::dnnl_kernel<DnnlBinary>(op));
  reg.add(tessera::cpu::dnnl_kernel<DnnlBinary>("BiasGelu", "com.microsoft"));
}
