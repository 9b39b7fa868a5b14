// The CUDA backend's kernels for MatMul, Gemm, com.tessera MatMulBias and com.microsoft FusedMatMul
// through cuBLASLt (matmul_lt.h), in float32, float16 and bfloat16. A batched MatMul whose B is one matrix
// folds the batch into A's rows (a linear layer over [B, S, K] is one [B*S, K] x [K, N] product); equal
// batches run as one strided batched product (attention's [B, H, S, D] x [B, H, D, S]); other broadcasts one
// product per entry.
#include <fmt/format.h>

#include <array>
#include <atomic>

#include "backends/cuda/cublas_handle.h"
#include "backends/cuda/gelu.h"
#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernel_util.h"
#include "backends/cuda/matmul_lt.h"
#include "backends/cuda/matmul_util.h"
#include "ops/layout/blocked.h"
#include "runtime/broadcast.h"

namespace tessera::cuda {

namespace {

void zero_fill(rt::KernelContext& ctx, rt::Tensor& y) {
  if (y.numel() == 0) return;
  check(cudaMemsetAsync(y.raw(), 0, y.nbytes(), native(ctx.stream())), "cudaMemsetAsync");
}

const char* byte_ptr(const void* p, int64_t elements, size_t esize) {
  return static_cast<const char*>(p) + elements * static_cast<int64_t>(esize);
}

// How a product reads its operands: FusedMatMul's transposes of the last two axes and scale.
struct MatMulForm {
  bool ta = false, tb = false;
  float alpha = 1.f;
};

// y = alpha * op(A) x op(B) (+ bias on every row) with numpy.matmul's shapes: 1-D operands (vectors,
// which no transpose changes) and broadcast batch axes.
rt::Tensor& matmul(rt::KernelContext& ctx, const LtMatmul& lt, const rt::Tensor* bias, Epilogue epi,
                   bool tf32, MatMulForm f = {}) {
  const rt::Tensor& a = ctx.input(0);
  const rt::Tensor& b = ctx.input(1);
  if (!elem_type(a.dtype()) || b.dtype() != a.dtype() || (bias && bias->dtype() != a.dtype()))
    ctx.fail(fmt::format("inputs A and B must have one float type, got {} and {}", ir::dtype_name(a.dtype()),
                         ir::dtype_name(b.dtype())));
  if (a.rank() == 0 || b.rank() == 0) ctx.fail("inputs A and B must have rank 1 or more; one is a scalar");
  rt::Shape sa = a.rank() == 1 ? rt::Shape{1, a.dim(0)} : a.shape();
  rt::Shape sb = b.rank() == 1 ? rt::Shape{b.dim(0), 1} : b.shape();
  const bool ta = f.ta && a.rank() >= 2, tb = f.tb && b.rank() >= 2;
  const int64_t ra = sa[sa.size() - 2], ca = sa.back(), rb = sb[sb.size() - 2], cb = sb.back();
  const int64_t m = ta ? ca : ra, k = ta ? ra : ca, kb = tb ? cb : rb, n = tb ? rb : cb;
  if (kb != k)
    ctx.fail(fmt::format("input A {} gives K = {} but input B {} gives K = {}; they must match",
                         rt::shape_str(a.shape()), k, rt::shape_str(b.shape()), kb));
  if (bias && (bias->rank() != 1 || bias->dim(0) != n))
    ctx.fail(fmt::format("input bias has shape {}; it must be [{}]", rt::shape_str(bias->shape()), n));
  rt::Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  rt::Shape batch = rt::broadcast_shapes(ba, bb);
  rt::Shape out = batch;
  if (a.rank() >= 2) out.push_back(m);
  if (b.rank() >= 2) out.push_back(n);
  rt::Tensor& y = ctx.output_uninitialized(0, a.dtype(), out);
  if (y.numel() == 0) return y;
  if (k == 0 && !bias) {
    zero_fill(ctx, y);
    return y;
  }
  if (k == 0) ctx.fail("a bias over an empty product (K = 0) is not supported on the GPU");
  const int64_t count = rt::shape_numel(batch), na = rt::shape_numel(ba), nb = rt::shape_numel(bb);
  const size_t es = rt::dtype_bytes(a.dtype(), 1);
  const void* bp = bias ? bias->raw() : nullptr;
  LtProblem p{.dtype = a.dtype(), .ta = ta, .tb = tb, .m = m, .n = n, .k = k, .epilogue = epi, .tf32 = tf32};
  if (nb == 1 && !ta) {  // B one matrix: A's batch folds into its rows
    p.m = m * count;
    p.align = common_alignment({a.raw(), b.raw(), y.raw(), bp});
    lt.run(ctx, p, a.raw(), b.raw(), y.raw(), bp, f.alpha, 0.f);
    return y;
  }
  if (na == count && nb == count) {
    p.batch = count;
    p.stride_a = m * k;
    p.stride_b = k * n;
    p.stride_d = m * n;
    p.align = common_alignment({a.raw(), b.raw(), y.raw(), bp, byte_ptr(a.raw(), m * k, es),
                                byte_ptr(b.raw(), k * n, es), byte_ptr(y.raw(), m * n, es)});
    lt.run(ctx, p, a.raw(), b.raw(), y.raw(), bp, f.alpha, 0.f);
    return y;
  }
  // Any other broadcast: one product per batch entry at its operands' offsets.
  std::vector<int64_t> stra = rt::broadcast_strides(ba, batch), strb = rt::broadcast_strides(bb, batch);
  std::vector<int64_t> idx(batch.size(), 0);
  std::vector<std::array<const char*, 3>> ptrs;
  int align = common_alignment({bp});
  for (int64_t i = 0; i < count; ++i) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      oa += idx[d] * stra[d];
      ob += idx[d] * strb[d];
    }
    ptrs.push_back({byte_ptr(a.raw(), oa * m * k, es), byte_ptr(b.raw(), ob * k * n, es),
                    byte_ptr(y.raw(), i * m * n, es)});
    align = std::min(align, common_alignment({ptrs.back()[0], ptrs.back()[1], ptrs.back()[2]}));
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  p.align = align;
  for (const auto& q : ptrs) lt.run(ctx, p, q[0], q[1], const_cast<char*>(q[2]), bp, f.alpha, 0.f);
  return y;
}

// cuBLASLt's handle is made when the session is built rather than in a run, which a CUDA graph may be
// capturing.
class LtKernel : public rt::OpKernel {
 public:
  explicit LtKernel(bool tf32) : tf32_(tf32) {}
  void prepare(rt::PrepareContext& ctx) override {
    (void)ctx;
    (void)cublaslt_handle();
  }

