// Transpose: permutes the axes.
#include <fmt/format.h>

#include <algorithm>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Shape;

namespace {

void infer_transpose(InferenceContext& ctx) {
  const Shape* s = input_shape(ctx, 0);
  if (!s) return propagate_elem(ctx, 0, 0, std::nullopt);
  size_t rank = s->size();
  std::vector<int64_t> perm = ctx.attr_ints("perm");
  if (!ctx.has_attr("perm")) {
    for (size_t k = 0; k < rank; ++k)
      perm.push_back(static_cast<int64_t>(rank - 1 - k));  // reverse by default
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool ok = sorted.size() == rank;
  for (size_t k = 0; ok && k < rank; ++k) ok = sorted[k] == static_cast<int64_t>(k);
  if (!ok) {
    ctx.fail(fmt::format("perm {} is not a permutation of the {} axes of {}", tensor::ints_string(perm), rank,
                         tessera::ir::shape_to_string(*s)));
  }
  Shape out;
  for (int64_t p : perm) out.push_back((*s)[p]);
  propagate_elem(ctx, 0, 0, out);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_transpose) {
  for (int v : {1, 13, 21, 23, 24, 25}) {
    reg.add(OpSchema("Transpose", v)
                .category(Category::kTensorShape)
                .doc("Permutes the axes: output axis i is input axis perm[i] (reversed order by default).")
                .attr_optional("perm", tessera::ir::AttrType::kInts,
                               "The permutation; reversed axes when not set.")
                .input("data", "T")
                .output("transposed", "T")
                .types("T", tensor::all_types(v))
                .infer(infer_transpose));
  }
}
