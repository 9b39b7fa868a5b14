// fold_transpose_reshape_chain (basic; again after the NHWC layout pass): a chain of Transpose and
// Reshape nodes whose composite keeps the elements in memory order is one Reshape. Example: the NHWC
// patch embedding's output [N, 14, 14, 768] read through Transpose to NCHW, Reshape [N, 768, 196] and
// Transpose(0, 2, 1) to [N, 196, 768] (ViT): two copies that together only regroup axes.
//
// The test follows the elements as a strided view of the chain's input: a Transpose permutes the view's
// sizes and strides; a Reshape is taken only where it can stay a view (each group of axes it merges or
// splits is contiguous within the view; otherwise the rule gives up, since the composite then moves
// elements). The chain is a reshape exactly when the final view is the row-major layout of its shape
// (axes of size 1 aside). The longest such chain ending at the node becomes Reshape(input, static output
// shape); nodes of the chain nothing else reads go with it. Static shapes only, and at least one Transpose
// (chains of Reshapes are fuse_consecutive_reshapes').
#include <optional>
#include <vector>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

constexpr size_t kMaxChain = 8;

// A strided view of the chain's input: element (i0, i1, ...) at sum i_k * strides[k].
struct View {
  std::vector<int64_t> dims, strides;
};

View row_major(const std::vector<int64_t>& dims) {
  View v{dims, std::vector<int64_t>(dims.size(), 1)};
  for (size_t k = dims.size(); k-- > 1;) v.strides[k - 1] = v.strides[k] * dims[k];
  return v;
}

bool is_row_major(const View& v) {
  int64_t expect = 1;
  for (size_t k = v.dims.size(); k-- > 0;) {
    if (v.dims[k] == 1) continue;
    if (v.strides[k] != expect) return false;
    expect *= v.dims[k];
  }
  return true;
}

std::optional<View> transposed(const View& v, const std::vector<int64_t>& perm) {
  if (perm.size() != v.dims.size()) return std::nullopt;
  View out;
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)]) return std::nullopt;
    seen[static_cast<size_t>(p)] = true;
    out.dims.push_back(v.dims[static_cast<size_t>(p)]);
    out.strides.push_back(v.strides[static_cast<size_t>(p)]);
  }
  return out;
}

// `v` regrouped to `dims` without moving elements: walking both shapes from the innermost axis, each
// stretch of the view's axes that is contiguous in memory (stride[k-1] == stride[k] * dims[k]) must be
// covered exactly by whole axes of the new shape, which then get strides inside that stretch.
std::optional<View> reshaped(const View& v, const std::vector<int64_t>& dims) {
  View out{dims, std::vector<int64_t>(dims.size(), 0)};
  // The view's axes of size 1 have no say in where elements are.
  std::vector<int64_t> vd, vs;
  for (size_t k = 0; k < v.dims.size(); ++k) {
    if (v.dims[k] == 1) continue;
    vd.push_back(v.dims[k]);
    vs.push_back(v.strides[k]);
  }
  auto nd = static_cast<int64_t>(dims.size()) - 1;  // next new axis to place, from the innermost
  for (auto k = static_cast<int64_t>(vd.size()) - 1; k >= 0;) {
    // The contiguous stretch of view axes [first, k].
    int64_t first = k, stretch = vd[static_cast<size_t>(k)];
    while (first > 0 && vs[static_cast<size_t>(first - 1)] ==
                            vs[static_cast<size_t>(first)] * vd[static_cast<size_t>(first)]) {
      --first;
      stretch *= vd[static_cast<size_t>(first)];
    }
    const int64_t base = vs[static_cast<size_t>(k)];
    int64_t covered = 1;
    while (nd >= 0 && (covered < stretch || dims[static_cast<size_t>(nd)] == 1)) {
      out.strides[static_cast<size_t>(nd)] = base * covered;
      covered *= dims[static_cast<size_t>(nd)];
      --nd;
    }
    if (covered != stretch) return std::nullopt;
    k = first - 1;
  }
  for (; nd >= 0; --nd)
    if (dims[static_cast<size_t>(nd)] != 1) return std::nullopt;
  return out;
}

