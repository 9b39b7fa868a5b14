// Reference kernels of the ai.onnx.preview.training optimizers Adagrad, Adam and Momentum. Each node
// updates n tensors at once: inputs are R (learning rate), T (step count), then n tensors of each group
// (X, G, ...), outputs n tensors of each updated group. Arithmetic is done in double, per the formulas
// of the ONNX operator documentation.
#include <fmt/format.h>

#include <cmath>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::KernelInfo;
using tessera::rt::Tensor;

struct Step {
  double r;   // learning rate
  int64_t t;  // step count
  size_t n;   // tensors updated
};

// Reads R and T and checks that the inputs split into `groups` groups of equal shape and type.
Step read_step(const KernelContext& ctx, size_t groups, size_t out_groups) {
  const Tensor& r = ctx.input(0);
  const Tensor& t = ctx.input(1);
  if (r.numel() != 1 || (r.dtype() != DataType::kFloat && r.dtype() != DataType::kDouble))
    ctx.fail(fmt::format("input 'R' must be a float or double scalar, got {} {}",
                         tessera::ir::dtype_name(r.dtype()), tessera::rt::shape_str(r.shape())));
  if (t.numel() != 1 || t.dtype() != DataType::kInt64)
    ctx.fail(fmt::format("input 'T' must be an int64 scalar, got {} {}", tessera::ir::dtype_name(t.dtype()),
                         tessera::rt::shape_str(t.shape())));
  if (ctx.input_count() < 2 + groups || (ctx.input_count() - 2) % groups != 0)
    ctx.fail(fmt::format("{} inputs do not split into R, T and {} equal groups", ctx.input_count(), groups));
  Step s{r.to_double(0), t.data<int64_t>()[0], (ctx.input_count() - 2) / groups};
  if (ctx.output_count() != s.n * out_groups)
    ctx.fail(fmt::format("the node updates {} tensor(s) and so needs {} outputs, has {}", s.n,
                         s.n * out_groups, ctx.output_count()));
  for (size_t k = 0; k < s.n; ++k) {
    const Tensor& x = ctx.input(2 + k);
    for (size_t g = 1; g < groups; ++g) {
      const Tensor& o = ctx.input(2 + g * s.n + k);
      if (o.shape() != x.shape() || o.dtype() != x.dtype())
        ctx.fail(fmt::format("input {} is {} {} but the tensor it updates (input {}) is {} {}",
                             2 + g * s.n + k, tessera::ir::dtype_name(o.dtype()),
                             tessera::rt::shape_str(o.shape()), 2 + k, tessera::ir::dtype_name(x.dtype()),
                             tessera::rt::shape_str(x.shape())));
    }
  }
  return s;
}

// Calls f(in, out, count) with element pointers of the k-th tensor of each input/output group.
template <class T, class F>
void for_group(KernelContext& ctx, const Step& s, size_t k, size_t groups, size_t out_groups, F&& f) {
  std::vector<const T*> in;
  for (size_t g = 0; g < groups; ++g) in.push_back(ctx.input(2 + g * s.n + k).template data<T>());
  const Tensor& x = ctx.input(2 + k);
  std::vector<T*> out;
  for (size_t g = 0; g < out_groups; ++g)
    out.push_back(ctx.output(g * s.n + k, x.dtype(), x.shape()).template data<T>());
  f(in, out, x.numel());
}

class Adagrad : public tessera::rt::OpKernel {
 public:
  explicit Adagrad(const KernelInfo& info)
      : decay_(info.get_float("decay_factor", 0.0f)),
        eps_(info.get_float("epsilon", 1e-6f)),
        norm_(info.get_float("norm_coefficient", 0.0f)) {}

  void compute(KernelContext& ctx) const override {
    Step s = read_step(ctx, 3, 2);  // X, G, H -> X_new, H_new
    double r = s.r / (1.0 + static_cast<double>(s.t) * decay_);
    for (size_t k = 0; k < s.n; ++k) {
      tessera::rt::dispatch(
          tessera::rt::TypeList<float, double>{}, ctx.input(2 + k).dtype(), "Adagrad", [&]<class T>() {
            for_group<T>(ctx, s, k, 3, 2, [&](const auto& in, const auto& out, int64_t count) {
              for (int64_t i = 0; i < count; ++i) {
                double x = in[0][i], g = norm_ * x + in[1][i];
                double h = in[2][i] + g * g;
                out[1][i] = static_cast<T>(h);
                out[0][i] = static_cast<T>(x - r * g / (std::sqrt(h) + eps_));
              }
            });
          });
    }
  }

