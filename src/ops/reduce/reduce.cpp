// The Reduce* family: one reduction per op, all sharing schema history and shape inference.
//
// Schema history: opsets 1 and 11 (axes attribute; 11 allows negative axes), 13 (bfloat16), 18 (axes
// become an optional input, noop_with_empty_axes appears). ReduceSum moved to the input form at 13;
// ReduceMax/ReduceMin gained int8/uint8 at 12 and bool at 20.
#include <fmt/format.h>

#include <set>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// uint32, uint64, int32, int64 and the three float types: what reductions accepted before opset 12/13.
const std::vector<std::string> kReduceTypes =
    types::tensors({"uint32", "uint64", "int32", "int64", "float16", "float", "double"});

// Reduced axes, normalised; nullopt when they come from an input whose value is not known.
// An empty list means "no axes given".
std::optional<std::vector<int64_t>> reduce_axes(const InferenceContext& ctx, bool axes_from_input,
                                                int64_t rank) {
  std::vector<int64_t> axes;
  if (axes_from_input) {
    if (!ctx.has_input(1)) return axes;
    auto c = constant_ints(ctx, 1);
    if (!c) return std::nullopt;
    axes = *c;
  } else {
    axes = ctx.attr_ints("axes");
  }
  std::set<int64_t> seen;
  for (int64_t& a : axes) {
    a = normalize_axis(ctx, a, rank, "axes");
    if (!seen.insert(a).second) ctx.fail(fmt::format("axis {} is listed twice in 'axes'", a));
  }
  return axes;
}

void infer_reduce(InferenceContext& ctx, bool axes_from_input) {
  const Shape* in = input_shape(ctx, 0);
  auto elem = input_elem(ctx, 0);
  bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  bool noop_if_empty = axes_from_input && ctx.attr_int("noop_with_empty_axes", 0) != 0;
  if (const Shape* s = axes_from_input ? input_shape(ctx, 1) : nullptr; s && s->size() > 1) {
    ctx.fail_input(1,
                   fmt::format("input 'axes' must be 1-D, got shape {}", tessera::ir::shape_to_string(*s)));
  }
  if (!in) return set_output(ctx, 0, elem, std::nullopt);
  auto rank = static_cast<int64_t>(in->size());
  auto axes = reduce_axes(ctx, axes_from_input, rank);
  if (!axes) {
    // Which axes are reduced is not known: with keepdims the rank survives, the sizes do not.
    if (!keepdims) return set_output(ctx, 0, elem, std::nullopt);
    return set_output(ctx, 0, elem, Shape(in->size(), Dim::unknown()));
  }
  if (axes->empty() && noop_if_empty) return set_output(ctx, 0, elem, *in);
  std::set<int64_t> reduced(axes->begin(), axes->end());
  Shape out;
  for (int64_t k = 0; k < rank; ++k) {
    bool r = axes->empty() || reduced.count(k);
    if (!r) {
      out.push_back((*in)[k]);
    } else if (keepdims) {
      out.push_back(Dim::of(1));
    }
  }
  set_output(ctx, 0, elem, out);
}

void infer_reduce_attr_axes(InferenceContext& ctx) {
  infer_reduce(ctx, false);
}
void infer_reduce_input_axes(InferenceContext& ctx) {
  infer_reduce(ctx, true);
}

struct ReduceOp {
  const char* name;
  const char* doc;
  bool min_max;       // ReduceMax/ReduceMin: versions 12 and 20 too
  int input_axes_at;  // first opset taking axes as an input
};

void add_reduce(OpRegistry& reg, const ReduceOp& op) {
  std::string doc =
      std::string(op.doc) + " Without axes every axis is reduced; keepdims keeps reduced axes as size 1.";
  auto base = [&](int version) {
    OpSchema s(op.name, version);
    s.category(Category::kReduction).doc(doc).input("data", "T");
    return s;
  };
  std::vector<std::pair<int, std::vector<std::string>>> attr_versions = {{1, kReduceTypes},
                                                                         {11, kReduceTypes}};
  auto with_int8 = types::concat({kReduceTypes, types::tensors({"uint8", "int8"})});
  auto with_bf16 = types::concat({op.min_max ? with_int8 : kReduceTypes, types::tensors({"bfloat16"})});
  if (op.min_max) attr_versions.push_back({12, with_int8});
  if (op.input_axes_at > 13) attr_versions.push_back({13, with_bf16});
  for (auto& [version, allowed] : attr_versions) {
    reg.add(base(version)
                .output("reduced", "T")
                .types("T", allowed)
                .attr_optional("axes", tessera::ir::AttrType::kInts)
                .attr("keepdims", int64_t{1})
                .infer(infer_reduce_attr_axes));
  }
  std::vector<std::pair<int, std::vector<std::string>>> input_versions = {{op.input_axes_at, with_bf16}};
  if (op.min_max) input_versions.push_back({20, types::concat({with_bf16, types::tensors({"bool"})})});
  for (auto& [version, allowed] : input_versions) {
    reg.add(base(version)
                .optional_input("axes", "tensor(int64)")
                .output("reduced", "T")
                .types("T", allowed)
                .attr("keepdims", int64_t{1})
                .attr("noop_with_empty_axes", int64_t{0})
                .infer(infer_reduce_input_axes));
  }
}

}  // namespace

TESSERA_REGISTER_OPS(reduce_reduce) {
  const ReduceOp ops[] = {
      {"ReduceL1", "Sum of absolute values over the given axes.", false, 18},
      {"ReduceL2", "Euclidean norm (square root of the sum of squares) over the given axes.", false, 18},
      {"ReduceLogSum", "Natural logarithm of the sum over the given axes.", false, 18},
      {"ReduceLogSumExp", "log(sum(exp(x))) over the given axes, the smooth maximum.", false, 18},
      {"ReduceMax", "Largest element over the given axes.", true, 18},
      {"ReduceMean", "Arithmetic mean over the given axes.", false, 18},
      {"ReduceMin", "Smallest element over the given axes.", true, 18},
      {"ReduceProd", "Product of the elements over the given axes.", false, 18},
      {"ReduceSum", "Sum of the elements over the given axes.", false, 13},
      {"ReduceSumSquare", "Sum of squares over the given axes.", false, 18},
  };
  for (const ReduceOp& op : ops) add_reduce(reg, op);
}
