// The CUDA backend's activations with attributes, trigonometric and rounding functions, Clip and the
// variadic Sum/Mean/Max/Min (float32, float16, bfloat16). Attributes are read once, when the session is
// built; Clip's bounds (inputs from opset 11) are read on the host.
#include <fmt/format.h>

#include <array>
#include <cmath>

#include "backends/cuda/elementwise_math.h"
#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernel_util.h"
#include "runtime/broadcast.h"

namespace tessera::cuda {

namespace {

class MathKernel : public rt::OpKernel {
 public:
  MathKernel(MathOp op, MathParams p) : op_(op), p_(p) {}
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    auto t = elem_type(x.dtype());
    if (!t) ctx.fail(fmt::format("the CUDA kernel does not take {}", ir::dtype_name(x.dtype())));
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
    launch_math(op_, *t, x.raw(), y.raw(), x.numel(), p_, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  MathOp op_;
  MathParams p_;
};

// Clip: min(max(x, lo), hi); an absent bound clamps nothing (infinities pass), as in the reference.
class Clip : public rt::OpKernel {
 public:
  explicit Clip(const rt::KernelInfo& info) {
    if (info.since_version() >= 11) return;
    lo_ = info.get_float("min", -INFINITY);
    hi_ = info.get_float("max", INFINITY);
  }
  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    auto t = elem_type(x.dtype());
    if (!t) ctx.fail(fmt::format("the CUDA Clip does not take {}", ir::dtype_name(x.dtype())));
    MathParams p{lo_, hi_};
    if (ctx.info().since_version() >= 11) {
      p.alpha = bound(ctx, 1, "min", -INFINITY);
      p.beta = bound(ctx, 2, "max", INFINITY);
    }
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
    launch_math(MathOp::kClip, *t, x.raw(), y.raw(), x.numel(), p, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  static float bound(const rt::KernelContext& ctx, size_t i, const char* name, float absent) {
    const rt::Tensor* b = ctx.optional_input(i);
    if (!b) return absent;
    if (b->dtype() != ctx.input(0).dtype())
      ctx.fail(fmt::format("input '{}' has element type {}; it must be the input's type {}", name,
                           ir::dtype_name(b->dtype()), ir::dtype_name(ctx.input(0).dtype())));
    if (b->numel() != 1)
      ctx.fail(
          fmt::format("input '{}' must hold one element, got shape {}", name, rt::shape_str(b->shape())));
    return static_cast<float>(b->to_double(0));
  }
  float lo_ = -INFINITY, hi_ = INFINITY;
};

class Variadic : public rt::OpKernel {
 public:
  explicit Variadic(VariadicOp op) : op_(op) {}
  void compute(rt::KernelContext& ctx) const override {
    const size_t count = ctx.input_count();
    if (count == 0 || count > static_cast<size_t>(kMaxVariadic))
      ctx.fail(fmt::format("the CUDA kernel takes 1 to {} inputs, got {}", kMaxVariadic, count));
    const rt::Tensor& first = ctx.input(0);
    auto t = elem_type(first.dtype());
    std::vector<const rt::Shape*> shapes;
    for (size_t k = 0; k < count; ++k) {
      if (ctx.input(k).dtype() != first.dtype())
        ctx.fail(fmt::format("input {} has element type {}, input 0 {}; they must match", k,
                             ir::dtype_name(ctx.input(k).dtype()), ir::dtype_name(first.dtype())));
      shapes.push_back(&ctx.input(k).shape());
    }
    if (!t) ctx.fail(fmt::format("the CUDA kernel does not take {}", ir::dtype_name(first.dtype())));
    rt::Shape out = rt::broadcast_shapes(std::span<const rt::Shape* const>(shapes));
    if (out.size() > static_cast<size_t>(kMaxRank))
      ctx.fail(fmt::format("the CUDA kernel broadcasts up to rank {}, got {}", kMaxRank, out.size()));
    VariadicArgs a;
    a.count = static_cast<int>(count);
    a.rank = static_cast<int>(out.size());
    for (int d = 0; d < a.rank; ++d) a.dims[d] = out[static_cast<size_t>(d)];
    for (size_t k = 0; k < count; ++k) {
      const rt::Tensor& x = ctx.input(k);
      a.in[k] = x.raw();
      a.flat[k] = x.shape() == out;
      auto st = rt::broadcast_strides(x.shape(), out);
      for (int d = 0; d < a.rank; ++d) a.strides[k][d] = st[static_cast<size_t>(d)];
    }
    rt::Tensor& y = ctx.output_uninitialized(0, first.dtype(), out);
    launch_variadic(op_, *t, a, y.raw(), y.numel(), native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  VariadicOp op_;
};

bool one_float(const rt::KernelInfo& i) {
  return all_tensors(i) && same_float_inputs(i, 1);
}

// Every input present, of one float element type, 1 to kMaxVariadic of them (`skip_two`: two inputs
// are the binary kernel's).
bool variadic_ok(const rt::KernelInfo& i, bool skip_two) {
  const size_t n = i.input_count();
  if (n == 0 || n > static_cast<size_t>(kMaxVariadic) || (skip_two && n == 2)) return false;
  return all_tensors(i) && same_float_inputs(i, n);
}

// Clip: X of a float type, the bounds (inputs from 11) of X's type where given.
bool clip_ok(const rt::KernelInfo& i) {
  if (!all_tensors(i) || !i.has_input(0) || !elem_type(i.input_dtype(0))) return false;
  for (size_t k = 1; k < i.input_count(); ++k)
    if (i.has_input(k) && i.input_dtype(k) != i.input_dtype(0)) return false;
  return true;
}

using Params = MathParams (*)(const rt::KernelInfo&);

void add_math(KernelTable& t, const char* name, MathOp op, int since, Params params = nullptr) {
  t.add(cuda_def(
      name, one_float,
      [op, params](const rt::KernelInfo& i) -> rt::KernelPtr {
        return std::make_unique<MathKernel>(op, params ? params(i) : MathParams{});
      },
      since));
}

MathParams alpha(const rt::KernelInfo& i) {
  return {i.get_float("alpha"), 0};
}

}  // namespace

void register_math_kernels(KernelTable& t) {
  add_math(t, "LeakyRelu", MathOp::kLeakyRelu, 1, alpha);
  add_math(t, "Elu", MathOp::kElu, 1, alpha);
  add_math(t, "Selu", MathOp::kSelu, 1, [](const rt::KernelInfo& i) {
    return MathParams{i.get_float("alpha"), i.get_float("gamma")};
  });
  add_math(t, "Celu", MathOp::kCelu, 12, [](const rt::KernelInfo& i) {
    MathParams p = alpha(i);
    if (p.alpha == 0) throw rt::KernelError("Celu: attribute 'alpha' must not be 0");
    return p;
  });
  add_math(t, "HardSigmoid", MathOp::kHardSigmoid, 1, [](const rt::KernelInfo& i) {
    return MathParams{i.get_float("alpha"), i.get_float("beta")};
  });
  add_math(t, "ThresholdedRelu", MathOp::kThresholdedRelu, 10, alpha);
  add_math(t, "Swish", MathOp::kSwish, 1, alpha);
  add_math(t, "Shrink", MathOp::kShrink, 9, [](const rt::KernelInfo& i) {
    return MathParams{i.get_float("bias"), i.get_float("lambd")};
  });
  t.add(cuda_def(
      "Gelu", one_float,
      [](const rt::KernelInfo& i) -> rt::KernelPtr {
        const std::string mode = i.get_string("approximate", "none");
        if (mode != "none" && mode != "tanh")
          throw rt::KernelError(
              fmt::format("Gelu: attribute 'approximate' is '{}'; it must be 'none' or 'tanh'", mode));
        return std::make_unique<MathKernel>(mode == "tanh" ? MathOp::kGeluTanh : MathOp::kGelu, MathParams{});
      },
      20));
  constexpr std::array<std::pair<const char*, MathOp>, 19> kPlain{{{"HardSwish", MathOp::kHardSwish},
                                                                   {"Softplus", MathOp::kSoftplus},
                                                                   {"Softsign", MathOp::kSoftsign},
                                                                   {"Mish", MathOp::kMish},
                                                                   {"Sin", MathOp::kSin},
                                                                   {"Cos", MathOp::kCos},
                                                                   {"Tan", MathOp::kTan},
                                                                   {"Asin", MathOp::kAsin},
                                                                   {"Acos", MathOp::kAcos},
                                                                   {"Atan", MathOp::kAtan},
                                                                   {"Sinh", MathOp::kSinh},
                                                                   {"Cosh", MathOp::kCosh},
                                                                   {"Asinh", MathOp::kAsinh},
                                                                   {"Acosh", MathOp::kAcosh},
                                                                   {"Atanh", MathOp::kAtanh},
                                                                   {"Floor", MathOp::kFloor},
                                                                   {"Ceil", MathOp::kCeil},
                                                                   {"Round", MathOp::kRound},
                                                                   {"Sign", MathOp::kSign}}};
  for (auto [name, op] : kPlain) add_math(t, name, op, 1);
  t.add(cuda_def(
            "Clip", clip_ok,
            [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Clip>(i); }, 6),
        HostIo{{1, 2}, {}});
  for (auto [name, op, skip] :
       {std::tuple{"Sum", VariadicOp::kSum, false}, std::tuple{"Mean", VariadicOp::kMean, false},
        std::tuple{"Max", VariadicOp::kMax, true}, std::tuple{"Min", VariadicOp::kMin, true}}) {
    const bool skip_two = skip;
    const VariadicOp v = op;
    t.add(cuda_def(
        name, [skip_two](const rt::KernelInfo& i) { return variadic_ok(i, skip_two); },
        [v](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<Variadic>(v); }, 8));
  }
}

}  // namespace tessera::cuda
