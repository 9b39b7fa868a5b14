// Reference kernels of com.tessera MatMulBias and MatMulBiasGelu: the reference MatMul, then the bias
// added to every row (MatMulBiasGelu: and the tanh GELU, in double, rounded once to the output type).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "runtime/dispatch.h"
#include "runtime/inner_kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace ir = tessera::ir;

ir::Node matmul_node(const ir::Node& n) {
  ir::Node m = n;
  m.op_type = "MatMul";
  m.domain.clear();
  m.inputs.resize(2);
  return m;
}

// 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3); below 0 as x e / (1 + e),
// e = exp(2u), which underflows gradually instead of overflowing.
double gelu_tanh(double x) {
  const double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
  if (u >= 0) return x / (1.0 + std::exp(-2.0 * u));
  const double e = std::exp(2.0 * u);
  return x * e / (1.0 + e);
}

class MatMulBias : public rt::OpKernel {
 public:
  explicit MatMulBias(const rt::KernelInfo& info, bool gelu = false)
      : matmul_(matmul_node(info.node()), 13, 0), gelu_(gelu) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& a = ctx.input(0);
    const rt::Tensor& b = ctx.input(1);
    const rt::Tensor& bias = ctx.input(2);
    if (a.rank() < 2 || b.rank() != 2)
      ctx.fail(fmt::format("A {} must have rank 2 or more and B {} rank 2", rt::shape_str(a.shape()),
                           rt::shape_str(b.shape())));
    if (bias.dtype() != a.dtype() || bias.rank() != 1 || bias.dim(0) != b.dim(1))
      ctx.fail(fmt::format("bias must be {}[{}], got {}", ir::dtype_name(a.dtype()), b.dim(1),
                           rt::Value(bias).describe()));
    const rt::Value* ins[] = {ctx.input_slot(0), ctx.input_slot(1)};
    rt::Tensor y = matmul_.run(ctx, ins)[0].tensor();  // ours: the bias (and GELU) go in place
    const int64_t n = bias.dim(0), rows = n ? y.numel() / n : 0;
    rt::dispatch(
        rt::TypeList<float, double, rt::Float16, rt::BFloat16>{}, y.dtype(),
        gelu_ ? "MatMulBiasGelu" : "MatMulBias", [&]<class T>() {
          using C = rt::compute_t<T>;
          T* py = y.data<T>();
          const T* pb = bias.data<T>();
          auto row = [&](T* v) {
            for (int64_t j = 0; j < n; ++j)
              v[j] = gelu_ ? static_cast<T>(gelu_tanh(static_cast<double>(v[j]) + static_cast<double>(pb[j])))
                           : static_cast<T>(static_cast<C>(v[j]) + static_cast<C>(pb[j]));
          };
          ctx.threads().parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)),
                                     [&](int64_t r0, int64_t r1) {
                                       for (int64_t r = r0; r < r1; ++r) row(py + r * n);
                                     });
        });
    ctx.set_output(0, rt::Value(y));
  }

 private:
  rt::InnerKernel matmul_;
  bool gelu_;
};

class MatMulBiasGelu : public MatMulBias {
 public:
  explicit MatMulBiasGelu(const rt::KernelInfo& info) : MatMulBias(info, true) {}
};

}  // namespace

TESSERA_REGISTER_KERNELS(fused_matmul_bias) {
  reg.add(tessera::rt::KernelDef::of<MatMulBias>("MatMulBias").in_domain("com.tessera"));
  reg.add(tessera::rt::KernelDef::of<MatMulBiasGelu>("MatMulBiasGelu").in_domain("com.tessera"));
}
