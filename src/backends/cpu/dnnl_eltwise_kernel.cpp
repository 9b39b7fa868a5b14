// Unary activations on oneDNN's eltwise primitive for float32: the GELUs of transformers (ai.onnx Gelu
// (20), com.microsoft Gelu, FastGelu, QuickGelu) and the common activations (Relu, LeakyRelu, Sigmoid,
// Tanh, Exp, Log, Sqrt, Abs, Elu, Softplus, HardSwish, HardSigmoid). oneDNN's jitted kernels use
// AVX-512/AVX2 polynomial approximations (accurate to a few ulp) instead of one libm call per element.
//
// An elementwise map does not care about shape, so every tensor is a 1-D run of numel values to oneDNN
// and one primitive per element count is cached. FastGelu's optional bias (along the last axis) is a
// binary add with the GELU as post-op, as BiasGelu in dnnl_binary_kernel.cpp. Other element types and
// anything oneDNN refuses go to the reference kernel. Clip is not here: oneDNN's clip turns NaN into a
// bound, where ONNX (and the reference kernel) keep NaN.
//
// Exp, Log, Sigmoid, Softplus, Tanh, Elu, QuickGelu, Relu, LeakyRelu, HardSigmoid and the GELUs run on
// Tessera's own vectorised math instead (own_eltwise.h, path "own avx512"/"own avx2"): oneDNN 2.6's versions
// miss docs/accuracy.md's bounds (Log ~1e5 ulp near 1, Softplus log(1 + e^x) cancelling,
// Exp/Sigmoid/QuickGelu flushing subnormal results, Elu's exp(x) - 1 cancelling near 0, Relu and clip turning
// NaN into numbers, the GELUs' 1 + erf and 1 + tanh cancelling for negative x). TESSERA_OWN_ELTWISE=off keeps
// them on oneDNN.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "backends/cpu/conv_activation.h"
#include "backends/cpu/dnnl_common.h"
#include "backends/cpu/own_eltwise.h"
#include "runtime/thread_pool.h"

namespace tessera::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;

// One oneDNN eltwise step (y = f(x; alpha, beta)).
struct Step {
  algorithm alg = algorithm::undef;
  float alpha = 0.f, beta = 0.f;
};

class DnnlEltwise : public rt::OpKernel {
 public:
  explicit DnnlEltwise(const rt::KernelInfo& info) : reference_(make_reference_kernel(info)) {
    const std::string& op = info.op_type();
    const bool ms = info.node().domain == "com.microsoft";
    if (op == "Relu") {
      main_ = {algorithm::eltwise_relu, 0.f, 0.f};
    } else if (op == "LeakyRelu") {
      // oneDNN: x > 0 ? x : alpha x; ONNX x >= 0 ? x : alpha x: equal at 0 too.
      main_ = {algorithm::eltwise_relu, info.get_float("alpha", 0.01f), 0.f};
    } else if (op == "Sigmoid") {
      main_ = {algorithm::eltwise_logistic};
    } else if (op == "Tanh") {
      main_ = {algorithm::eltwise_tanh};
    } else if (op == "Exp") {
      main_ = {algorithm::eltwise_exp};
    } else if (op == "Log") {
      main_ = {algorithm::eltwise_log};
    } else if (op == "Sqrt") {
      main_ = {algorithm::eltwise_sqrt};
    } else if (op == "Abs") {
      main_ = {algorithm::eltwise_abs};
    } else if (op == "Elu") {
      main_ = {algorithm::eltwise_elu, info.get_float("alpha", 1.0f), 0.f};
    } else if (op == "Softplus") {
      main_ = {algorithm::eltwise_soft_relu};  // log(1 + e^x) in oneDNN 2.x
    } else if (op == "HardSwish") {
      main_ = {algorithm::eltwise_hardswish};  // x * relu6(x + 3) / 6, ONNX's alpha 1/6, beta 1/2
    } else if (op == "HardSigmoid") {
      // max(0, min(1, alpha x + beta)): a linear step, then a clip in place (oneDNN 2.6 has no hardsigmoid,
      // and its eltwise primitive does not apply eltwise post-ops).
      main_ = {algorithm::eltwise_linear, info.get_float("alpha", 0.2f), info.get_float("beta", 0.5f)};
      post_ = {algorithm::eltwise_clip_v2, 0.f, 1.f};
    } else if (op == "Gelu" && !ms) {
      std::string mode = info.get_string("approximate", "none");
      if (mode == "none") main_ = {algorithm::eltwise_gelu_erf};
      if (mode == "tanh") main_ = {algorithm::eltwise_gelu_tanh};  // else: the reference reports it
    } else if (op == "Gelu") {
      main_ = {algorithm::eltwise_gelu_erf};
    } else if (op == "FastGelu") {
      main_ = {algorithm::eltwise_gelu_tanh};
      bias_input_ = true;
    } else if (op == "QuickGelu") {
      main_ = {algorithm::eltwise_swish, info.get_float("alpha", 1.702f), 0.f};  // x * sigmoid(alpha x)
    }
    if (env_switch("TESSERA_OWN_ELTWISE") == false) return;  // oneDNN alone, for comparisons
    own_ = own_op(op, main_);
  }

