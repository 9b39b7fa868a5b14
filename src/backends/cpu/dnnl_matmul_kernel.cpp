// MatMul (and com.microsoft FusedMatMul: alpha, transA, transB; com.tessera MatMulBias: a bias row added
// in the product's epilogue) on oneDNN for float32. A 2-D right operand
// (the weights of a linear layer, nearly always an initializer) is reordered once into the layout oneDNN
// prefers, and the left operand's leading dimensions fold into its rows; batched products (attention's Q*K^T)
// use plain layouts with oneDNN's batch broadcasting. 1-D operands and other element types go to the
// reference kernel.
//
// Products with 2-D weights (no transposes, alpha 1) run on Tessera's own GEMM (gemm_f32.h) on AVX-512
// CPUs instead, with the weights packed once per tensor; TESSERA_OWN_GEMM=off keeps them on oneDNN (to
// compare the two). When the weights are an initializer and inference says A is float, they are packed
// when the session is built and the original is released (a weight held once, in the GEMM's panels).
#include <fmt/format.h>

#include <map>
#include <mutex>
#include <unordered_map>

#include "backends/cpu/dnnl_common.h"
#include "backends/cpu/gemm_f32.h"

namespace tessera::cpu {
namespace {

using dnnl::memory;

class DnnlMatMul : public rt::OpKernel {
 public:
  explicit DnnlMatMul(const rt::KernelInfo& info) : reference_(make_reference_kernel(info)) {
    bias_ = info.op_type() == "MatMulBias";
    a_float_ = info.input_dtype(0) == ir::DataType::kFloat;
    if (info.op_type() != "FusedMatMul") return;
    alpha_ = info.get_float("alpha", 1.0f);
    trans_a_ = info.get_int("transA", 0) != 0;
    trans_b_ = info.get_int("transB", 0) != 0;
    // Batch transposes move the batch axis into the matrix; the reference kernel handles them.
    supported_ = info.get_int("transBatchA", 0) == 0 && info.get_int("transBatchB", 0) == 0;
  }

  // Packs constant weights now, for the own GEMM, when every run will take that path.
  void prepare(rt::PrepareContext& ctx) override {
    const rt::Tensor* b = ctx.constant(1);
    if (!b || !a_float_ || !supported_ || b->dtype() != ir::DataType::kFloat || b->numel() == 0 ||
        !own_gemm_fits(*b))
      return;
    packed_ = pack_b(static_cast<const float*>(b->raw()), b->dim(0), b->dim(1));
    prepared_ = true;
    ctx.release(1);
  }

  // Float operands (and MatMulBias's bias) of known ranks 2 or more; FusedMatMul without batch
  // transposes.
  static bool supports(const rt::KernelInfo& info) {
    return inputs_float(info, {0, 1, 2}) && inferred_rank(info, 0) >= 2 && inferred_rank(info, 1) >= 2 &&
           DnnlMatMul(info).supported_;
  }

  void compute(rt::KernelContext& ctx) const override {
    if (prepared_) return run_prepared(ctx);
    const rt::Tensor& a = ctx.input(0);
    const rt::Tensor& b = ctx.input(1);
    if (a.rank() < 2 || b.rank() < 2 || a.dim(trans_a_ ? -2 : -1) != b.dim(trans_b_ ? -1 : -2) ||
        a.numel() == 0 || b.numel() == 0 || (bias_ && !bias_fits(ctx, b))) {
      if (!reference_) ctx.fail("no reference MatMul kernel");
      return reference_->compute(ctx);
    }
    std::lock_guard lock(mu_);
    if (own_gemm_fits(b)) return run_own(ctx, a, b);
    Entry* e = entry(a, b);
    if (!e) return reference_->compute(ctx);
    ctx.set_path(e->pd.impl_info_str());
    set_dnnl_threads(ctx);
    run(ctx, *e, a, b);
  }

  size_t prepared_bytes() const override {
    std::lock_guard lock(mu_);
    return reordered_bytes(cache_) + packed_.data.size() * sizeof(float);
  }

 private:
  struct Entry {
    dnnl::matmul prim;
    dnnl::matmul::primitive_desc pd;
    memory::desc a_md, b_plain, c_md;
    rt::Shape out_shape;
    bool packed_weights = false;
    ReorderedWeights weights;
  };

