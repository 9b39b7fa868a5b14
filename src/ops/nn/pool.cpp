// Sliding-window pooling: AveragePool, MaxPool (with its optional Indices output) and LpPool.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::AttrType;
using tessera::ir::DataType;
using tessera::ir::Shape;

namespace {

void infer_pool(InferenceContext& ctx) {
  const Shape* xs = input_shape(ctx, 0);
  if (!xs) {
    propagate_elem(ctx, 0, 0, std::nullopt);
    set_output(ctx, 1, DataType::kInt64, std::nullopt);
    return;
  }
  nn::require_nc(ctx, 0, *xs, "X");
  int64_t storage_order = ctx.attr_int("storage_order", 0);
  if (storage_order != 0 && storage_order != 1) {
    ctx.fail(fmt::format("storage_order is {}; it must be 0 (row major) or 1 (column major)", storage_order));
  }
  auto w = nn::read_window(ctx, xs->size() - 2, std::nullopt);
  Shape y = nn::window_output_shape(ctx, *xs, (*xs)[1], w);
  propagate_elem(ctx, 0, 0, y);
  set_output(ctx, 1, DataType::kInt64, y);  // MaxPool's Indices: one flat index per output value
}

// Attributes common to all pooling ops of a version; `with` lists the later additions.
struct PoolAttrs {
  bool ceil_mode = false, dilations = false, count_include_pad = false, storage_order = false;
  bool kernel_required = true;
};

OpSchema pool_schema(const char* name, int v, const PoolAttrs& a, std::vector<std::string> t,
                     const char* doc) {
  OpSchema s(name, v);
  s.category(Category::kPooling)
      .doc(doc)
      .input("X", "T")
      .output("Y", "T")
      .types("T", std::move(t))
      .infer(infer_pool);
  s.attr("auto_pad", "NOTSET");
  if (a.ceil_mode) s.attr("ceil_mode", int64_t{0});
  if (a.count_include_pad) s.attr("count_include_pad", int64_t{0});
  if (a.dilations) s.attr_optional("dilations", AttrType::kInts);
  if (a.kernel_required) {
    s.attr("kernel_shape", AttrType::kInts);
  } else {
    s.attr_optional("kernel_shape", AttrType::kInts);
  }
  s.attr_optional("pads", AttrType::kInts);
  if (a.storage_order) s.attr("storage_order", int64_t{0});
  s.attr_optional("strides", AttrType::kInts);
  return s;
}

const char* kAvgDoc =
    "Averages each kernel-sized window of X. Padded positions count in the divisor only with "
    "count_include_pad.";
const char* kMaxDoc =
    "Takes the maximum of each kernel-sized window of X; the optional Indices output gives where each "
    "maximum "
    "came from as a flat index into X.";
const char* kLpDoc = "Takes the p-norm (the p-th root of the sum of |x|^p) of each kernel-sized window of X.";

}  // namespace

TESSERA_REGISTER_OPS(nn_pool) {
  reg.add(pool_schema("AveragePool", 1, {}, types::kFloat, kAvgDoc));
  reg.add(pool_schema("AveragePool", 7, {.count_include_pad = true}, types::kFloat, kAvgDoc));
  for (int v : {10, 11}) {
    reg.add(pool_schema("AveragePool", v, {.ceil_mode = true, .count_include_pad = true}, types::kFloat,
                        kAvgDoc));
  }
  for (int v : {19, 22}) {
    reg.add(pool_schema("AveragePool", v, {.ceil_mode = true, .dilations = true, .count_include_pad = true},
                        nn::float_types(v), kAvgDoc));
  }

  reg.add(pool_schema("MaxPool", 1, {}, types::kFloat, kMaxDoc));
  for (int v : {8, 10, 11, 12, 22}) {
    PoolAttrs a{.ceil_mode = v >= 10, .dilations = v >= 10, .storage_order = true};
    std::vector<std::string> t = nn::float_types(v);
    if (v >= 12) t = types::concat({t, types::tensors({"int8", "uint8"})});
    OpSchema s = pool_schema("MaxPool", v, a, t, kMaxDoc);
    s.optional_output("Indices", "I").types("I", types::tensors({"int64"}));
    reg.add(std::move(s));
  }

  OpSchema lp1 = pool_schema("LpPool", 1, {.kernel_required = false}, types::kFloat, kLpDoc);
  reg.add(std::move(lp1.attr("p", 2.0f)));
  for (int v : {2, 11, 18, 22}) {
    OpSchema s =
        pool_schema("LpPool", v, {.ceil_mode = v >= 18, .dilations = v >= 18}, nn::float_types(v), kLpDoc);
    reg.add(std::move(s.attr("p", int64_t{2})));
  }
}
