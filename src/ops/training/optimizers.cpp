// Adagrad, Adam and Momentum (ai.onnx.preview.training 1): one optimiser step for n tensors at once.
// Inputs are R (learning rate), T (step count), then n tensors per group (X, G, optimiser state...);
// outputs are the updated X and state groups.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::AttrType;

namespace {

// How one optimiser lays out its groups: the input groups after R and T, and for each output group the
// input group it updates.
struct Layout {
  const char* name;
  std::vector<const char*> in_groups;     // e.g. X, G, H
  std::vector<size_t> out_from_in_group;  // e.g. X_new <- X (0), H_new <- H (2)
};

void infer_optimizer(InferenceContext& ctx, const Layout& l) {
  size_t groups = l.in_groups.size();
  if ((ctx.num_inputs() - 2) % groups != 0) {
    std::string names;
    for (const char* g : l.in_groups) names += names.empty() ? g : fmt::format(", {}", g);
    ctx.fail(fmt::format("{} takes R, T and then n tensors of each of {}; {} inputs do not split that way",
                         l.name, names, ctx.num_inputs()));
  }
  size_t n = (ctx.num_inputs() - 2) / groups;
  if (ctx.num_outputs() != n * l.out_from_in_group.size()) {
    ctx.fail(fmt::format("{} updating {} tensor(s) has {} outputs, expected {}", l.name, n, ctx.num_outputs(),
                         n * l.out_from_in_group.size()));
  }
  for (size_t i : {size_t{0}, size_t{1}}) {
    const ir::Shape* s = input_shape(ctx, i);
    if (s && !s->empty()) {
      ctx.fail_input(
          i, fmt::format("{} must be a scalar, got {}", i == 0 ? "R (learning rate)" : "T (step count)",
                         ir::shape_to_string(*s)));
    }
  }
  // Every group's k-th tensor describes the same parameter, so their shapes must agree.
  for (size_t k = 0; k < n; ++k) {
    const ir::Shape* x = input_shape(ctx, 2 + k);
    for (size_t g = 1; g < groups && x; ++g) {
      const ir::Shape* other = input_shape(ctx, 2 + g * n + k);
      if (!other) continue;
      bool same = other->size() == x->size();
      for (size_t d = 0; same && d < x->size(); ++d) {
        const ir::Dim &a = (*x)[d], &b = (*other)[d];
        same = !(a.is_static() && b.is_static() && a.value != b.value);
      }
      if (!same) {
        ctx.fail_input(2 + g * n + k, fmt::format("{} {} {} does not match {} {} {}", l.in_groups[g], k + 1,
                                                  ir::shape_to_string(*other), l.in_groups[0], k + 1,
                                                  ir::shape_to_string(*x)));
      }
    }
  }
  for (size_t o = 0; o < l.out_from_in_group.size(); ++o) {
    for (size_t k = 0; k < n; ++k) propagate_type(ctx, 2 + l.out_from_in_group[o] * n + k, o * n + k);
  }
}

OpSchema optimizer_schema(const char* name, const char* doc) {
  OpSchema s(name, 1, "ai.onnx.preview.training");
  s.category(Category::kTraining)
      .doc(doc)
      .input("R", "T1")
      .input("T", "T2")
      .variadic_input("inputs", "T3", 1, false)
      .variadic_output("outputs", "T3", 1, false)
      .types("T1", {"tensor(float)", "tensor(double)"})
      .types("T2", {"tensor(int64)"})
      .types("T3", {"tensor(float)", "tensor(double)"});
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(training_optimizers) {
  static const Layout adagrad{"Adagrad", {"X", "G", "H"}, {0, 2}};
  static const Layout adam{"Adam", {"X", "G", "V", "H"}, {0, 2, 3}};
  static const Layout momentum{"Momentum", {"X", "G", "V"}, {0, 2}};
  reg.add(optimizer_schema("Adagrad",
                           "Adagrad step: accumulates squared gradients in H and scales each update by "
                           "1/sqrt(H + epsilon), with a decaying learning rate.")
              .attr("decay_factor", 0.0f)
              .attr("epsilon", 1e-6f)
              .attr("norm_coefficient", 0.0f)
              .infer([](InferenceContext& ctx) { infer_optimizer(ctx, adagrad); }));
  reg.add(optimizer_schema("Adam",
                           "Adam step: keeps running averages of gradients (V) and squared gradients (H) and "
                           "updates X by their bias-corrected ratio.")
              .attr("alpha", 0.9f)
              .attr("beta", 0.999f)
              .attr("epsilon", 1e-6f)
              .attr("norm_coefficient", 0.0f)
              .attr("norm_coefficient_post", 0.0f)
              .infer([](InferenceContext& ctx) { infer_optimizer(ctx, adam); }));
  reg.add(optimizer_schema("Momentum",
                           "Stochastic gradient descent with momentum (standard or Nesterov): V accumulates "
                           "gradients and X moves along V.")
              .attr("alpha", AttrType::kFloat)
              .attr("beta", AttrType::kFloat)
              .attr("mode", AttrType::kString)
              .attr("norm_coefficient", AttrType::kFloat)
              .infer([](InferenceContext& ctx) {
                std::string mode = ctx.attr_string("mode");
                if (mode != "standard" && mode != "nesterov") {
                  ctx.fail(fmt::format("mode '{}' is not 'standard' or 'nesterov'", mode));
                }
                infer_optimizer(ctx, momentum);
              }));
}