bool is_view_op(const ir::Node& n) {
  return (is_op(n, "Transpose") || is_op(n, "Reshape")) && !n.inputs.empty() && n.outputs.size() == 1;
}

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The view after `n` (a Transpose or Reshape with a static output shape) of the view `v`.
std::optional<View> through(const RuleContext& ctx, const ir::Node& n, const View& v) {
  auto out = static_shape(ctx, n.outputs[0]);
  if (!out || numel(*out) != numel(v.dims)) return std::nullopt;
  if (is_op(n, "Reshape")) return reshaped(v, *out);
  std::vector<int64_t> perm;
  if (auto p = attr_ints(n, "perm")) {
    perm = *p;
  } else {  // no perm: the axes reversed
    for (size_t k = v.dims.size(); k-- > 0;) perm.push_back(static_cast<int64_t>(k));
  }
  auto t = transposed(v, perm);
  if (!t || t->dims != *out) return std::nullopt;
  return t;
}

// Whether the chain nodes[first..] (nodes[0] the last node, later entries earlier in the graph) read from
// nodes[first]'s input is a pure reshape of it.
bool keeps_order(const RuleContext& ctx, const std::vector<size_t>& nodes, size_t first) {
  auto in = static_shape(ctx, ctx.graph.nodes[nodes[first]].inputs[0]);
  if (!in || numel(*in) <= 0) return false;
  std::optional<View> v = row_major(*in);
  for (size_t k = first + 1; k-- > 0 && v;) v = through(ctx, ctx.graph.nodes[nodes[k]], *v);
  return v && is_row_major(*v);
}

bool fold_transpose_reshape_chain(RuleContext& ctx, size_t i) {
  const ir::Graph& g = ctx.graph;
  if (!is_view_op(g.nodes[i]) || onnx_opset(ctx.model) < 5) return false;
  std::vector<size_t> chain = {i};  // the last node first
  while (chain.size() < kMaxChain) {
    auto p = producer(g, g.nodes[chain.back()].inputs[0]);
    if (!p || !is_view_op(g.nodes[*p])) break;
    chain.push_back(*p);
  }
  auto out = static_shape(ctx, g.nodes[i].outputs[0]);
  if (!out) return false;
  // The longest chain ending at node i that keeps the order and holds a Transpose.
  std::optional<size_t> first;
  for (size_t f = chain.size(); f-- > 0 && !first;) {
    bool transposes = false;
    for (size_t k = 0; k <= f; ++k) transposes |= is_op(g.nodes[chain[k]], "Transpose");
    if (transposes && keeps_order(ctx, chain, f)) first = f;
  }
  if (!first) return false;

  ir::Node r;
  r.op_type = "Reshape";
  r.name = g.nodes[i].name;
  const auto rank = static_cast<int64_t>(out->size());
  r.inputs = {g.nodes[chain[*first]].inputs[0],
              add_initializer(ctx.graph, ir::make_tensor("", ir::DataType::kInt64, {rank}, *out),
                              g.nodes[i].outputs[0] + "_shape")};
  r.outputs = g.nodes[i].outputs;
  // The node itself, and each earlier one whose only reader is the next one of the chain, which goes.
  std::vector<ir::NodeId> gone = {g.nodes[i].id};
  for (size_t k = 1; k <= *first; ++k) {
    if (sole_consumer(g, g.nodes[chain[k]].outputs[0]) != chain[k - 1]) break;
    gone.push_back(g.nodes[chain[k]].id);
  }
  replace_with(ctx.graph, i, std::move(r), gone);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fold_transpose_reshape_chain) {
  reg.add({"fold_transpose_reshape_chain", tessera::passes::OptLevel::kBasic, 75,
           tessera::passes::fold_transpose_reshape_chain});
}
