#include "backends/cuda/matmul_lt.h"

#include <cublasLt.h>
#include <fmt/format.h>

#include "backends/cuda/cublas_handle.h"
#include "backends/cuda/cuda_check.h"

namespace tessera::cuda {

namespace {

// The most workspace a product may use; cuBLASLt's fastest kernels for large products want a few MiB.
constexpr size_t kMaxWorkspace = size_t{32} << 20;

cudaDataType_t cuda_type(rt::DataType t) {
  switch (t) {
    case rt::DataType::kFloat16:
      return CUDA_R_16F;
    case rt::DataType::kBFloat16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

template <class V>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const V& v) {
  check_cublas(cublasLtMatmulDescSetAttribute(d, a, &v, sizeof(v)), "cublasLtMatmulDescSetAttribute");
}

// The column-major layout of a row-major [rows, cols] matrix, batched.
cublasLtMatrixLayout_t layout(cudaDataType_t t, int64_t rows, int64_t cols, int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  check_cublas(cublasLtMatrixLayoutCreate(&l, t, static_cast<uint64_t>(cols), static_cast<uint64_t>(rows),
                                          std::max<int64_t>(cols, 1)),
               "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    check_cublas(
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
        "cublasLtMatrixLayoutSetAttribute");
    check_cublas(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                  sizeof(stride)),
                 "cublasLtMatrixLayoutSetAttribute");
  }
  return l;
}

}  // namespace

struct LtMatmul::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;  // cuBLAS's A (our B), B (our A), D
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  ~Plan() {
    if (desc) cublasLtMatmulDescDestroy(desc);
    for (auto l : {a, b, d})
      if (l) cublasLtMatrixLayoutDestroy(l);
  }
};

int common_alignment(std::initializer_list<const void*> ptrs) {
  int align = 256;
  for (const void* p : ptrs) {
    if (!p) continue;
    auto v = reinterpret_cast<uintptr_t>(p);
    while (align > 1 && v % static_cast<uintptr_t>(align) != 0) align /= 2;
  }
  return align;
}

LtMatmul::LtMatmul() = default;
LtMatmul::~LtMatmul() = default;

LtMatmul::Plan& LtMatmul::plan(const LtProblem& p, const void* bias) const {
  auto it = plans_.find(p);
  if (it != plans_.end()) return *it->second;
  auto pl = std::make_unique<Plan>();
  const cudaDataType_t t = cuda_type(p.dtype);
  const bool tf32 = p.tf32 && p.dtype == rt::DataType::kFloat;
  check_cublas(cublasLtMatmulDescCreate(&pl->desc, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                        CUDA_R_32F),
               "cublasLtMatmulDescCreate");
  // D^T = op(B)^T op(A)^T: cuBLAS's A is our B, transposed when ours is.
  cublasOperation_t opa = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N, opb = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  set_desc(pl->desc, CUBLASLT_MATMUL_DESC_TRANSA, opa);
  set_desc(pl->desc, CUBLASLT_MATMUL_DESC_TRANSB, opb);
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  if (p.epilogue == Epilogue::kBias) epi = CUBLASLT_EPILOGUE_BIAS;
  if (p.epilogue == Epilogue::kBiasRelu) epi = CUBLASLT_EPILOGUE_RELU_BIAS;
  if (p.epilogue == Epilogue::kRelu) epi = CUBLASLT_EPILOGUE_RELU;
  if (p.epilogue == Epilogue::kBiasGelu) epi = CUBLASLT_EPILOGUE_GELU_BIAS;
  set_desc(pl->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epi);
  // The heuristic reads the bias address for its alignment (the problem's `align` covers it too).
  if (epi != CUBLASLT_EPILOGUE_DEFAULT && epi != CUBLASLT_EPILOGUE_RELU)
    set_desc(pl->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  // Stored shapes of our operands (row-major): A [m, k] or [k, m], B [k, n] or [n, k].
  pl->a = layout(t, p.tb ? p.n : p.k, p.tb ? p.k : p.n, p.batch, p.stride_b);
  pl->b = layout(t, p.ta ? p.k : p.m, p.ta ? p.m : p.k, p.batch, p.stride_a);
  pl->d = layout(t, p.m, p.n, p.batch, p.stride_d);

  cublasLtMatmulPreference_t pref = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>,
                  decltype(&cublasLtMatmulPreferenceDestroy)>
      pref_owner(pref, &cublasLtMatmulPreferenceDestroy);
  size_t ws = kMaxWorkspace;
  uint32_t align = static_cast<uint32_t>(p.align);
  check_cublas(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
      "cublasLtMatmulPreferenceSetAttribute");
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    check_cublas(cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof(align)),
                 "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t results[4] = {};
  int found = 0;
  check_cublas(cublasLtMatmulAlgoGetHeuristic(cublaslt_handle(), pl->desc, pl->a, pl->b, pl->d, pl->d, pref,
                                              4, results, &found),
               "cublasLtMatmulAlgoGetHeuristic");
  int pick = -1;
  for (int i = 0; i < found && pick < 0; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS) pick = i;
  if (pick < 0) {
    throw rt::KernelError(
        fmt::format("cuBLASLt has no algorithm for a {}x{}x{} product (batch {})", p.m, p.n, p.k, p.batch));
  }
  pl->algo = results[pick].algo;
  pl->workspace = results[pick].workspaceSize;
  return *plans_.emplace(p, std::move(pl)).first->second;
}

void LtMatmul::run(rt::KernelContext& ctx, const LtProblem& p, const void* a, const void* b, void* d,
                   const void* bias, float alpha, float beta) const {
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
  std::lock_guard lock(mu_);  // the plan's descriptor takes this call's bias pointer
  Plan& pl = plan(p, bias);
  if (p.epilogue == Epilogue::kBias || p.epilogue == Epilogue::kBiasRelu || p.epilogue == Epilogue::kBiasGelu)
    set_desc(pl.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  rt::Tensor ws;
  void* ws_ptr = nullptr;
  if (pl.workspace > 0) {
    ws = ctx.scratch_uninitialized(rt::DataType::kUint8, {static_cast<int64_t>(pl.workspace)});
    ws_ptr = ws.raw();
  }
  check_cublas(cublasLtMatmul(cublaslt_handle(), pl.desc, &alpha, b, pl.a, a, pl.b, &beta, d, pl.d, d, pl.d,
                              &pl.algo, ws_ptr, pl.workspace, native(ctx.stream())),
               "cublasLtMatmul");
}

}  // namespace tessera::cuda
