// merge_sibling_matmuls (layout, CUDA): sibling linear layers, i.e. two or more MatMul / com.tessera
// MatMulBias (or two or more Gemm) nodes that read the same activation with constant 2-D weights of the
// same K and type, become one product over the weights concatenated along N (and the biases likewise),
// followed by a Split along the last axis that writes the original outputs. BERT's Q, K and V
// projections ([768, 768] each) are one [768, 2304] GEMM: one launch instead of three, and a product
// three times wider fills the GPU better at small batches. The Split is then absorbed by fuse_attention
// (order 20, after this rule): its Q/K/V chains end in the Split, so the fused node reads q, k and v as
// parts of the packed output (fuse_attention_view.h) and no copy is left. Where the outputs are read by
// anything else the Split stays, a copy of the product's output.
//
// Layout level at order 15: after fuse_matmul_bias (10), which makes the MatMulBias nodes whose biases
// are concatenated here, and before fuse_attention (20). CUDA only: the CPU's kernels gain nothing from a
// wider product and would pay for the Split.
#include <algorithm>
#include <cstring>

#include "ops/layout/blocked.h"
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

constexpr const char* kRuleName = "merge_sibling_matmuls";

// One linear layer: y = x W (+ b), W [K, N] (Gemm with transB: [N, K] stored).
struct Linear {
  size_t index = 0;
  bool gemm = false, trans_b = false;
  const ir::Tensor* w = nullptr;
  const ir::Tensor* b = nullptr;  // [N] or [1, N]; null when absent
  int64_t k = 0, n = 0;
};

bool is_matmul_bias(const ir::Node& n) {
  return n.op_type == "MatMulBias" && n.domain == ops::layout::kDomain;
}

// A bias of N elements along the last axis: [N] or [1, ..., 1, N].
bool row_bias(const ir::Tensor* b, int64_t n) {
  if (!b || b->dims.empty() || b->dims.back() != n || !b->data) return false;
  return std::all_of(b->dims.begin(), b->dims.end() - 1, [](int64_t d) { return d == 1; });
}

std::optional<Linear> as_linear(const RuleContext& ctx, size_t i) {
  const ir::Node& n = ctx.graph.nodes[i];
  Linear l;
  l.index = i;
  l.gemm = is_op(n, "Gemm");
  const bool mm = is_op(n, "MatMul") || is_matmul_bias(n);
  if ((!mm && !l.gemm) || n.inputs.size() < 2 || n.outputs.size() != 1 || n.inputs[0].empty()) return {};
  l.w = constant_value(ctx.graph, n.inputs[1]);
  if (!l.w || l.w->dims.size() != 2 || !l.w->data || !is_compute_float(l.w->dtype)) return {};
  if (l.gemm) {
    if (attr_int(n, "transA", 0) != 0 || attr_float(n, "alpha", 1.f) != 1.f) return {};
    l.trans_b = attr_int(n, "transB", 0) != 0;
    if (n.inputs.size() > 2 && !n.inputs[2].empty() && attr_float(n, "beta", 1.f) != 1.f) return {};
  }
  l.k = l.w->dims[l.trans_b ? 1 : 0];
  l.n = l.w->dims[l.trans_b ? 0 : 1];
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    l.b = constant_value(ctx.graph, n.inputs[2]);
    if (!row_bias(l.b, l.n) || l.b->dtype != l.w->dtype) return {};
  }
  // The activation: of the weights' type, with rank 2 (Gemm) or at least 2 (MatMul: a vector input
  // drops its axis, and the product's last axis would not be N).
  auto x = value_type(ctx, n.inputs[0]);
  if (!x || !x->is_tensor() || !x->shape || x->elem != l.w->dtype) return {};
  if (l.gemm ? x->shape->size() != 2 : x->shape->size() < 2) return {};
  return l;
}

// Whether two layers can be one product: same op family and transB, same K and weight type.
bool compatible(const Linear& a, const Linear& b) {
  return a.gemm == b.gemm && a.trans_b == b.trans_b && a.k == b.k && a.w->dtype == b.w->dtype;
}

// The weights side by side along N: [K, sum N], or [sum N, K] for transB.
ir::Tensor concat_weights(const std::vector<Linear>& ls) {
  const Linear& f = ls.front();
  const size_t es = f.w->bytes().size() / static_cast<size_t>(f.k * f.n);
  int64_t total = 0;
  for (const auto& l : ls) total += l.n;
  std::string out(static_cast<size_t>(f.k * total) * es, '\0');
  if (f.trans_b) {  // rows of N: one block per layer
    size_t at = 0;
    for (const auto& l : ls) {
      auto b = l.w->bytes();
      std::memcpy(out.data() + at, b.data(), b.size());
      at += b.size();
    }
  } else {  // each row of K: the layers' rows one after another
    int64_t col = 0;
    for (const auto& l : ls) {
      auto b = l.w->bytes();
      const size_t row = static_cast<size_t>(l.n) * es;
      for (int64_t r = 0; r < l.k; ++r)
        std::memcpy(out.data() + (static_cast<size_t>(r * total + col)) * es, b.data() + r * row, row);
      col += l.n;
    }
  }
  ir::Tensor t;
  t.dtype = f.w->dtype;
  t.dims = f.trans_b ? std::vector<int64_t>{total, f.k} : std::vector<int64_t>{f.k, total};
  t.data = ir::make_buffer(std::move(out));
  return t;
}

