// The CUDA backend's elementwise kernels. Each declares, from the node's inferred
// types, what it takes (float32, float16, bfloat16 tensors of one element type), so the session places
// the node on the GPU only when every run can run there.
#include <fmt/format.h>

#include <array>

#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernel_util.h"
#include "runtime/broadcast.h"

namespace tessera::cuda {

namespace {

class UnaryKernel : public rt::OpKernel {
 public:
  explicit UnaryKernel(UnaryOp op) : op_(op) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    auto t = elem_type(x.dtype());
    if (!t) ctx.fail(fmt::format("the CUDA kernel does not take {}", ir::dtype_name(x.dtype())));
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
    launch_unary(op_, *t, x.raw(), y.raw(), x.numel(), native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  UnaryOp op_;
};

class BinaryKernel : public rt::OpKernel {
 public:
  explicit BinaryKernel(BinaryOp op) : op_(op) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& a = ctx.input(0);
    const rt::Tensor& b = ctx.input(1);
    auto t = elem_type(a.dtype());
    if (!t || b.dtype() != a.dtype())
      ctx.fail(fmt::format("the CUDA kernel takes two tensors of one float type, got {} and {}",
                           ir::dtype_name(a.dtype()), ir::dtype_name(b.dtype())));
    rt::Shape out = rt::broadcast_shapes(a.shape(), b.shape());
    if (out.size() > static_cast<size_t>(kMaxRank))
      ctx.fail(fmt::format("the CUDA kernel broadcasts up to rank {}, got {}", kMaxRank, out.size()));
    rt::Tensor& y = ctx.output_uninitialized(0, a.dtype(), out);
    BroadcastShape s;
    bool same = a.shape() == out && b.shape() == out;
    if (!same) {
      s.rank = static_cast<int>(out.size());
      auto sa = rt::broadcast_strides(a.shape(), out), sb = rt::broadcast_strides(b.shape(), out);
      for (int d = 0; d < s.rank; ++d) {
        s.out_dims[d] = out[static_cast<size_t>(d)];
        s.a_strides[d] = sa[static_cast<size_t>(d)];
        s.b_strides[d] = sb[static_cast<size_t>(d)];
      }
    }
    launch_binary(op_, *t, a.raw(), b.raw(), y.raw(), y.numel(), same, s, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  BinaryOp op_;
};

}  // namespace

void register_math_kernels(KernelTable& t);               // elementwise_math_kernels.cpp
void register_fused_elementwise_kernels(KernelTable& t);  // fused_elementwise_kernels.cpp

namespace {

class ModKernel : public BinaryKernel {
 public:
  explicit ModKernel(const rt::KernelInfo& info) : BinaryKernel(op_of(info)) {}

 private:
  static BinaryOp op_of(const rt::KernelInfo& info) {
    const int64_t fmod = info.get_int("fmod", 0);
    if (fmod != 0 && fmod != 1)
      throw rt::KernelError(fmt::format("Mod: attribute 'fmod' is {}; it must be 0 or 1", fmod));
    return fmod == 1 ? BinaryOp::kFmod : BinaryOp::kMod;
  }
};

// PRelu broadcasts the slope onto X only: Y has X's shape.
class PReluKernel : public BinaryKernel {
 public:
  PReluKernel() : BinaryKernel(BinaryOp::kPRelu) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Shape& x = ctx.input(0).shape();
    if (rt::broadcast_shapes(x, ctx.input(1).shape()) != x)
      ctx.fail(fmt::format("input slope {} does not broadcast to input X {}",
                           rt::shape_str(ctx.input(1).shape()), rt::shape_str(x)));
    BinaryKernel::compute(ctx);
  }
};

}  // namespace

void register_elementwise_kernels(KernelTable& reg) {
  constexpr std::array<std::pair<const char*, UnaryOp>, 10> kUnary{{{"Relu", UnaryOp::kRelu},
                                                                    {"Sigmoid", UnaryOp::kSigmoid},
                                                                    {"Tanh", UnaryOp::kTanh},
                                                                    {"Exp", UnaryOp::kExp},
                                                                    {"Log", UnaryOp::kLog},
                                                                    {"Neg", UnaryOp::kNeg},
                                                                    {"Abs", UnaryOp::kAbs},
                                                                    {"Sqrt", UnaryOp::kSqrt},
                                                                    {"Erf", UnaryOp::kErf},
                                                                    {"Reciprocal", UnaryOp::kReciprocal}}};
  for (auto [name, op] : kUnary)
    reg.add(cuda_def(
        name, [](const rt::KernelInfo& i) { return same_float_inputs(i, 1); },
        [op](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<UnaryKernel>(op); }));
  constexpr std::array<std::pair<const char*, BinaryOp>, 5> kBinary{{{"Add", BinaryOp::kAdd},
                                                                     {"Sub", BinaryOp::kSub},
                                                                     {"Mul", BinaryOp::kMul},
                                                                     {"Div", BinaryOp::kDiv},
                                                                     {"Pow", BinaryOp::kPow}}};
  // From version 7 on: before it, broadcasting was the `broadcast`/`axis` attributes' business.
  for (auto [name, op] : kBinary)
    reg.add(cuda_def(
        name, [](const rt::KernelInfo& i) { return same_float_inputs(i, 2); },
        [op](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<BinaryKernel>(op); }, 7));
  // Max and Min are variadic in ONNX; the two-input form is the common one.
  for (auto [name, op] : {std::pair{"Max", BinaryOp::kMax}, std::pair{"Min", BinaryOp::kMin}})
    reg.add(cuda_def(
        name, [](const rt::KernelInfo& i) { return same_float_inputs(i, 2); },
        [op](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<BinaryKernel>(op); }, 8));
  reg.add(cuda_def(
      "PRelu", [](const rt::KernelInfo& i) { return same_float_inputs(i, 2); },
      [](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<PReluKernel>(); }, 7));
  reg.add(cuda_def(
      "Mod", [](const rt::KernelInfo& i) { return same_float_inputs(i, 2); },
      [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<ModKernel>(i); }, 10));
  register_math_kernels(reg);
  register_fused_elementwise_kernels(reg);
}

}  // namespace tessera::cuda
