// GlobalAveragePool, GlobalMaxPool and GlobalLpPool: one value per channel over all spatial axes.
#include "ops/infer_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// [N, C, D1, ...] -> [N, C, 1, ...]: the spatial axes are kept, with size 1.
void infer_global_pool(InferenceContext& ctx) {
  const Shape* xs = input_shape(ctx, 0);
  if (!xs) return propagate_elem(ctx, 0, 0, std::nullopt);
  nn::require_nc(ctx, 0, *xs, "X");
  Shape y = *xs;
  for (size_t i = 2; i < y.size(); ++i) y[i] = Dim::of(1);
  propagate_elem(ctx, 0, 0, y);
}

OpSchema global_schema(const char* name, int v, const char* doc) {
  OpSchema s(name, v);
  s.category(Category::kPooling)
      .doc(doc)
      .input("X", "T")
      .output("Y", "T")
      .types("T", nn::float_types(v))
      .infer(infer_global_pool);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(nn_global_pool) {
  for (int v : {1, 22}) {
    reg.add(global_schema("GlobalAveragePool", v, "Averages each channel over all its spatial positions."));
    reg.add(global_schema("GlobalMaxPool", v,
                          "Takes the maximum of each channel over all its spatial positions."));
  }
  const char* lp_doc = "Takes the p-norm of each channel over all its spatial positions.";
  reg.add(global_schema("GlobalLpPool", 1, lp_doc).attr("p", 2.0f));
  for (int v : {2, 22}) reg.add(global_schema("GlobalLpPool", v, lp_doc).attr("p", int64_t{2}));
}