 protected:
  bool tf32_;  // float32 products may use TF32 (the session's precision is kTf32)
  LtMatmul lt_;
};

class MatMulKernel : public LtKernel {
 public:
  using LtKernel::LtKernel;
  void compute(rt::KernelContext& ctx) const override {
    matmul(ctx, lt_, nullptr, Epilogue::kNone, tf32_);
    ctx.set_path("cuBLASLt");
  }
};

class MatMulBiasKernel : public LtKernel {
 public:
  using LtKernel::LtKernel;
  void compute(rt::KernelContext& ctx) const override {
    matmul(ctx, lt_, &ctx.input(2), Epilogue::kBias, tf32_);
    ctx.set_path("cuBLASLt bias epilogue");
  }
};

// com.tessera MatMulBiasGelu: bias and tanh GELU in cuBLASLt's GELU_BIAS epilogue for float16 and
// bfloat16 products whose rows are whole 16-byte vectors (N and K multiples of 8 elements, 16-byte aligned
// operands). Measured on an H100 (2026-11-25): with N = 200 the epilogue stayed within a quarter of the
// test's tolerance (2 float16 ulp + 2^-14), with N = 77 (2-byte alignment, other kernels) its GELU was
// off by up to 13 float16 ulps at small x (0.01321 for 0.01330 at x = 0.026). Float32 (whose GELU must be
// exact to float32), those unaligned products and any product without a GELU_BIAS algorithm take the bias
// epilogue and then the tanh GELU kernel in place (gelu.h).
class MatMulBiasGeluKernel : public LtKernel {
 public:
  using LtKernel::LtKernel;
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor &a = ctx.input(0), &b = ctx.input(1), &bias = ctx.input(2);
    const rt::DataType t = a.dtype();
    const int64_t es = static_cast<int64_t>(rt::dtype_bytes(t, 1));
    const bool whole_vectors = b.rank() == 2 && (b.dim(0) * es) % 16 == 0 && (b.dim(1) * es) % 16 == 0 &&
                               common_alignment({a.raw(), b.raw(), bias.raw()}) >= 16;
    if (t != rt::DataType::kFloat && whole_vectors && !no_epilogue_.load(std::memory_order_relaxed)) {
      try {
        matmul(ctx, lt_, &ctx.input(2), Epilogue::kBiasGelu, tf32_);
        ctx.set_path("cuBLASLt GELU_BIAS epilogue");
        return;
      } catch (const rt::KernelError&) {  // no algorithm: nothing was launched
        no_epilogue_.store(true, std::memory_order_relaxed);
      }
    }
    rt::Tensor& y = matmul(ctx, lt_, &ctx.input(2), Epilogue::kBias, tf32_);
    launch_gelu(GeluForm::kTanh, *elem_type(y.dtype()), y.raw(), nullptr, 0, y.raw(), y.numel(), 0.f,
                native(ctx.stream()));
    check_launch(ctx);
    ctx.set_path("cuBLASLt bias epilogue + tanh GELU");
  }

