// eliminate_nop (basic): operators that, as parameterised, return their input unchanged: Transpose by
// the identity permutation, Reshape or Expand to the shape the input already has, Cast to the type it
// already has, Pad by zeros, Slice of everything, Concat of one input. Their readers read the input.
#include <limits>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

bool is_identity_perm(const std::vector<int64_t>& perm) {
  for (size_t k = 0; k < perm.size(); ++k)
    if (perm[k] != static_cast<int64_t>(k)) return false;
  return true;
}

bool all_zero(const std::optional<std::vector<int64_t>>& v) {
  if (!v) return false;
  for (int64_t x : *v)
    if (x != 0) return false;
  return true;
}

// The shape-like operand of ops that moved from attributes to inputs (Pad 11, Slice 10).
std::optional<std::vector<int64_t>> operand(const RuleContext& ctx, const ir::Node& n, size_t input,
                                            std::string_view attr, bool from_attr) {
  if (from_attr) return attr_ints(n, attr);
  if (input >= n.inputs.size() || n.inputs[input].empty()) return std::nullopt;
  return constant_ints(ctx.graph, n.inputs[input]);
}

bool same_static_shape(const RuleContext& ctx, const ir::Node& n) {
  auto in = static_shape(ctx, n.inputs[0]);
  auto out = static_shape(ctx, n.outputs[0]);
  return in && out && *in == *out;
}

bool pad_is_nop(const RuleContext& ctx, const ir::Node& n) {
  return all_zero(operand(ctx, n, 1, "pads", onnx_opset(ctx.model) < 11));
}

// Slice keeps everything when every sliced axis starts at 0, steps by 1 and ends past its size.
bool slice_is_nop(const RuleContext& ctx, const ir::Node& n) {
  bool attrs = onnx_opset(ctx.model) < 10;
  auto starts = operand(ctx, n, 1, "starts", attrs);
  auto ends = operand(ctx, n, 2, "ends", attrs);
  if (!starts || !ends || !all_zero(starts) || starts->size() != ends->size()) return false;
  bool has_axes = attrs ? n.attr("axes") != nullptr : n.inputs.size() > 3 && !n.inputs[3].empty();
  bool has_steps = !attrs && n.inputs.size() > 4 && !n.inputs[4].empty();
  auto steps = has_steps ? constant_ints(ctx.graph, n.inputs[4]) : std::vector<int64_t>(ends->size(), 1);
  if (!steps || steps->size() != ends->size()) return false;
  for (int64_t s : *steps)
    if (s != 1) return false;
  auto dims = static_shape(ctx, n.inputs[0]);
  std::vector<int64_t> axes(ends->size());
  for (size_t k = 0; k < axes.size(); ++k) axes[k] = static_cast<int64_t>(k);
  if (has_axes) {
    auto a = operand(ctx, n, 3, "axes", attrs);
    if (!a || a->size() != ends->size()) return false;
    axes = *a;
  }
  constexpr int64_t kHuge = std::numeric_limits<int32_t>::max();  // "to the end" as exporters write it
  for (size_t k = 0; k < ends->size(); ++k) {
    if ((*ends)[k] >= kHuge) continue;
    if (!dims) return false;
    int64_t axis = axes[k] < 0 ? axes[k] + static_cast<int64_t>(dims->size()) : axes[k];
    if (axis < 0 || axis >= static_cast<int64_t>(dims->size()) || (*ends)[k] < (*dims)[axis]) return false;
  }
  return true;
}

bool is_nop(const RuleContext& ctx, const ir::Node& n) {
  if (!ir::canonical_domain(n.domain).empty() || n.inputs.empty() || n.outputs.size() != 1) return false;
  const std::string& op = n.op_type;
  if (op == "Transpose") {
    auto perm = attr_ints(n, "perm");
    return perm && is_identity_perm(*perm);
  }
  if (op == "Reshape" || op == "Expand") return same_static_shape(ctx, n);
  if (op == "Cast") {
    ir::DataType in = elem_type(ctx, n.inputs[0]);
    return in != ir::DataType::kUndefined && static_cast<int64_t>(in) == attr_int(n, "to", -1);
  }
  if (op == "Pad") return pad_is_nop(ctx, n);
  if (op == "Slice") return slice_is_nop(ctx, n);
  if (op == "Concat") return n.inputs.size() == 1;
  return false;
}

bool eliminate_nop(RuleContext& ctx, size_t i) {
  const ir::Node& n = ctx.graph.nodes[i];
  if (!is_nop(ctx, n)) return false;
  std::vector<std::string> inputs = n.inputs;
  if (!bypass_node(ctx.graph, i, inputs[0])) return false;
  drop_unused_initializers(ctx.graph, inputs);
  keep_type_cache(ctx);  // every remaining value keeps its type
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(eliminate_nop) {
  reg.add({"eliminate_nop", tessera::passes::OptLevel::kBasic, 40, tessera::passes::eliminate_nop});
}
