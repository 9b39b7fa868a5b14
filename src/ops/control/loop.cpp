// Loop: runs a body graph while a trip count and/or a condition allow, threading loop-carried values
// through the iterations and stacking per-iteration scan outputs.
#include <fmt/format.h>

#include "ops/control/control_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/container_types.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;
using tessera::ir::Type;

namespace {

void infer_loop(InferenceContext& ctx) {
  require_single_element(ctx, 0, "M");
  require_single_element(ctx, 1, "cond");
  const tessera::ir::Graph* body = graph_attr(ctx, "body");
  if (!body) return;
  size_t carried = ctx.num_inputs() < 2 ? 0 : ctx.num_inputs() - 2;
  if (body->inputs.size() != carried + 2) {
    ctx.fail(
        fmt::format("the body takes {} inputs but must take {}: iteration number, condition and the {} "
                    "loop-carried values",
                    body->inputs.size(), carried + 2, carried));
  }
  if (body->outputs.size() < carried + 1) {
    ctx.fail(
        fmt::format("the body gives {} outputs but must give at least {}: condition and the {} loop-carried "
                    "values",
                    body->outputs.size(), carried + 1, carried));
  }
  size_t scans = body->outputs.size() - 1 - carried;
  if (ctx.num_outputs() != carried + scans) {
    ctx.fail(fmt::format("the node has {} outputs but the body makes {} ({} loop-carried, {} scan outputs)",
                         ctx.num_outputs(), carried + scans, carried, scans));
  }

  // A loop-carried tensor may change shape from one iteration to the next, so the body is inferred
  // without assuming the initial shape (its element type cannot change).
  std::vector<Type> body_inputs = {Type::tensor(DataType::kInt64, Shape{}),
                                   Type::tensor(DataType::kBool, Shape{})};
  for (size_t i = 0; i < carried; ++i) {
    const Type* t = ctx.input_type(i + 2);
    if (!t) {
      body_inputs.emplace_back();
    } else if (t->is_tensor()) {
      body_inputs.push_back(Type::tensor(t->elem));
    } else {
      body_inputs.push_back(*t);
    }
  }
  std::vector<Type> outs = ctx.infer_subgraph(*body, body_inputs);
  outs.resize(body->outputs.size());

  const Type& cond = outs[0];
  if (!cond.is_none() &&
      (!cond.is_tensor() || (cond.elem != DataType::kBool && cond.elem != DataType::kUndefined))) {
    ctx.fail(fmt::format("the body's first output (the condition) must be a bool tensor, got {}",
                         cond.type_string()));
  }
  for (size_t i = 0; i < carried; ++i) {
    // Zero iterations give back the initial value, so the result is either it or a body output.
    const Type* init = ctx.input_type(i + 2);
    const Type& next = outs[i + 1];
    // An optional initial value may become a plain value after the first iteration (the body unwraps
    // it); the body's type then describes the result, as ONNX's own inference has it.
    if (init && !next.is_none() && init->kind != next.kind &&
        (init->kind == Type::Kind::kOptional || next.kind == Type::Kind::kOptional)) {
      if (ctx.has_output(i)) ctx.set_output_type(i, next);
      continue;
    }
    Type t = merge_types(ctx, init ? *init : Type(), next,
                         fmt::format("loop-carried value {} (input '{}', body output '{}')", i,
                                     ctx.node().inputs[i + 2], body->outputs[i + 1].name));
    if (!t.is_none() && ctx.has_output(i)) ctx.set_output_type(i, std::move(t));
  }
  // Without a 'cond' input the loop is a plain for loop over M, so a constant M is the iteration count.
  Dim iterations = Dim::unknown();
  if (auto m = constant_ints(ctx, 0); m && m->size() == 1 && !ctx.has_input(1) && (*m)[0] >= 0) {
    iterations = Dim::of((*m)[0]);
  }
  for (size_t k = 0; k < scans; ++k) {
    const Type& t = outs[1 + carried + k];
    if (t.is_none() || !ctx.has_output(carried + k)) continue;
    if (!t.is_tensor()) {
      ctx.fail(fmt::format("scan output {} ('{}') must be a tensor to be stacked, got {}", k,
                           body->outputs[1 + carried + k].name, t.type_string()));
    }
    // One slice per iteration.
    std::optional<Shape> shape;
    if (t.shape) {
      shape = Shape{iterations};
      shape->insert(shape->end(), t.shape->begin(), t.shape->end());
    }
    ctx.set_output_type(carried + k, Type::tensor(t.elem, std::move(shape)));
  }
}

}  // namespace

TESSERA_REGISTER_OPS(control_loop) {
  for (auto& [version, values] : if_loop_versions()) {
    reg.add(OpSchema("Loop", version)
                .category(Category::kControlFlow)
                .doc("Repeats 'body' up to M times while its condition stays true, passing loop-carried "
                     "values from "
                     "one iteration to the next; extra body outputs are stacked into scan outputs.")
                .optional_input("M", "I")
                .optional_input("cond", "B")
                // Opset 1 wanted at least one loop-carried value; opset 11 allows none.
                .variadic_input("v_initial", "V", version == 1 ? 1 : 0, false)
                .variadic_output("v_final_and_scan_outputs", "V", 1, false)
                .types("V", values)
                .types("I", {"tensor(int64)"})
                .types("B", {"tensor(bool)"})
                .attr("body", tessera::ir::AttrType::kGraph)
                .infer(infer_loop));
  }
}
