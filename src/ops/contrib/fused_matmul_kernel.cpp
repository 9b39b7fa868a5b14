// Reference kernel of FusedMatMul (com.microsoft 1): Y = alpha * op(A) @ op(B) with numpy batching.
// As in ONNX Runtime, transBatchA moves A's first axis behind its batch axes ([d0, d1..dk, K] reads as
// [d1..dk, d0, K]) before transA swaps the last two axes; likewise for B. A 1-D operand is a vector
// (its trans flags do nothing), dropped from the result as MatMul drops it.
#include <fmt/format.h>

#include <numeric>

#include "ops/nn/gemm_kernel_util.h"
#include "runtime/broadcast.h"
#include "runtime/dispatch.h"
#include "runtime/kernel.h"

namespace {

using tessera::rt::KernelContext;
using tessera::rt::Shape;
using tessera::rt::Tensor;
namespace rt = tessera::rt;
namespace kernels = tessera::ops::kernels;

// x with its axes permuted (y.shape[k] = x.shape[perm[k]]), as a contiguous scratch tensor.
template <class T>
Tensor permuted(KernelContext& ctx, const Tensor& x, const std::vector<size_t>& perm) {
  size_t rank = perm.size();
  Shape out(rank);
  for (size_t k = 0; k < rank; ++k) out[k] = x.shape()[perm[k]];
  Tensor y = ctx.scratch(x.dtype(), out);
  std::vector<int64_t> stride(rank, 1);
  for (size_t k = rank - 1; k > 0; --k) stride[k - 1] = stride[k] * x.shape()[k];
  std::vector<int64_t> idx(rank, 0);
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t off = 0;
    for (size_t k = 0; k < rank; ++k) off += idx[k] * stride[perm[k]];
    dst[i] = src[off];
    for (size_t k = rank; k-- > 0;) {
      if (++idx[k] < out[k]) break;
      idx[k] = 0;
    }
  }
  return y;
}

// An operand as the product sees it: contiguous [batch..., rows, cols] data, `trans` telling gemm to read
// it transposed; `vector` when it was 1-D.
struct Operand {
  Tensor data;
  Shape batch;
  int64_t rows = 0, cols = 0;  // as stored
  bool trans = false, vector = false;
  int64_t m() const { return trans ? cols : rows; }  // rows of op(X)
  int64_t n() const { return trans ? rows : cols; }  // columns of op(X)
};

template <class T>
Operand operand(KernelContext& ctx, const Tensor& x, bool trans, bool trans_batch, bool is_a) {
  Operand o;
  if (x.rank() == 0) ctx.fail(fmt::format("input {} must have rank 1 or more", is_a ? "A" : "B"));
  if (x.rank() == 1) {
    o.data = x;
    o.vector = true;
    o.rows = is_a ? 1 : x.dim(0);  // A as a row [1, K], B as a column [K, 1]
    o.cols = is_a ? x.dim(0) : 1;
    return o;
  }
  o.data = x;
  if (trans_batch && x.rank() >= 3) {
    std::vector<size_t> perm;
    for (size_t k = 1; k + 1 < static_cast<size_t>(x.rank()); ++k) perm.push_back(k);
    perm.push_back(0);
    perm.push_back(static_cast<size_t>(x.rank()) - 1);
    o.data = permuted<T>(ctx, x, perm);
  }
  const Shape& s = o.data.shape();
  o.batch.assign(s.begin(), s.end() - 2);
  o.rows = s[s.size() - 2];
  o.cols = s.back();
  o.trans = trans;
  return o;
}

class FusedMatMul : public rt::OpKernel {
 public:
  explicit FusedMatMul(const rt::KernelInfo& info)
      : alpha_(info.get_float("alpha", 1.0f)),
        trans_a_(info.get_int("transA", 0) != 0),
        trans_b_(info.get_int("transB", 0) != 0),
        trans_batch_a_(info.get_int("transBatchA", 0) != 0),
        trans_batch_b_(info.get_int("transBatchB", 0) != 0) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype() != b.dtype()) ctx.fail("A and B have different element types");
    rt::dispatch(rt::FloatTypes{}, a.dtype(), "FusedMatMul", [&]<class T>() { run<T>(ctx, a, b); });
  }

 private:
  template <class T>
  void run(KernelContext& ctx, const Tensor& a_in, const Tensor& b_in) const {
    Operand a = operand<T>(ctx, a_in, trans_a_, trans_batch_a_, true);
    Operand b = operand<T>(ctx, b_in, trans_b_, trans_batch_b_, false);
    int64_t m = a.m(), k = a.n(), n = b.n();
    if (b.m() != k) {
      ctx.fail(fmt::format("inner dimensions differ: op(A) is {}x{} but op(B) is {}x{}", m, k, b.m(), n));
    }
    Shape batch = rt::broadcast_shapes(a.batch, b.batch);
    Shape out = batch;
    if (!a.vector) out.push_back(m);
    if (!b.vector) out.push_back(n);
    Tensor& y = ctx.output(0, a_in.dtype(), out);
    const T* pa = a.data.template data<T>();
    const T* pb = b.data.template data<T>();
    T* py = y.data<T>();
    int64_t a_size = a.rows * a.cols, b_size = b.rows * b.cols;
    rt::for_each_broadcast<2>(nullptr, batch, {&a.batch, &b.batch},
                              [&](int64_t i, const std::array<int64_t, 2>& off) {
                                gemm<T>(ctx, a.trans, b.trans, m, n, k, pa + off[0] * a_size, a.cols,
                                        pb + off[1] * b_size, b.cols, py + i * m * n);
                              });
  }

  template <class T>
  void gemm(KernelContext& ctx, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
            const T* b, int64_t ldb, T* c) const {
    if constexpr (std::is_same_v<T, float>) {
      kernels::gemm_f32(&ctx.threads(), ta, tb, m, n, k, alpha_, a, lda, b, ldb, 0.0f, c, n);
    } else {
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      kernels::gemm_generic<T, Acc>(&ctx.threads(), ta, tb, m, n, k, static_cast<Acc>(alpha_), a, lda, b, ldb,
                                    Acc(0), c, n);
    }
  }

  float alpha_;
  bool trans_a_, trans_b_, trans_batch_a_, trans_batch_b_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(contrib_fused_matmul) {
  reg.add(tessera::rt::KernelDef::of<FusedMatMul>("FusedMatMul").in_domain("com.microsoft"));
}
