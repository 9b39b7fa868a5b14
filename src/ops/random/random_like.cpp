// RandomNormalLike and RandomUniformLike: random tensors shaped like their input.
#include <fmt/format.h>

#include "ops/dtype_attr.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::AttrType;
using tessera::ir::DataType;

namespace {

// The output takes the input's shape; its type is `dtype`, else the input's own type, which must then be
// one the output allows (an int64 input needs an explicit float `dtype`).
void infer_random_like(InferenceContext& ctx) {
  const tessera::ir::Shape* shape = input_shape(ctx, 0);
  std::optional<tessera::ir::Shape> out_shape;
  if (shape) out_shape = *shape;
  std::optional<DataType> elem = dtype_attr(ctx, "dtype", "T2");
  if (!elem) {
    DataType in = input_elem(ctx, 0);
    if (in == DataType::kUndefined) return;  // the type is unknown until the input's is
    if (!dtype_allowed(ctx, in, "T2")) {
      ctx.fail_input(0, fmt::format("input is {} and attribute 'dtype' is not set; random values can only be "
                                    "floating point, so set 'dtype'",
                                    tessera::ir::dtype_name(in)));
    }
    elem = in;
  }
  set_output(ctx, 0, *elem, std::move(out_shape));
}

OpSchema like(const char* name, int version, const char* doc, const char* a, float a_default, const char* b,
              float b_default) {
  OpSchema s(name, version);
  s.category(Category::kTensorCreation)
      .doc(doc)
      .input("input", "T1")
      .output("output", "T2")
      .attr_optional("dtype", AttrType::kInt)
      .attr(a, a_default)
      .attr(b, b_default)
      .attr_optional("seed", AttrType::kFloat)
      .types("T1", version >= 22 ? types::kAllTensorIr4 : types::kAllTensor)
      .types("T2", version >= 22 ? types::kFloatBf16 : types::kFloat)
      .infer(infer_random_like);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(random_random_like) {
  const char* normal_doc =
      "Fills a tensor shaped like the input with samples of a normal distribution of the given mean and "
      "scale; "
      "the input's values are ignored.";
  const char* uniform_doc =
      "Fills a tensor shaped like the input with samples drawn uniformly from [low, high); the input's "
      "values "
      "are ignored.";
  for (int v : {1, 22}) {
    reg.add(like("RandomNormalLike", v, normal_doc, "mean", 0.0f, "scale", 1.0f));
    reg.add(like("RandomUniformLike", v, uniform_doc, "high", 1.0f, "low", 0.0f));
  }
}
