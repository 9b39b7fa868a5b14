// Gemm (Y = alpha * A' * B' + beta * C) on oneDNN's matmul for float32: the linear layers that exporters
// write as Gemm (BERT's pooler, ViT's and ResNet's classifier heads). transA / transB are strides on the
// plain A and B; alpha is the output scale; C joins as a binary-add post-op broadcast from its [1|M, 1|N]
// shape. beta = 0 drops C. Other betas go to the reference kernel: wrapping the add as
// beta * (acc / beta + C) with two eltwise_linear post-ops gave wrong results on oneDNN 2.6 (and exporters
// write beta = 1). A constant B (the weights) is reordered once into the layout oneDNN
// prefers, as in dnnl_matmul_kernel.cpp. Other element types, C of rank > 2 or not broadcastable, and
// shapes oneDNN refuses go to the reference kernel, which reports the invalid ones.
//
// One row in A (a classifier head at batch 1) runs on Tessera's own matrix-vector product (gemv.h) on
// AVX-512 CPUs, reading B where it is; TESSERA_OWN_GEMV=off keeps it on oneDNN (to compare the two).
#include <map>
#include <mutex>

#include "backends/cpu/dnnl_common.h"
#include "backends/cpu/gemv.h"

namespace tessera::cpu {
namespace {

using dnnl::memory;

class DnnlGemm : public rt::OpKernel {
 public:
  explicit DnnlGemm(const rt::KernelInfo& info)
      : reference_(make_reference_kernel(info)),
        alpha_(info.get_float("alpha", 1.f)),
        beta_(info.get_float("beta", 1.f)),
        trans_a_(info.get_int("transA", 0) != 0),
        trans_b_(info.get_int("transB", 0) != 0) {}

