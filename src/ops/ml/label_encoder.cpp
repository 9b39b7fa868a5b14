// LabelEncoder (ai.onnx.ml 1, 2, 4): a lookup table from keys to values, elementwise.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/ml/ml_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::AttrType;
using ir::DataType;
using ir::Dim;
using ir::Shape;

namespace {

const char* kDoc =
    "Maps each element through a table of keys to values; elements missing from the table get the default.";

// Version 1 maps strings to their index in classes_strings and back.
void infer_label_encoder_v1(InferenceContext& ctx) {
  DataType in = input_elem(ctx, 0);
  if (in == DataType::kUndefined) return;
  DataType out = in == DataType::kString ? DataType::kInt64 : DataType::kString;
  const Shape* x = input_shape(ctx, 0);
  set_output(ctx, 0, out, x ? std::optional<Shape>(*x) : std::nullopt);
}

// One side (keys or values) of the table: the type of whichever attribute holds it, and its length.
struct Side {
  DataType type = DataType::kUndefined;
  std::optional<size_t> size;
};

Side read_side(const InferenceContext& ctx, const char* side) {
  Side out;
  int count = 0;
  auto take = [&](const std::string& name, DataType t, size_t n) {
    if (!ctx.has_attr(name)) return;
    ++count;
    out.type = t;
    out.size = n;
  };
  std::string s(side);
  take(s + "_strings", DataType::kString, ctx.attr_strings(s + "_strings").size());
  take(s + "_int64s", DataType::kInt64, ctx.attr_ints(s + "_int64s").size());
  take(s + "_floats", DataType::kFloat, ctx.attr_floats(s + "_floats").size());
  if (const ir::Attribute* a = ctx.node().attr(s + "_tensor"); a && a->type == AttrType::kTensor) {
    ++count;
    out.type = a->tensors.empty() ? DataType::kUndefined : a->tensors[0].dtype;
    out.size = a->tensors.empty() ? std::nullopt : std::optional<size_t>(a->tensors[0].numel().value_or(0));
  }
  if (count != 1) {
    ctx.fail(fmt::format("exactly one of {0}_strings, {0}_int64s, {0}_floats{1} must be set, found {2}", s,
                         ctx.schema().find_attr(s + "_tensor") ? fmt::format(", {}_tensor", s) : "", count));
  }
  return out;
}

// Versions 2 and 4: the key attribute fixes the input type, the value attribute the output type.
void infer_label_encoder(InferenceContext& ctx) {
  Side keys = read_side(ctx, "keys");
  Side values = read_side(ctx, "values");
  if (keys.size && values.size && *keys.size != *values.size) {
    ctx.fail(fmt::format("{} keys but {} values", *keys.size, *values.size));
  }
  DataType in = input_elem(ctx, 0);
  if (in != DataType::kUndefined && keys.type != DataType::kUndefined && in != keys.type) {
    ctx.fail_input(0, fmt::format("input of type {} does not match the {} keys", ir::dtype_name(in),
                                  ir::dtype_name(keys.type)));
  }
  const Shape* x = input_shape(ctx, 0);
  if (values.type == DataType::kUndefined) return;
  set_output(ctx, 0, values.type, x ? std::optional<Shape>(*x) : std::nullopt);
}

}  // namespace

TESSERA_REGISTER_OPS(ml_label_encoder) {
  reg.add(OpSchema("LabelEncoder", 1, "ai.onnx.ml")
              .category(Category::kMachineLearning)
              .doc(kDoc)
              .input("X", "T1")
              .output("Y", "T2")
              .types("T1", {"tensor(int64)", "tensor(string)"})
              .types("T2", {"tensor(int64)", "tensor(string)"})
              .attr_optional("classes_strings", AttrType::kStrings)
              .attr("default_int64", int64_t{-1})
              .attr("default_string", "_Unused")
              .infer(infer_label_encoder_v1));
  reg.add(OpSchema("LabelEncoder", 2, "ai.onnx.ml")
              .category(Category::kMachineLearning)
              .doc(kDoc)
              .input("X", "T1")
              .output("Y", "T2")
              .types("T1", {"tensor(float)", "tensor(int64)", "tensor(string)"})
              .types("T2", {"tensor(float)", "tensor(int64)", "tensor(string)"})
              .attr("default_float", -0.0f)
              .attr("default_int64", int64_t{-1})
              .attr("default_string", "_Unused")
              .attr_optional("keys_floats", AttrType::kFloats)
              .attr_optional("keys_int64s", AttrType::kInts)
              .attr_optional("keys_strings", AttrType::kStrings)
              .attr_optional("values_floats", AttrType::kFloats)
              .attr_optional("values_int64s", AttrType::kInts)
              .attr_optional("values_strings", AttrType::kStrings)
              .infer(infer_label_encoder));
  // Version 4 adds tables given as tensors, which widen the key and value types.
  std::vector<std::string> table_types =
      types::tensors({"string", "int64", "float", "int32", "int16", "double"});
  reg.add(OpSchema("LabelEncoder", 4, "ai.onnx.ml")
              .category(Category::kMachineLearning)
              .doc(kDoc)
              .input("X", "T1")
              .output("Y", "T2")
              .types("T1", table_types)
              .types("T2", table_types)
              .attr("default_float", -0.0f)
              .attr("default_int64", int64_t{-1})
              .attr("default_string", "_Unused")
              .attr_optional("default_tensor", AttrType::kTensor)
              .attr_optional("keys_floats", AttrType::kFloats)
              .attr_optional("keys_int64s", AttrType::kInts)
              .attr_optional("keys_strings", AttrType::kStrings)
              .attr_optional("keys_tensor", AttrType::kTensor)
              .attr_optional("values_floats", AttrType::kFloats)
              .attr_optional("values_int64s", AttrType::kInts)
              .attr_optional("values_strings", AttrType::kStrings)
              .attr_optional("values_tensor", AttrType::kTensor)
              .infer(infer_label_encoder));
}
