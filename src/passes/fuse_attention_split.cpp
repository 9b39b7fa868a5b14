#include "passes/fuse_attention_split.h"

#include <algorithm>

namespace tessera::passes::attn {
namespace {

constexpr int kGuard = 8;  // nodes followed through one Reshape target

// One entry of a Reshape target: a constant, or the size of axis `axis` of `of` (Shape(of)[axis]).
struct TargetDim {
  int64_t value = 0;
  std::string of;
  int64_t axis = -1;
};

// The entries of a Reshape target made of constants, Concat, Unsqueeze/Squeeze/Cast/Identity, Shape
// (with start/end) and Gathers of constant indices from a Shape: what exporters write for x.size(0);
// nullopt for anything else. `nodes` collects the nodes that compute it.
std::optional<std::vector<TargetDim>> target_dims(const RuleContext& ctx, const std::string& v,
                                                  std::vector<size_t>& nodes, int depth = 0) {
  const ir::Graph& g = ctx.graph;
  if (auto c = constant_ints(g, v)) {
    std::vector<TargetDim> out;
    for (int64_t x : *c) out.push_back({x, {}, -1});
    return out;
  }
  auto p = producer(g, v);
  if (!p || depth > kGuard) return std::nullopt;
  const ir::Node& n = g.nodes[*p];
  if (n.outputs.size() != 1 || n.inputs.empty()) return std::nullopt;
  nodes.push_back(*p);
  if (is_op(n, "Concat")) {
    std::vector<TargetDim> out;
    for (const auto& in : n.inputs) {
      auto part = target_dims(ctx, in, nodes, depth + 1);
      if (!part) return std::nullopt;
      out.insert(out.end(), part->begin(), part->end());
    }
    return out;
  }
  if (is_op(n, "Unsqueeze") || is_op(n, "Squeeze") || is_op(n, "Cast") || is_op(n, "Identity")) {
    auto inner = target_dims(ctx, n.inputs[0], nodes, depth + 1);
    const bool one = is_op(n, "Unsqueeze") || is_op(n, "Squeeze");  // of a scalar or a [1]
    if (!inner || (one && inner->size() != 1)) return std::nullopt;
    return inner;
  }
  // A Shape node's input and the axes [start, end) it reports (opset 15's start/end, clamped).
  struct ShapeOf {
    std::string of;
    int64_t start = 0, end = 0;
  };
  auto shape_of = [&](size_t at) -> std::optional<ShapeOf> {
    const ir::Node& sh = g.nodes[at];
    if (!is_op(sh, "Shape") || sh.inputs.size() != 1) return std::nullopt;
    auto t = value_type(ctx, sh.inputs[0]);
    if (!t || !t->shape) return std::nullopt;
    const auto rank = static_cast<int64_t>(t->shape->size());
    auto clamp = [&](int64_t x) { return std::clamp(x < 0 ? x + rank : x, int64_t{0}, rank); };
    ShapeOf out{sh.inputs[0], clamp(attr_int(sh, "start", 0)), clamp(attr_int(sh, "end", rank))};
    if (out.end <= out.start) return std::nullopt;
    return out;
  };
  if (is_op(n, "Shape")) {  // Shape(x, start, end) itself: dynamo's sym_size of one axis
    auto src = shape_of(*p);
    if (!src) return std::nullopt;
    std::vector<TargetDim> out;
    for (int64_t a = src->start; a < src->end; ++a) out.push_back({0, src->of, a});
    return out;
  }
  if (is_op(n, "Gather") && n.inputs.size() == 2 && attr_int(n, "axis", 0) == 0) {
    auto idx = constant_ints(g, n.inputs[1]);
    auto sp = producer(g, n.inputs[0]);
    if (!idx || !sp) return std::nullopt;
    nodes.push_back(*sp);
    auto src = shape_of(*sp);
    if (!src) return std::nullopt;
    const int64_t len = src->end - src->start;
    std::vector<TargetDim> out;
    for (int64_t i : *idx) {
      if (i < 0) i += len;
      if (i < 0 || i >= len) return std::nullopt;
      out.push_back({0, src->of, src->start + i});
    }
    return out;
  }
  return std::nullopt;
}

bool same_dim(const ir::Dim& a, const ir::Dim& b) {
  return (a.is_static() && b.is_static() && a.value == b.value) || (a.is_symbolic() && a == b);
}

// Whether target entry `t` at leading position k gives axis k of the Split's outputs, i.e. of P: a 0
// (copied from the Reshape's input), P's static size, or the size of axis k of P, of one of the Split's
// outputs or of a tensor whose axis the types say is the same size.
bool keeps_axis(const RuleContext& ctx, const TargetDim& t, size_t k, const ir::Node& split,
                const ir::Shape& ps, bool allowzero) {
  if (t.of.empty()) return (t.value == 0 && !allowzero) || (ps[k].is_static() && t.value == ps[k].value);
  if (t.axis != static_cast<int64_t>(k)) {
    auto ty = value_type(ctx, t.of);
    return ty && ty->shape && t.axis < static_cast<int64_t>(ty->shape->size()) &&
           same_dim((*ty->shape)[static_cast<size_t>(t.axis)], ps[k]);
  }
  if (t.of == split.inputs[0]) return true;
  if (std::find(split.outputs.begin(), split.outputs.end(), t.of) != split.outputs.end()) return true;
  auto ty = value_type(ctx, t.of);
  return ty && ty->shape && static_cast<size_t>(t.axis) < ty->shape->size() &&
         same_dim((*ty->shape)[k], ps[k]);
}

// The Split's part sizes along its axis of size `dim`: all equal to dim / parts, or nullopt.
std::optional<int64_t> equal_parts(const ir::Graph& g, const ir::Node& split, int64_t dim) {
  const auto parts = static_cast<int64_t>(split.outputs.size());
  if (parts < 2 || dim % parts != 0) return std::nullopt;
  const int64_t each = dim / parts;
  std::optional<std::vector<int64_t>> sizes;
  if (split.inputs.size() > 1 && !split.inputs[1].empty()) {
    sizes = constant_ints(g, split.inputs[1]);
    if (!sizes) return std::nullopt;
  } else {
    sizes = attr_ints(split, "split");
  }
  if (sizes && (sizes->size() != split.outputs.size() ||
                std::any_of(sizes->begin(), sizes->end(), [&](int64_t s) { return s != each; })))
    return std::nullopt;
  return each;  // no sizes: equal parts (num_outputs, or the outputs' count before opset 18)
}

}  // namespace

std::optional<SplitOperand> split_operand(const RuleContext& ctx, const std::string& value,
                                          const std::vector<int64_t>& axes) {
  const ir::Graph& g = ctx.graph;
  if (axes.size() != 4 || axes[3] != 3) return std::nullopt;  // the head size innermost, as the kernel reads
  auto r = producer(g, value);
  if (!r || !is_op(g.nodes[*r], "Reshape") || g.nodes[*r].inputs.size() != 2) return std::nullopt;
  const ir::Node& reshape = g.nodes[*r];
  auto s = producer(g, reshape.inputs[0]);
  if (!s || !is_op(g.nodes[*s], "Split")) return std::nullopt;
  const ir::Node& split = g.nodes[*s];
  const std::string& base = split.inputs[0];
  auto bt = value_type(ctx, base), rt = value_type(ctx, value);
  if (!bt || !rt || !bt->shape || !rt->shape || bt->shape->size() != 3 || rt->shape->size() != 4)
    return std::nullopt;
  const ir::Shape &ps = *bt->shape, &rs = *rt->shape;
  constexpr size_t kRank = 3;
  int64_t split_axis = attr_int(split, "axis", 0);
  if (split_axis < 0) split_axis += kRank;
  if (split_axis != kRank - 1 || !ps[kRank - 1].is_static()) return std::nullopt;
  auto each = equal_parts(g, split, ps[kRank - 1].value);
  if (!each) return std::nullopt;
  // The head split: the last axis into [H, D] (static, H * D the part's size), the leading ones kept.
  const bool allowzero = attr_int(reshape, "allowzero", 0) != 0;
  std::vector<size_t> target_nodes;
  auto target = target_dims(ctx, reshape.inputs[1], target_nodes);
  int64_t h = rs[2].is_static() ? rs[2].value : -1, d = rs[3].is_static() ? rs[3].value : -1;
  if (target && target->size() == 4) {
    if ((*target)[2].of.empty()) h = (*target)[2].value;
    if ((*target)[3].of.empty()) d = (*target)[3].value;
  }
  if (h <= 0 || d < 2 || h * d != *each) return std::nullopt;
  // Each leading axis kept; one -1 among them is then the one left over, which is P's size too.
  int inferred = 0;
  for (size_t k = 0; k + 1 < kRank; ++k) {
    if (same_dim(rs[k], ps[k])) continue;
    if (!target || target->size() != 4) return std::nullopt;
    const TargetDim& t = (*target)[k];
    if (t.of.empty() && t.value == -1 && ++inferred == 1) continue;
    if (!keeps_axis(ctx, t, k, split, ps, allowzero)) return std::nullopt;
  }
  if (inferred > 1) return std::nullopt;
  SplitOperand out;
  out.base = base;
  out.shape = {0, 0, static_cast<int64_t>(split.outputs.size()), h, d};
  // The operand's axes 0, 1 (leading) stay; 2, 3 (heads, size) move past the parts' axis.
  for (int64_t a : axes) out.axes.push_back(a < 2 ? a : a + 1);
  out.part = std::find(split.outputs.begin(), split.outputs.end(), reshape.inputs[0]) - split.outputs.begin();
  out.reshape = *r;
  if (target) out.target_nodes = std::move(target_nodes);
  return out;
}

}  // namespace tessera::passes::attn
