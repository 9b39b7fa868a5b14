// Slice: a strided window of the input along some axes.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

struct SliceArgs {
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
};

// Slice-1 takes attributes; from 10 the same lists are inputs (axes and steps optional).
SliceArgs args_of(const InferenceContext& ctx) {
  SliceArgs a;
  if (ctx.opset() < 10) {
    a.starts = ctx.attr_ints("starts");
    a.ends = ctx.attr_ints("ends");
    if (ctx.has_attr("axes")) a.axes = ctx.attr_ints("axes");
    a.steps = std::vector<int64_t>(a.starts->size(), 1);
    return a;
  }
  for (size_t i = 1; i < 5; ++i) {
    if (ctx.has_input(i)) require_rank(ctx, i, 1, fmt::format("input {}", i));
  }
  a.starts = tensor::static_ints(ctx, 1);
  a.ends = tensor::static_ints(ctx, 2);
  if (ctx.has_input(3)) a.axes = tensor::static_ints(ctx, 3);
  if (ctx.has_input(4)) {
    a.steps = tensor::static_ints(ctx, 4);
  } else if (a.starts) {
    a.steps = std::vector<int64_t>(a.starts->size(), 1);
  }
  return a;
}

// Length of the window [start, end) by step over a dimension of size n, as the spec clamps it.
int64_t window_length(int64_t start, int64_t end, int64_t step, int64_t n) {
  if (n == 0) return 0;
  if (start < 0) start += n;
  if (end < 0) end += n;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, 0, n);
    return end > start ? (end - start + step - 1) / step : 0;
  }
  start = std::clamp<int64_t>(start, 0, n - 1);
  end = std::clamp<int64_t>(end, -1, n - 1);
  return start > end ? (start - end - step - 1) / -step : 0;
}

Dim slice_dim(const Dim& d, int64_t start, int64_t end, int64_t step) {
  if (d.is_static()) return Dim::of(window_length(start, end, step, d.value));
  // The whole axis, whatever its size: keeps a symbol.
  if (step == 1 && start == 0 && end >= std::numeric_limits<int32_t>::max()) return d;
  return Dim::unknown();
}

void infer_slice(InferenceContext& ctx) {
  SliceArgs a = args_of(ctx);
  const Shape* s = input_shape(ctx, 0);
  if (!s) return propagate_elem(ctx, 0, 0, std::nullopt);
  int64_t rank = static_cast<int64_t>(s->size());
  if (!a.starts || !a.ends || (ctx.has_input(3) && !a.axes) || !a.steps) {
    // Which axes or how far is unknown; the rank stays. Known axes keep the other dimensions.
    Shape out = *s;
    if (a.axes) {
      for (int64_t ax : tensor::normalize_axes(ctx, *a.axes, rank)) out[ax] = Dim::unknown();
    } else {
      out = Shape(s->size());
    }
    return propagate_elem(ctx, 0, 0, out);
  }
  size_t n = a.starts->size();
  if (a.ends->size() != n || (a.axes && a.axes->size() != n) || a.steps->size() != n) {
    ctx.fail(fmt::format("starts {}, ends {}{}{} must have the same length", tensor::ints_string(*a.starts),
                         tensor::ints_string(*a.ends), a.axes ? ", axes " + tensor::ints_string(*a.axes) : "",
                         ", steps " + tensor::ints_string(*a.steps)));
  }
  std::vector<int64_t> axes;
  if (a.axes) {
    axes = tensor::normalize_axes(ctx, *a.axes, rank);
  } else {
    if (static_cast<int64_t>(n) > rank) ctx.fail(fmt::format("{} starts for a rank-{} input", n, rank));
    for (size_t k = 0; k < n; ++k) axes.push_back(static_cast<int64_t>(k));
  }
  Shape out = *s;
  for (size_t k = 0; k < n; ++k) {
    if ((*a.steps)[k] == 0) ctx.fail(fmt::format("step 0 for axis {}", axes[k]));
    out[axes[k]] = slice_dim((*s)[axes[k]], (*a.starts)[k], (*a.ends)[k], (*a.steps)[k]);
  }
  propagate_elem(ctx, 0, 0, out);
  // Slicing a shape value (Shape -> Slice) keeps the picked dimensions.
  const auto* v = ctx.input_shape_value(0);
  if (!v || v->empty() || rank != 1 || n != 1) return;
  int64_t len = static_cast<int64_t>(v->size()), step = (*a.steps)[0];
  int64_t start = (*a.starts)[0] < 0 ? (*a.starts)[0] + len : (*a.starts)[0];
  int64_t end = (*a.ends)[0] < 0 ? (*a.ends)[0] + len : (*a.ends)[0];
  std::vector<Dim> value;
  if (step > 0) {
    for (int64_t i = std::clamp<int64_t>(start, 0, len); i < std::clamp<int64_t>(end, 0, len); i += step) {
      value.push_back((*v)[i]);
    }
  } else {
    for (int64_t i = std::clamp<int64_t>(start, 0, len - 1); i > std::clamp<int64_t>(end, -1, len - 1);
         i += step) {
      value.push_back((*v)[i]);
    }
  }
  tensor::set_value(ctx, 0, std::move(value));
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_slice) {
  const char* doc =
      "Takes elements from 'starts' up to (not including) 'ends' along the given axes, every 'steps'-th; "
      "negative positions count from the end and out-of-range ones are clamped.";
  reg.add(OpSchema("Slice", 1)
              .category(Category::kTensorShape)
              .doc(doc)
              .attr_optional("axes", tessera::ir::AttrType::kInts,
                             "Axes of starts and ends; the first ones when not set.")
              .attr("ends", tessera::ir::AttrType::kInts, "End of each window (exclusive).")
              .attr("starts", tessera::ir::AttrType::kInts, "Start of each window.")
              .input("data", "T")
              .output("output", "T")
              .types("T", types::kAllTensor)
              .infer(infer_slice));
  for (int v : {10, 11, 13}) {
    reg.add(OpSchema("Slice", v)
                .category(Category::kTensorShape)
                .doc(doc)
                .input("data", "T")
                .input("starts", "Tind")
                .input("ends", "Tind")
                .optional_input("axes", "Tind")
                .optional_input("steps", "Tind")
                .output("output", "T")
                .types("T", tensor::all_types(v))
                .types("Tind", types::tensors({"int32", "int64"}))
                .infer(infer_slice));
  }
}