// The biases one after another ([sum N]); zeros for the layers without one.
ir::Tensor concat_biases(const std::vector<Linear>& ls) {
  const Linear& f = ls.front();
  const size_t es = f.w->bytes().size() / static_cast<size_t>(f.k * f.n);
  int64_t total = 0;
  for (const auto& l : ls) total += l.n;
  std::string out(static_cast<size_t>(total) * es, '\0');  // all-zero bytes are 0.0 in every float type
  size_t at = 0;
  for (const auto& l : ls) {
    if (l.b) std::memcpy(out.data() + at, l.b->bytes().data(), static_cast<size_t>(l.n) * es);
    at += static_cast<size_t>(l.n) * es;
  }
  ir::Tensor t;
  t.dtype = f.w->dtype;
  t.dims = {total};
  t.data = ir::make_buffer(std::move(out));
  return t;
}

// The layers reading the same activation as node i that can merge with it, i first; i must be the
// first of them in the graph (the merged product takes its place, before every reader of the outputs).
std::vector<Linear> siblings(const RuleContext& ctx, size_t i) {
  auto first = as_linear(ctx, i);
  if (!first) return {};
  std::vector<Linear> out{*first};
  std::vector<size_t> seen{i};
  for (const Use& u : uses(ctx.graph, ctx.graph.nodes[i].inputs[0])) {
    if (u.input != 0 || std::find(seen.begin(), seen.end(), u.node) != seen.end()) continue;
    seen.push_back(u.node);
    auto l = as_linear(ctx, u.node);
    if (!l || !compatible(*first, *l)) continue;
    if (u.node < i) return {};  // the earliest sibling does the merge
    out.push_back(*l);
  }
  if (out.size() < 2) return {};
  std::sort(out.begin(), out.end(), [](const Linear& a, const Linear& b) { return a.index < b.index; });
  return out;
}

ir::Node split_node(RuleContext& ctx, const std::vector<Linear>& ls, const std::string& packed, size_t rank) {
  ir::Node s;
  s.op_type = "Split";
  s.name = fresh_name(ctx.graph, ctx.graph.nodes[ls.front().index].name + "_split");
  s.inputs = {packed};
  std::vector<int64_t> sizes;
  for (const auto& l : ls) {
    sizes.push_back(l.n);
    s.outputs.push_back(ctx.graph.nodes[l.index].outputs[0]);
  }
  s.attributes.push_back(ir::Attribute::of_int("axis", static_cast<int64_t>(rank) - 1));
  if (onnx_opset(ctx.model) >= 13) {
    ir::Tensor t =
        ir::make_tensor<int64_t>("", ir::DataType::kInt64, {static_cast<int64_t>(sizes.size())}, sizes);
    s.inputs.push_back(add_initializer(ctx.graph, std::move(t), s.name + "_sizes"));
  } else {
    s.attributes.push_back(ir::Attribute::of_ints("split", sizes));
  }
  return s;
}

bool merge_sibling_matmuls(RuleContext& ctx, size_t i) {
  // The activation's leading sizes may be free (a batch or sequence dim_param): the merge needs only the
  // shared activation, K and the N's static. fuse_attention then reads Q, K and V of a free-batch BERT
  // export through a Reshape of the packed output that copies the free sizes (fuse_attention_split.h);
  // before it did, the Split stayed as a copy (13 us a layer at batch 32 in float16), and such
  // activations were left alone.
  std::vector<Linear> ls = siblings(ctx, i);
  if (ls.empty()) return false;
  const ir::Node& head = ctx.graph.nodes[i];
  const size_t rank = value_type(ctx, head.inputs[0])->shape->size();
  const bool any_bias = std::any_of(ls.begin(), ls.end(), [](const Linear& l) { return l.b; });

  ir::Node merged;
  merged.name = head.name.empty() ? "" : head.name + "_merged";
  merged.inputs = {head.inputs[0], ""};
  if (ls.front().gemm) {
    merged.op_type = "Gemm";
    if (ls.front().trans_b) merged.attributes.push_back(ir::Attribute::of_int("transB", 1));
  } else if (any_bias) {
    merged.op_type = "MatMulBias";
    merged.domain = ops::layout::kDomain;
  } else {
    merged.op_type = "MatMul";
  }
  merged.outputs = {fresh_name(ctx.graph, (head.name.empty() ? head.op_type : head.name) + "_packed")};
  const std::string base = head.name.empty() ? "merged" : head.name;
  // Both made before either is added: adding an initializer moves the ones `ls` points to.
  ir::Tensor w = concat_weights(ls);
  std::optional<ir::Tensor> b;
  if (any_bias) b = concat_biases(ls);
  merged.inputs[1] = add_initializer(ctx.graph, std::move(w), base + "_W_merged");
  if (b) merged.inputs.push_back(add_initializer(ctx.graph, std::move(*b), base + "_B_merged"));
  ir::Node split = split_node(ctx, ls, merged.outputs[0], rank);
  if (!kernel_available(ctx, merged) || !kernel_available(ctx, split)) {
    std::vector<std::string> added(merged.inputs.begin() + 1, merged.inputs.end());
    if (split.inputs.size() > 1) added.push_back(split.inputs[1]);
    drop_unused_initializers(ctx.graph, added);
    return false;
  }
  if (merged.domain == ops::layout::kDomain) ensure_opset_import(ctx.model, ops::layout::kDomain, 1);

  std::vector<ir::NodeId> gone;
  for (const auto& l : ls) gone.push_back(ctx.graph.nodes[l.index].id);
  // The merged product takes node i's place (every sibling came at or after it, so it stays at i) and
  // the Split follows it: every reader of the old outputs came after the first of them.
  replace_with(ctx.graph, i, std::move(merged), gone);
  ctx.graph.add_node(std::move(split), i + 1);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(merge_sibling_matmuls) {
  reg.add({tessera::passes::kRuleName,
           tessera::passes::OptLevel::kLayout,
           15,
           tessera::passes::merge_sibling_matmuls,
           {"cuda"}});
}