  // Float input (and FastGelu's bias), an op and attributes this kernel has a form of.
  static bool supports(const rt::KernelInfo& info) {
    return inputs_float(info, {0, 1}) && DnnlEltwise(info).main_.alg != algorithm::undef;
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor* bias = bias_input_ ? ctx.optional_input(1) : nullptr;
    Step step = main_;
    bool ok = x.numel() > 0;
    if (ok && bias) ok = bias->rank() == 1 && x.rank() >= 1 && bias->numel() == x.dim(-1);
    if (!ok) {
      if (!reference_) ctx.fail("no reference kernel");
      return reference_->compute(ctx);
    }
    if (own_) return run_own(ctx, x, bias);
    const int64_t n = x.numel();
    const int64_t h = bias ? bias->numel() : 0;
    std::lock_guard lock(mu_);
    Key key{n, h, step.alpha, step.beta};
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      try {
        it = cache_.emplace(key, make(step, n, h)).first;
      } catch (const dnnl::error&) {
        return reference_->compute(ctx);
      }
    }
    set_dnnl_threads(ctx);
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, x.shape());
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    const Entry& e = it->second;
    memory src(e.md, eng, const_cast<void*>(x.raw()));
    memory dst(e.md, eng, y.raw());
    if (bias) {
      memory b(e.bias_md, eng, const_cast<void*>(bias->raw()));
      e.prim.execute(strm, {{DNNL_ARG_SRC_0, src}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, dst}});
    } else {
      e.prim.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
      if (e.then) e.then->execute(strm, {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}});
    }
    strm.wait();
  }

 private:
  using Key = std::tuple<int64_t, int64_t, float, float>;  // numel, bias length (0: none), alpha, beta
  struct Entry {
    memory::desc md, bias_md;
    dnnl::primitive prim;
    std::optional<dnnl::eltwise_forward> then;  // post_, in place on the result
  };

  Entry make(const Step& s, int64_t n, int64_t h) const {
    dnnl::engine& eng = dnnl_engine();
    Entry e;
    if (h > 0) {
      // The activation as a post-op of the bias add.
      dnnl::primitive_attr attr;
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, s.alg, s.alpha, s.beta);
      attr.set_post_ops(ops);
      // [rows, h] + [1, h], then the activation as a post-op.
      e.md = memory::desc({n / h, h}, memory::data_type::f32, memory::format_tag::ab);
      e.bias_md = memory::desc({1, h}, memory::data_type::f32, memory::format_tag::ab);
      dnnl::binary::primitive_desc pd(dnnl::binary::desc(algorithm::binary_add, e.md, e.bias_md, e.md), attr,
                                      eng);
      e.prim = dnnl::binary(pd);
    } else {
      e.md = memory::desc({n}, memory::data_type::f32, memory::format_tag::a);
      auto eltwise = [&](const Step& st) {
        return dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(
            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, st.alg, e.md, st.alpha, st.beta),
            eng));
      };
      e.prim = eltwise(s);
      if (post_.alg != algorithm::undef) e.then = eltwise(post_);
    }
    return e;
  }

  // The own accurate kernel of the op, if it has one.
  static std::optional<EltwiseOp> own_op(const std::string& op, const Step& step) {
    if (op == "Exp") return EltwiseOp{EltwiseKind::kExp};
    if (op == "Log") return EltwiseOp{EltwiseKind::kLog};
    if (op == "Sigmoid") return EltwiseOp{EltwiseKind::kSigmoid};
    if (op == "Softplus") return EltwiseOp{EltwiseKind::kSoftplus};
    if (op == "Tanh") return EltwiseOp{EltwiseKind::kTanh};
    if (op == "Elu") return EltwiseOp{EltwiseKind::kElu, step.alpha};
    if (op == "QuickGelu") return EltwiseOp{EltwiseKind::kQuickGelu, step.alpha};
    if (op == "Relu") return EltwiseOp{EltwiseKind::kRelu};
    if (op == "LeakyRelu") return EltwiseOp{EltwiseKind::kLeakyRelu, step.alpha};
    if (op == "HardSigmoid") return EltwiseOp{EltwiseKind::kHardSigmoid, step.alpha, step.beta};
    if (step.alg == algorithm::eltwise_gelu_erf) return EltwiseOp{EltwiseKind::kGeluErf};
    if (step.alg == algorithm::eltwise_gelu_tanh) return EltwiseOp{EltwiseKind::kGeluTanh};
    return std::nullopt;
  }

  void run_own(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Tensor* bias) const {
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, x.shape());
    eltwise_rows(*own_, x.data<float>(), bias ? bias->data<float>() : nullptr, bias ? bias->numel() : 0,
                 y.data<float>(), x.numel(), ctx.threads());
    ctx.set_path(eltwise_path());
    // A Relu (or LeakyRelu) of a tensor whose magnitudes are known bounds its output: the next
    // convolution need not read it (conv_activation.h, KnownMagnitudes).
    if (own_->kind == EltwiseKind::kRelu) pass_bound(x, y);
    if (own_->kind == EltwiseKind::kLeakyRelu)
      pass_bound(x, y, std::max(1.0, std::fabs(double{own_->alpha})));
  }

  rt::KernelPtr reference_;
  std::optional<EltwiseOp> own_;
  Step main_, post_;
  bool bias_input_ = false;
  mutable std::mutex mu_;
  mutable std::map<Key, Entry> cache_;
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_eltwise) {
  using tessera::cpu::dnnl_kernel;
  using tessera::cpu::DnnlEltwise;
  for (const char* op : {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Abs", "Elu",
                         "Softplus", "HardSwish", "HardSigmoid", "Gelu"})
    reg.add(dnnl_kernel<DnnlEltwise>(op));
  for (const char* op : {"Gelu", "FastGelu", "QuickGelu"})
    reg.add(dnnl_kernel<DnnlEltwise>(op, "com.microsoft"));
}
