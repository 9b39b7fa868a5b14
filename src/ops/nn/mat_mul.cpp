// MatMul and its integer (MatMulInteger) and quantized (QLinearMatMul) forms: numpy-style matrix products.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// numpy.matmul: a 1-D operand gains a unit axis (prepended to A, appended to B) that the result drops;
// the axes before the last two broadcast.
std::optional<Shape> matmul_shape(const InferenceContext& ctx, size_t ia, size_t ib, const char* na,
                                  const char* nb) {
  const Shape* a = input_shape(ctx, ia);
  const Shape* b = input_shape(ctx, ib);
  if (a && a->empty())
    ctx.fail_input(ia,
                   fmt::format("input {} ('{}') is a scalar; matrix products need rank 1 or more", ia, na));
  if (b && b->empty())
    ctx.fail_input(ib,
                   fmt::format("input {} ('{}') is a scalar; matrix products need rank 1 or more", ib, nb));
  if (!a || !b) return std::nullopt;
  Shape sa = a->size() == 1 ? Shape{Dim::of(1), (*a)[0]} : *a;
  Shape sb = b->size() == 1 ? Shape{(*b)[0], Dim::of(1)} : *b;
  const Dim& ka = sa.back();
  const Dim& kb = sb[sb.size() - 2];
  if (ka.is_static() && kb.is_static() && ka.value != kb.value) {
    ctx.fail(
        fmt::format("input {} ('{}') {} has {} columns but input {} ('{}') {} has {} rows; they must match",
                    ia, na, ir::shape_to_string(*a), ka.value, ib, nb, ir::shape_to_string(*b), kb.value));
  }
  Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  Shape out = *broadcast_shapes(ctx, batch_a, batch_b);
  if (a->size() >= 2) out.push_back(sa[sa.size() - 2]);
  if (b->size() >= 2) out.push_back(sb.back());
  return out;
}

void infer_matmul(InferenceContext& ctx) {
  propagate_elem(ctx, 0, 0, matmul_shape(ctx, 0, 1, "A", "B"));
}

void infer_matmul_integer(InferenceContext& ctx) {
  set_output(ctx, 0, DataType::kInt32, matmul_shape(ctx, 0, 1, "A", "B"));
}

// The result is quantized like y_zero_point (input 7).
void infer_qlinear_matmul(InferenceContext& ctx) {
  set_output(ctx, 0, input_elem(ctx, 7), matmul_shape(ctx, 0, 3, "a", "b"));
}

}  // namespace

TESSERA_REGISTER_OPS(nn_mat_mul) {
  const auto high = types::tensors({"float16", "float", "double", "uint32", "uint64", "int32", "int64"});
  for (int v : {1, 9, 13}) {
    reg.add(
        OpSchema("MatMul", v)
            .category(Category::kLinearAlgebra)
            .doc(
                "Matrix product with numpy.matmul semantics: batches broadcast, 1-D operands act as a row or "
                "column vector.")
            .input("A", "T")
            .input("B", "T")
            .output("Y", "T")
            .types("T", v == 1   ? types::kFloat
                        : v == 9 ? high
                                 : types::concat({high, types::tensors({"bfloat16"})}))
            .infer(infer_matmul));
  }
  reg.add(
      OpSchema("MatMulInteger", 10)
          .category(Category::kLinearAlgebra)
          .doc("Matrix product of 8-bit integer tensors after subtracting their zero points, accumulated in "
               "int32.")
          .input("A", "T1")
          .input("B", "T2")
          .optional_input("a_zero_point", "T1")
          .optional_input("b_zero_point", "T2")
          .output("Y", "T3")
          .types("T1", types::tensors({"int8", "uint8"}))
          .types("T2", types::tensors({"int8", "uint8"}))
          .types("T3", types::tensors({"int32"}))
          .infer(infer_matmul_integer));
  const auto q8 = types::tensors({"int8", "uint8"});
  const auto q21 =
      types::tensors({"int8", "uint8", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"});
  for (int v : {10, 21}) {
    const char* scale = v >= 21 ? "TS" : "tensor(float)";
    OpSchema s("QLinearMatMul", v);
    s.category(Category::kLinearAlgebra)
        .doc(
            "Matrix product of quantized tensors: dequantizes a and b with their scales and zero points, "
            "multiplies, and requantizes with y_scale and y_zero_point.")
        .input("a", "T1")
        .input("a_scale", scale)
        .input("a_zero_point", "T1")
        .input("b", "T2")
        .input("b_scale", scale)
        .input("b_zero_point", "T2")
        .input("y_scale", scale)
        .input("y_zero_point", "T3")
        .output("y", "T3");
    if (v >= 21) s.types("TS", types::tensors({"float", "float16", "bfloat16"}));
    s.types("T1", v >= 21 ? q21 : q8).types("T2", v >= 21 ? q21 : q8).types("T3", v >= 21 ? q21 : q8);
    reg.add(std::move(s.infer(infer_qlinear_matmul)));
  }
}
