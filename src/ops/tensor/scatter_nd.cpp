// ScatterND: a copy of data with slices replaced at the positions the last index axis addresses.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Shape;

namespace {

void infer_scatter_nd(InferenceContext& ctx) {
  std::string r = ctx.attr_string("reduction", "none");
  bool minmax = ctx.opset() >= 18;
  if (r != "none" && r != "add" && r != "mul" && !(minmax && (r == "max" || r == "min"))) {
    ctx.fail(fmt::format("attribute 'reduction' is '{}'; expected 'none', 'add', 'mul'{}", r,
                         minmax ? ", 'max' or 'min'" : ""));
  }
  const Shape* data = input_shape(ctx, 0);
  const Shape* idx = input_shape(ctx, 1);
  const Shape* upd = input_shape(ctx, 2);
  if (data && data->empty()) ctx.fail_input(0, "input 'data' is a scalar; ScatterND needs rank >= 1");
  if (idx && idx->empty()) ctx.fail_input(1, "input 'indices' is a scalar; ScatterND needs rank >= 1");
  if (data && idx && upd && idx->back().is_static()) {
    int64_t k = idx->back().value;
    if (k < 1 || k > static_cast<int64_t>(data->size())) {
      ctx.fail_input(
          1, fmt::format("indices {} address {} axes but data {} has {}", tessera::ir::shape_to_string(*idx),
                         k, tessera::ir::shape_to_string(*data), data->size()));
    }
    // updates: indices.shape[:-1] + data.shape[k:]
    Shape want(idx->begin(), idx->end() - 1);
    want.insert(want.end(), data->begin() + k, data->end());
    bool ok = want.size() == upd->size();
    for (size_t d = 0; ok && d < want.size(); ++d) {
      ok = !(want[d].is_static() && (*upd)[d].is_static() && want[d].value != (*upd)[d].value);
    }
    if (!ok) {
      ctx.fail_input(2, fmt::format("updates {} should have shape {} (indices {} into data {})",
                                    tessera::ir::shape_to_string(*upd), tessera::ir::shape_to_string(want),
                                    tessera::ir::shape_to_string(*idx), tessera::ir::shape_to_string(*data)));
    }
  }
  propagate_type(ctx, 0, 0);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_scatter_nd) {
  for (int v : {11, 13, 16, 18}) {
    OpSchema s("ScatterND", v);
    s.category(Category::kTensorShape)
        .doc(
            "Copies data, then writes each update slice at the position its index row addresses, optionally "
            "combining with the old values.");
    if (v >= 16)
      s.attr("reduction", "none",
             "How an update combines with the old value: none, add, mul, max, min (18+).");
    s.input("data", "T")
        .input("indices", "tensor(int64)")
        .input("updates", "T")
        .output("output", "T")
        .types("T", tensor::all_types(v))
        .infer(infer_scatter_nd);
    reg.add(std::move(s));
  }
}