  // Float A, B [and C] of ranks 2, 2 [and up to 2]; beta 0 or 1 (see the header comment).
  static bool supports(const rt::KernelInfo& info) {
    const float beta = info.get_float("beta", 1.f);
    const int64_t rc = info.has_input(2) ? inferred_rank(info, 2) : 0;
    return inputs_float(info, {0, 1, 2}) && inferred_rank(info, 0) == 2 && inferred_rank(info, 1) == 2 &&
           rc >= 0 && rc <= 2 && (beta == 0.f || beta == 1.f);
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& a = ctx.input(0);
    const rt::Tensor& b = ctx.input(1);
    const rt::Tensor* c = ctx.optional_input(2);
    bool ok = a.rank() == 2 && b.rank() == 2 && a.numel() > 0 && b.numel() > 0 &&
              a.dim(trans_a_ ? 0 : 1) == b.dim(trans_b_ ? 1 : 0);
    const int64_t m = ok ? a.dim(trans_a_ ? 1 : 0) : 0, n = ok ? b.dim(trans_b_ ? 0 : 1) : 0;
    rt::Shape c_shape;  // C as [cm, cn]; empty: no C term
    if (ok && c) {
      // C is checked even when beta = 0 drops it, as the reference kernel does (it reports a bad one).
      ok = c->rank() <= 2;
      int64_t cm = ok && c->rank() == 2 ? c->dim(0) : 1, cn = ok && c->rank() >= 1 ? c->dim(-1) : 1;
      ok = ok && (cm == 1 || cm == m) && (cn == 1 || cn == n);
      // beta other than 0 and 1: see the header comment.
      if (beta_ != 0.f) {
        ok = ok && beta_ == 1.f;
        c_shape = {cm, cn};
      }
    }
    if (!ok) return reference(ctx);
    if (m == 1 && gemv_wanted()) return run_gemv(ctx, a, b, c_shape.empty() ? nullptr : c, n);
    std::lock_guard lock(mu_);
    rt::Shape key = {a.dim(0), a.dim(1), b.dim(0), b.dim(1)};
    key.insert(key.end(), c_shape.begin(), c_shape.end());
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      try {
        it = cache_.emplace(key, make(a.shape(), b.shape(), c_shape, m, n)).first;
      } catch (const dnnl::error&) {
        return reference(ctx);
      }
    }
    Entry& e = it->second;
    ctx.set_path(e.pd.impl_info_str());
    set_dnnl_threads(ctx);
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    memory b_m(e.b_plain, eng, const_cast<void*>(b.raw()));
    if (e.pd.weights_desc() != e.b_plain) {
      b_m = e.weights.get(b, e.b_plain, e.pd.weights_desc(), strm);
    }
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, {m, n});
    memory a_m(e.a_md, eng, const_cast<void*>(a.raw()));
    memory y_m(e.c_md, eng, y.raw());
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, a_m}, {DNNL_ARG_WEIGHTS, b_m}, {DNNL_ARG_DST, y_m}};
    if (!c_shape.empty())
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(e.c_post_index) | DNNL_ARG_SRC_1,
                   memory(e.bias_md, eng, const_cast<void*>(c->raw())));
    e.prim.execute(strm, args);
    strm.wait();
  }

  size_t prepared_bytes() const override {
    std::lock_guard lock(mu_);
    return reordered_bytes(cache_);
  }

 private:
  struct Entry {
    dnnl::matmul prim;
    dnnl::matmul::primitive_desc pd;
    memory::desc a_md, b_plain, c_md, bias_md;
    int c_post_index = 0;
    ReorderedWeights weights;
  };

  static bool gemv_wanted() {
    static const bool on = env_switch("TESSERA_OWN_GEMV").value_or(true);
    return on && gemv_supported();
  }

  // A is one row ([1, K], or [K, 1] with transA: contiguous either way); C, when given, is [1|n] wide.
  void run_gemv(rt::KernelContext& ctx, const rt::Tensor& a, const rt::Tensor& b, const rt::Tensor* c,
                int64_t n) const {
    ctx.set_path("own gemv");
    GemvArgs g;
    g.x = a.data<float>();
    g.w = b.data<float>();
    g.k = a.numel();
    g.n = n;
    g.rows_are_outputs = trans_b_;
    g.alpha = alpha_;
    if (c) {
      g.c = c->data<float>();
      g.c_count = c->numel() == 1 ? 1 : n;
    }
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, {1, n});
    gemv(ctx.threads(), g, y.data<float>());
  }

  // The logical [rows, cols] view of a stored row-major 2-D tensor, transposed by strides.
  static memory::desc view(const rt::Shape& s, bool transposed) {
    if (transposed) return memory::desc({s[1], s[0]}, memory::data_type::f32, memory::dims{1, s[1]});
    return memory::desc({s[0], s[1]}, memory::data_type::f32, memory::dims{s[1], 1});
  }

  Entry make(const rt::Shape& as, const rt::Shape& bs, const rt::Shape& c_shape, int64_t m, int64_t n) const {
    Entry e;
    e.a_md = view(as, trans_a_);
    e.b_plain = view(bs, trans_b_);
    e.c_md = memory::desc({m, n}, memory::data_type::f32, memory::format_tag::ab);
    memory::desc b_any(e.b_plain.dims(), memory::data_type::f32, memory::format_tag::any);
    dnnl::primitive_attr attr;
    if (alpha_ != 1.f) attr.set_output_scales(0, {alpha_});
    if (!c_shape.empty()) {
      dnnl::post_ops ops;
      e.c_post_index = ops.len();
      e.bias_md = memory::desc({c_shape[0], c_shape[1]}, memory::data_type::f32, memory::format_tag::ab);
      ops.append_binary(dnnl::algorithm::binary_add, e.bias_md);
      attr.set_post_ops(ops);
    }
    e.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(e.a_md, b_any, e.c_md), attr, dnnl_engine());
    e.prim = dnnl::matmul(e.pd);
    return e;
  }

  void reference(rt::KernelContext& ctx) const {
    if (!reference_) ctx.fail("no reference Gemm kernel");
    reference_->compute(ctx);
  }

  rt::KernelPtr reference_;
  float alpha_, beta_;
  bool trans_a_, trans_b_;
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, Entry> cache_;
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_gemm) {
  reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::DnnlGemm>("Gemm"));
}
