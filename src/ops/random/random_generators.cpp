// RandomNormal and RandomUniform: tensors of random numbers whose shape and type come from attributes.
#include <fmt/format.h>

#include "ops/dtype_attr.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::AttrType;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// The output's type is the `dtype` attribute (float by default), its shape the `shape` attribute.
void infer_random_from_attrs(InferenceContext& ctx) {
  DataType elem = dtype_attr(ctx, "dtype", "T").value_or(DataType::kFloat);
  if (!ctx.has_attr("shape")) ctx.fail("attribute 'shape' is required");
  Shape shape;
  for (int64_t d : ctx.attr_ints("shape")) {
    if (d < 0) ctx.fail(fmt::format("attribute 'shape' has a negative dimension {}", d));
    shape.push_back(Dim::of(d));
  }
  set_output(ctx, 0, elem, std::move(shape));
}

OpSchema generator(const char* name, int version, const char* doc, const char* a, float a_default,
                   const char* b, float b_default) {
  OpSchema s(name, version);
  s.category(Category::kTensorCreation)
      .doc(doc)
      .output("output", "T")
      .attr("dtype", int64_t{1})
      .attr(a, a_default)
      .attr(b, b_default)
      .attr_optional("seed", AttrType::kFloat)
      .attr("shape", AttrType::kInts)
      .types("T", version >= 22 ? types::kFloatBf16 : types::kFloat)
      .infer(infer_random_from_attrs);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(random_random_generators) {
  const char* normal_doc =
      "Fills a tensor of the shape given by attribute 'shape' with samples of a normal distribution of the "
      "given mean and scale (standard deviation).";
  const char* uniform_doc =
      "Fills a tensor of the shape given by attribute 'shape' with samples drawn uniformly from [low, high).";
  for (int v : {1, 22}) {
    reg.add(generator("RandomNormal", v, normal_doc, "mean", 0.0f, "scale", 1.0f));
    reg.add(generator("RandomUniform", v, uniform_doc, "high", 1.0f, "low", 0.0f));
  }
}
