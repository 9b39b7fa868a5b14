// Constant: a value held in an attribute. Its type is the attribute's; small integer constants also
// become shape values so that Reshape targets built from them stay exact.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::AttrType;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

Shape shape_of(const std::vector<int64_t>& dims) {
  Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return s;
}

void set_int_value(InferenceContext& ctx, const std::vector<int64_t>& v) {
  std::vector<Dim> dims;
  for (int64_t x : v) dims.push_back(Dim{x, {}, {}});  // negative numbers kept as is (Reshape's -1)
  tensor::set_value(ctx, 0, std::move(dims));
}

void infer_tensor_value(InferenceContext& ctx, const tessera::ir::Tensor& t) {
  set_output(ctx, 0, t.dtype, shape_of(t.dims));
  if (t.dims.size() > 1 || (t.dtype != DataType::kInt64 && t.dtype != DataType::kInt32)) return;
  auto n = t.numel();
  if (!n || *n > 64 || t.external) return;  // shape values are small; big ones are weights
  std::vector<int64_t> v;
  if (t.dtype == DataType::kInt64) {
    auto s = t.as<int64_t>();
    v.assign(s.begin(), s.end());
  } else {
    auto s = t.as<int32_t>();
    v.assign(s.begin(), s.end());
  }
  if (static_cast<int64_t>(v.size()) == *n) set_int_value(ctx, v);
}

void infer_constant(InferenceContext& ctx) {
  static const char* kNames[] = {"value",     "sparse_value", "value_float",  "value_floats",
                                 "value_int", "value_ints",   "value_string", "value_strings"};
  std::vector<std::string> set;
  for (const char* n : kNames) {
    if (ctx.has_attr(n)) set.push_back(n);
  }
  if (set.size() != 1) {
    ctx.fail(set.empty() ? std::string("Constant needs one value attribute, got none")
                         : fmt::format("Constant needs one value attribute, got {}: {}", set.size(),
                                       fmt::format("{}", fmt::join(set, ", "))));
  }
  const tessera::ir::Attribute& a = *ctx.node().attr(set[0]);
  const std::string& n = set[0];
  if (n == "value") {
    if (a.type != AttrType::kTensor || a.tensors.empty()) ctx.fail("attribute 'value' is not a tensor");
    return infer_tensor_value(ctx, a.tensors[0]);
  }
  if (n == "sparse_value") {
    if (a.type != AttrType::kSparseTensor || a.sparse_tensors.empty()) {
      ctx.fail("attribute 'sparse_value' is not a sparse tensor");
    }
    const auto& sp = a.sparse_tensors[0];
    return set_output(ctx, 0, sp.values.dtype, shape_of(sp.dims));
  }
  if (n == "value_float") return set_output(ctx, 0, DataType::kFloat, Shape{});
  if (n == "value_floats") return set_output(ctx, 0, DataType::kFloat, shape_of({int64_t(a.floats.size())}));
  if (n == "value_string") return set_output(ctx, 0, DataType::kString, Shape{});
  if (n == "value_strings")
    return set_output(ctx, 0, DataType::kString, shape_of({int64_t(a.strings.size())}));
  if (n == "value_int") {
    set_output(ctx, 0, DataType::kInt64, Shape{});
    return set_int_value(ctx, {a.i});
  }
  set_output(ctx, 0, DataType::kInt64, shape_of({int64_t(a.ints.size())}));
  set_int_value(ctx, a.ints);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_constant) {
  for (int v : {1, 9, 11, 12, 13, 19, 21, 23, 24, 25}) {
    OpSchema s("Constant", v);
    s.category(Category::kTensorCreation)
        .doc("Produces the constant tensor given in exactly one of its attributes.");
    if (v < 11) {
      s.attr("value", AttrType::kTensor, "The value.");
    } else {
      s.attr_optional("value", AttrType::kTensor, "The value.");
      s.attr_optional("sparse_value", AttrType::kSparseTensor, "The value, sparse; the output is dense.");
    }
    if (v >= 12) {
      s.attr_optional("value_float", AttrType::kFloat, "A float scalar.")
          .attr_optional("value_floats", AttrType::kFloats, "A 1-D float tensor.")
          .attr_optional("value_int", AttrType::kInt, "An int64 scalar.")
          .attr_optional("value_ints", AttrType::kInts, "A 1-D int64 tensor.")
          .attr_optional("value_string", AttrType::kString, "A string scalar.")
          .attr_optional("value_strings", AttrType::kStrings, "A 1-D string tensor.");
    }
    s.output("output", "T").types("T", v < 9 ? types::kFloat : tensor::all_types(v)).infer(infer_constant);
    reg.add(std::move(s));
  }
}