  // Whether the own GEMM takes the product: [.., M, K] x [K, N] with A's leading dimensions folded into
  // M, as the packed-weights path of oneDNN below. TESSERA_OWN_GEMM=off leaves it to oneDNN (read once).
  bool own_gemm_fits(const rt::Tensor& b) const {
    static const bool on = env_switch("TESSERA_OWN_GEMM").value_or(true);
    return on && b.rank() == 2 && !trans_a_ && !trans_b_ && alpha_ == 1.0f && gemm_supported();
  }

  // The own GEMM; B is packed once and again only when its storage changes (as ReorderedWeights does:
  // the tensor is held, so the same storage means the same values). Called with mu_ held.
  void run_own(rt::KernelContext& ctx, const rt::Tensor& a, const rt::Tensor& b) const {
    ctx.set_path("own gemm");
    const int64_t k = b.dim(0), n = b.dim(1), m = a.numel() / k;
    if (!packed_source_.storage() || packed_source_.storage() != b.storage() || packed_.k != k ||
        packed_.n != n) {
      packed_ = pack_b(static_cast<const float*>(b.raw()), k, n);
      packed_source_ = b;
    }
    rt::Shape out_shape = a.shape();
    out_shape.back() = n;
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, out_shape);
    const float* bias = bias_ ? static_cast<const float*>(ctx.input(2).raw()) : nullptr;
    gemm_f32(ctx.threads(), static_cast<const float*>(a.raw()), m, k, packed_, bias,
             static_cast<float*>(y.raw()), n);
  }

  // The own GEMM on weights packed by prepare(): the panels are read only, so no lock is needed.
  void run_prepared(rt::KernelContext& ctx) const {
    const rt::Tensor& a = ctx.input(0);
    const int64_t k = packed_.k, n = packed_.n;
    if (a.dtype() != ir::DataType::kFloat || a.rank() < 2 || a.dim(-1) != k)
      ctx.fail(fmt::format("input A {} does not fit the weights [{}, {}]", rt::Value(a).describe(), k, n));
    const rt::Tensor* bias = bias_ ? &ctx.input(2) : nullptr;
    if (bias && (bias->dtype() != ir::DataType::kFloat || bias->numel() != n))
      ctx.fail(fmt::format("bias must be float[{}], got {}", n, rt::Value(*bias).describe()));
    rt::Shape out_shape = a.shape();
    out_shape.back() = n;
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, out_shape);
    ctx.set_path("own gemm");
    const int64_t m = a.numel() / k;
    if (m == 0) return;
    gemm_f32(ctx.threads(), static_cast<const float*>(a.raw()), m, k, packed_,
             bias ? static_cast<const float*>(bias->raw()) : nullptr, static_cast<float*>(y.raw()), n);
  }

  // MatMulBias on oneDNN: a 2-D B and a float bias of B's column count (else the reference kernel runs,
  // and reports what is wrong).
  static bool bias_fits(const rt::KernelContext& ctx, const rt::Tensor& b) {
    const rt::Tensor* bias = ctx.optional_input(2);
    return b.rank() == 2 && bias && bias->rank() == 1 && bias->dim(0) == b.dim(1);
  }

  // The logical [.., rows, cols] view of a stored row-major tensor, transposed in place by strides.
  static memory::desc view(const rt::Shape& stored, bool transposed) {
    memory::dims dims(stored.begin(), stored.end()), strides(stored.size());
    int64_t st = 1;
    for (size_t i = stored.size(); i-- > 0;) {
      strides[i] = st;
      st *= stored[i];
    }
    if (transposed) {
      std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
      std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
    }
    return memory::desc(dims, memory::data_type::f32, strides);
  }