 private:
  mutable std::atomic<bool> no_epilogue_{false};
};

// com.microsoft FusedMatMul without batch transposes (declined in `supports`).
class FusedMatMulKernel : public LtKernel {
 public:
  FusedMatMulKernel(const rt::KernelInfo& info, bool tf32)
      : LtKernel(tf32),
        form_{info.get_int("transA", 0) != 0, info.get_int("transB", 0) != 0, info.get_float("alpha", 1.f)} {}
  void compute(rt::KernelContext& ctx) const override {
    matmul(ctx, lt_, nullptr, Epilogue::kNone, tf32_, form_);
    ctx.set_path("cuBLASLt");
  }

 private:
  MatMulForm form_;
};

class GemmKernel : public LtKernel {
 public:
  GemmKernel(const rt::KernelInfo& info, bool tf32)
      : LtKernel(tf32),
        alpha_(info.get_float("alpha", 1.f)),
        beta_(info.get_float("beta", 1.f)),
        ta_(info.get_int("transA", 0) != 0),
        tb_(info.get_int("transB", 0) != 0) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& a = ctx.input(0);
    const rt::Tensor& b = ctx.input(1);
    const rt::Tensor* c = ctx.optional_input(2);
    if (a.rank() != 2) ctx.fail("input A has shape " + rt::shape_str(a.shape()) + "; it must be 2-D");
    if (b.rank() != 2) ctx.fail("input B has shape " + rt::shape_str(b.shape()) + "; it must be 2-D");
    auto t = elem_type(a.dtype());
    if (!t || b.dtype() != a.dtype() || (c && c->dtype() != a.dtype()))
      ctx.fail("inputs A, B and C must have the same float element type");
    const int64_t m = a.dim(ta_ ? 1 : 0), k = a.dim(ta_ ? 0 : 1);
    const int64_t kb = b.dim(tb_ ? 1 : 0), n = b.dim(tb_ ? 0 : 1);
    if (k != kb)
      ctx.fail(fmt::format("A{} {} gives K = {} but B{} {} gives K = {}; they must match", ta_ ? "'" : "",
                           rt::shape_str(a.shape()), k, tb_ ? "'" : "", rt::shape_str(b.shape()), kb));
    rt::Tensor& y = ctx.output_uninitialized(0, a.dtype(), {m, n});
    if (y.numel() == 0) return;
    cudaStream_t s = native(ctx.stream());
    float beta = c ? beta_ : 0.f;
    Epilogue epi = Epilogue::kNone;
    if (c) {
      if (c->rank() > 2) ctx.fail(fmt::format("input C has rank {}; it must be at most 2", c->rank()));
      const int64_t cm = c->rank() == 2 ? c->dim(0) : 1, cn = c->rank() >= 1 ? c->dim(-1) : 1;
      if ((cm != 1 && cm != m) || (cn != 1 && cn != n))
        ctx.fail(fmt::format("input C has shape {}, which does not broadcast to the result [{},{}]",
                             rt::shape_str(c->shape()), m, n));
      if (k == 0) {  // no product: Y = beta * C
        launch_broadcast_matrix(*t, c->raw(), y.raw(), m, n, cm == 1 ? 0 : cn, cn == 1 ? 0 : 1, beta, s);
        return check_launch(ctx);
      }
      if (beta == 1.f && cm == 1 && cn == n) {  // a bias row: added in the epilogue
        epi = Epilogue::kBias;
        beta = 0.f;
      } else if (beta != 0.f) {  // C broadcast into Y, which the product then adds to
        launch_broadcast_matrix(*t, c->raw(), y.raw(), m, n, cm == 1 ? 0 : cn, cn == 1 ? 0 : 1, 1.f, s);
        check_launch(ctx);
      }
    }
    if (k == 0) return zero_fill(ctx, y);
    const void* bias = epi == Epilogue::kBias ? c->raw() : nullptr;
    LtProblem p{
        .dtype = a.dtype(), .ta = ta_, .tb = tb_, .m = m, .n = n, .k = k, .epilogue = epi, .tf32 = tf32_};
    p.align = common_alignment({a.raw(), b.raw(), y.raw(), bias});
    lt_.run(ctx, p, a.raw(), b.raw(), y.raw(), bias, alpha_, beta);
    ctx.set_path("cuBLASLt");
  }

 private:
  float alpha_, beta_;
  bool ta_, tb_;
};

