// Cast, CastLike and BitCast: change a tensor's element type, keeping its shape.
#include <fmt/format.h>

#include <cctype>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ops::tensor::cast_types;

namespace {

// Cast-1 names the target type as a string ("FLOAT", "INT64"); later versions use the enum number.
DataType target_type(const InferenceContext& ctx) {
  if (ctx.opset() < 6) {
    std::string name = ctx.attr_string("to");
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (auto t = tessera::ir::dtype_from_name(name)) return *t;
    ctx.fail(fmt::format("attribute 'to' is '{}', not a known data type", ctx.attr_string("to")));
  }
  int64_t to = ctx.attr_int("to", -1);
  if (!tessera::ir::is_valid_dtype(static_cast<int32_t>(to)) || to == 0) {
    ctx.fail(fmt::format("attribute 'to' is {}, not a known data type", to));
  }
  return static_cast<DataType>(to);
}

// Integer casts keep a shape value (Shape -> Cast(int32) -> ...); float ones may round, so they drop it.
void keep_value(InferenceContext& ctx, DataType to) {
  if (!tessera::ir::dtype_is_int(to)) return;
  if (const auto* v = ctx.input_shape_value(0)) tensor::set_value(ctx, 0, *v);
}

void infer_cast(InferenceContext& ctx) {
  DataType to = target_type(ctx);
  const tessera::ir::Shape* s = input_shape(ctx, 0);
  set_output(ctx, 0, to, s ? std::optional(*s) : std::nullopt);
  keep_value(ctx, to);
}

void infer_cast_like(InferenceContext& ctx) {
  DataType to = input_elem(ctx, 1);
  const tessera::ir::Shape* s = input_shape(ctx, 0);
  set_output(ctx, 0, to, s ? std::optional(*s) : std::nullopt);
  keep_value(ctx, to);
}

void infer_bitcast(InferenceContext& ctx) {
  DataType to = target_type(ctx);
  if (to == DataType::kString) ctx.fail("attribute 'to' cannot be string: BitCast reinterprets bits");
  DataType from = input_elem(ctx, 0);
  if (from != DataType::kUndefined) {
    int a = tessera::ir::dtype_bits(from), b = tessera::ir::dtype_bits(to);
    if (a != b) {
      ctx.fail_input(0, fmt::format("cannot bitcast {} ({} bits) to {} ({} bits): widths must match",
                                    tessera::ir::dtype_name(from), a, tessera::ir::dtype_name(to), b));
    }
  }
  const tessera::ir::Shape* s = input_shape(ctx, 0);
  set_output(ctx, 0, to, s ? std::optional(*s) : std::nullopt);
}

void add_rounding_attrs(OpSchema& s, int v) {
  if (v >= 19)
    s.attr("saturate", int64_t{1}, "Out-of-range values saturate when casting to float8 (1) or not.");
  if (v >= 25) s.attr("round_mode", "up", "Rounding toward float8e8m0: 'up', 'down' or 'nearest'.");
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_cast) {
  for (int v : {1, 6, 9, 13, 19, 21, 23, 24, 25}) {
    OpSchema s("Cast", v);
    s.category(Category::kConversion)
        .doc("Converts every element to the type named by 'to'; the shape is unchanged.")
        .input("input", "T1")
        .output("output", "T2");
    if (v < 6) {
      s.attr("to", tessera::ir::AttrType::kString, "Target type name, e.g. 'FLOAT'.");
    } else {
      s.attr("to", tessera::ir::AttrType::kInt, "Target type (TensorProto.DataType).");
    }
    add_rounding_attrs(s, v);
    s.types("T1", cast_types(v)).types("T2", cast_types(v)).infer(infer_cast);
    reg.add(std::move(s));
  }
  for (int v : {15, 19, 21, 23, 24, 25}) {
    OpSchema s("CastLike", v);
    s.category(Category::kConversion)
        .doc("Converts the first input to the element type of the second; only that type is read from it.")
        .input("input", "T1")
        .input("target_type", "T2")
        .output("output", "T2");
    add_rounding_attrs(s, v);
    // CastLike-15 already took bfloat16, unlike Cast-13's generation.
    std::vector<std::string> t = cast_types(v < 19 ? 13 : v);
    s.types("T1", t).types("T2", t).infer(infer_cast_like);
    reg.add(std::move(s));
  }
  std::vector<std::string> bit_types = tensor::without(types::kAllTensorIr13, {"string"});
  reg.add(OpSchema("BitCast", 26)
              .category(Category::kConversion)
              .doc("Reinterprets each element's bits as another type of the same width, without converting "
                   "values.")
              .attr("to", tessera::ir::AttrType::kInt,
                    "Target type (TensorProto.DataType) of the same bit width.")
              .input("input", "T1")
              .output("output", "T2")
              .types("T1", bit_types)
              .types("T2", bit_types)
              .infer(infer_bitcast));
}