  Entry* entry(const rt::Tensor& a, const rt::Tensor& b) const {
    rt::Shape key = a.shape();
    key.push_back(-1);
    key.insert(key.end(), b.shape().begin(), b.shape().end());
    auto it = cache_.find(key);
    if (it != cache_.end()) return &it->second;
    Entry e;
    memory::dims cd;
    if (b.rank() == 2 && !trans_a_) {
      // [.., M, K] x [K, N]: rows of every batch in one product.
      int64_t rows = a.numel() / a.dim(-1);
      e.a_md = view({rows, a.dim(-1)}, false);
      e.b_plain = view(b.shape(), trans_b_);
      int64_t n = trans_b_ ? b.dim(0) : b.dim(1);
      cd = {rows, n};
      e.out_shape = a.shape();
      e.out_shape.back() = n;
      e.packed_weights = true;
    } else {
      size_t rank = std::max(a.shape().size(), b.shape().size());
      rt::Shape as(rank - a.shape().size(), 1), bs(rank - b.shape().size(), 1);
      as.insert(as.end(), a.shape().begin(), a.shape().end());
      bs.insert(bs.end(), b.shape().begin(), b.shape().end());
      e.a_md = view(as, trans_a_);
      e.b_plain = view(bs, trans_b_);
      if (trans_a_) std::swap(as[rank - 1], as[rank - 2]);
      if (trans_b_) std::swap(bs[rank - 1], bs[rank - 2]);
      rt::Shape cs(rank);
      for (size_t i = 0; i + 2 < rank; ++i) {
        if (as[i] != bs[i] && as[i] != 1 && bs[i] != 1) return nullptr;  // the reference reports it
        cs[i] = std::max(as[i], bs[i]);
      }
      cs[rank - 2] = as[rank - 2];
      cs[rank - 1] = bs[rank - 1];
      if (rank > 6) return nullptr;
      cd = to_dims(cs);
      e.out_shape = cs;
    }
    e.c_md = memory::desc(cd, memory::data_type::f32, plain_tag(cd.size()));
    memory::desc b_md = e.packed_weights
                            ? memory::desc(e.b_plain.dims(), memory::data_type::f32, memory::format_tag::any)
                            : e.b_plain;
    try {
      dnnl::primitive_attr attr;
      if (alpha_ != 1.0f) attr.set_output_scales(0, {alpha_});
      auto desc =
          bias_ ? dnnl::matmul::desc(
                      e.a_md, b_md,
                      memory::desc({1, cd.back()}, memory::data_type::f32, memory::format_tag::ab), e.c_md)
                : dnnl::matmul::desc(e.a_md, b_md, e.c_md);
      e.pd = dnnl::matmul::primitive_desc(desc, attr, dnnl_engine());
      e.prim = dnnl::matmul(e.pd);
    } catch (const dnnl::error&) {
      return nullptr;
    }
    return &cache_.emplace(key, std::move(e)).first->second;
  }

  void run(rt::KernelContext& ctx, Entry& e, const rt::Tensor& a, const rt::Tensor& b) const {
    dnnl::engine& eng = dnnl_engine();
    dnnl::stream strm(eng);
    memory b_m(e.b_plain, eng, const_cast<void*>(b.raw()));
    if (e.packed_weights && e.pd.weights_desc() != e.b_plain) {
      b_m = e.weights.get(b, e.b_plain, e.pd.weights_desc(), strm);
    }
    rt::Tensor& y = ctx.output_uninitialized(0, ir::DataType::kFloat, e.out_shape);
    memory a_m(e.a_md, eng, const_cast<void*>(a.raw()));
    memory c_m(e.c_md, eng, y.raw());
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, a_m}, {DNNL_ARG_WEIGHTS, b_m}, {DNNL_ARG_DST, c_m}};
    if (bias_)
      args.emplace(DNNL_ARG_BIAS, memory(e.pd.bias_desc(), eng, const_cast<void*>(ctx.input(2).raw())));
    e.prim.execute(strm, args);
    strm.wait();
  }

  rt::KernelPtr reference_;
  float alpha_ = 1.0f;
  bool trans_a_ = false, trans_b_ = false, supported_ = true, bias_ = false;
  bool a_float_ = false;   // inference says A is float
  bool prepared_ = false;  // packed_ holds the constant weights, packed at session build
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, Entry> cache_;
  mutable PackedB packed_;            // the own GEMM's weights ...
  mutable rt::Tensor packed_source_;  // ... packed from this tensor
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_matmul) {
  reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::DnnlMatMul>("MatMul"));
  reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::DnnlMatMul>("FusedMatMul", "com.microsoft"));
  reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::DnnlMatMul>("MatMulBias", "com.tessera"));
}