bool float_inputs(const rt::KernelInfo& info, size_t min, size_t max) {
  const size_t count = info.input_count();
  if (count < min || count > max || !all_tensors(info) || !elem_type(info.input_dtype(0))) return false;
  for (size_t i = 0; i < count; ++i)
    if (info.has_input(i) && info.input_dtype(i) != info.input_dtype(0)) return false;
  return info.has_input(0) && info.has_input(1);
}

}  // namespace

void register_matmul_kernels(KernelTable& t) {
  const bool tf32 = t.precision == passes::Precision::kTf32;
  t.add(cuda_def(
      "MatMul", [](const rt::KernelInfo& i) { return float_inputs(i, 2, 2); },
      [tf32](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<MatMulKernel>(tf32); }));
  // From version 7: before it, C's broadcasting was the `broadcast` attribute's business.
  t.add(cuda_def(
      "Gemm", [](const rt::KernelInfo& i) { return float_inputs(i, 2, 3); },
      [tf32](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<GemmKernel>(i, tf32); }, 7));
  t.add(
      cuda_def(
          "MatMulBias", [](const rt::KernelInfo& i) { return float_inputs(i, 3, 3) && i.has_input(2); },
          [tf32](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<MatMulBiasKernel>(tf32); })
          .in_domain(ops::layout::kDomain));
  t.add(cuda_def(
            "MatMulBiasGelu", [](const rt::KernelInfo& i) { return float_inputs(i, 3, 3) && i.has_input(2); },
            [tf32](const rt::KernelInfo&) -> rt::KernelPtr {
              return std::make_unique<MatMulBiasGeluKernel>(tf32);
            })
            .in_domain(ops::layout::kDomain));
  t.add(cuda_def(
            "FusedMatMul",
            [](const rt::KernelInfo& i) {
              return float_inputs(i, 2, 2) && i.get_int("transBatchA", 0) == 0 &&
                     i.get_int("transBatchB", 0) == 0;
            },
            [tf32](const rt::KernelInfo& i) -> rt::KernelPtr {
              return std::make_unique<FusedMatMulKernel>(i, tf32);
            })
            .in_domain("com.microsoft"));
}

}  // namespace tessera::cuda