 private:
  double decay_, eps_, norm_;
};

class Adam : public tessera::rt::OpKernel {
 public:
  explicit Adam(const KernelInfo& info)
      : alpha_(info.get_float("alpha", 0.9f)),
        beta_(info.get_float("beta", 0.999f)),
        eps_(info.get_float("epsilon", 1e-6f)),
        norm_(info.get_float("norm_coefficient", 0.0f)),
        norm_post_(info.get_float("norm_coefficient_post", 0.0f)) {}

  void compute(KernelContext& ctx) const override {
    Step s = read_step(ctx, 4, 3);  // X, G, V, H -> X_new, V_new, H_new
    double r = s.r;
    if (s.t > 0) {
      auto t = static_cast<double>(s.t);
      r = s.r * std::sqrt(1.0 - std::pow(beta_, t)) / (1.0 - std::pow(alpha_, t));
    }
    for (size_t k = 0; k < s.n; ++k) {
      tessera::rt::dispatch(
          tessera::rt::TypeList<float, double>{}, ctx.input(2 + k).dtype(), "Adam", [&]<class T>() {
            for_group<T>(ctx, s, k, 4, 3, [&](const auto& in, const auto& out, int64_t count) {
              for (int64_t i = 0; i < count; ++i) {
                double x = in[0][i], g = norm_ * x + in[1][i];
                double v = alpha_ * in[2][i] + (1.0 - alpha_) * g;
                double h = beta_ * in[3][i] + (1.0 - beta_) * g * g;
                double x_new = x - r * (v / (std::sqrt(h) + eps_));
                out[0][i] = static_cast<T>((1.0 - norm_post_) * x_new);
                out[1][i] = static_cast<T>(v);
                out[2][i] = static_cast<T>(h);
              }
            });
          });
    }
  }

 private:
  double alpha_, beta_, eps_, norm_, norm_post_;
};

class Momentum : public tessera::rt::OpKernel {
 public:
  explicit Momentum(const KernelInfo& info)
      : alpha_(info.get_float("alpha")),
        beta_(info.get_float("beta")),
        norm_(info.get_float("norm_coefficient")) {
    std::string mode = info.get_string("mode");
    if (mode != "standard" && mode != "nesterov")
      throw tessera::rt::KernelError(
          fmt::format("attribute 'mode' is '{}'; expected 'standard' or 'nesterov'", mode));
    nesterov_ = mode == "nesterov";
  }

  void compute(KernelContext& ctx) const override {
    Step s = read_step(ctx, 3, 2);        // X, G, V -> X_new, V_new
    double beta = s.t > 0 ? beta_ : 1.0;  // the first step takes the whole gradient
    for (size_t k = 0; k < s.n; ++k) {
      tessera::rt::dispatch(
          tessera::rt::TypeList<float, double>{}, ctx.input(2 + k).dtype(), "Momentum", [&]<class T>() {
            for_group<T>(ctx, s, k, 3, 2, [&](const auto& in, const auto& out, int64_t count) {
              for (int64_t i = 0; i < count; ++i) {
                double x = in[0][i], g = norm_ * x + in[1][i];
                double v = alpha_ * in[2][i] + beta * g;
                out[0][i] = static_cast<T>(nesterov_ ? x - s.r * (g + alpha_ * v) : x - s.r * v);
                out[1][i] = static_cast<T>(v);
              }
            });
          });
    }
  }

 private:
  double alpha_, beta_, norm_;
  bool nesterov_ = false;
};

}  // namespace

TESSERA_REGISTER_KERNELS(training_optimizers) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<Adagrad>("Adagrad").in_domain("ai.onnx.preview.training"));
  reg.add(KernelDef::of<Adam>("Adam").in_domain("ai.onnx.preview.training"));
  reg.add(KernelDef::of<Momentum>("Momentum").in_domain("ai.onnx.preview.training"));
}
