// fuse_matmul_bias (layout): a linear layer over more than two axes, MatMul(A, W) + b with a constant
// 2-D W [K, N] and a constant bias of N values, read by nothing but the Add, becomes com.tessera
// MatMulBias, whose CPU kernel adds b in the product's epilogue. The 2-D case is Gemm's
// (fuse_matmul_add_to_gemm, extended); transformers apply their projections to [batch, sequence, K]
// activations, where the bias Adds otherwise cost a pass over every projection's output (BERT-base: 60
// of them). Layout level, not extended: the result is Tessera's own op, which other engines cannot run.
#include <algorithm>

#include "ops/layout/blocked.h"
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

// The bias as a value of N elements laid along the last axis: [N], [1, N], [1, 1, N]...
bool is_row_bias(const RuleContext& ctx, const std::string& c, int64_t n) {
  auto dims = static_shape(ctx, c);
  if (!constant_value(ctx.graph, c) || !dims || dims->empty() || dims->back() != n) return false;
  return std::all_of(dims->begin(), dims->end() - 1, [](int64_t d) { return d == 1; });
}

bool fuse_matmul_bias(RuleContext& ctx, size_t i) {
  const ir::Node& add = ctx.graph.nodes[i];
  if (!is_op(add, "Add") || add.inputs.size() != 2) return false;
  for (size_t side = 0; side < 2; ++side) {
    auto p = producer(ctx.graph, add.inputs[side]);
    if (!p || !is_op(ctx.graph.nodes[*p], "MatMul") || sole_consumer(ctx.graph, add.inputs[side]) != i)
      continue;
    const ir::Node& mm = ctx.graph.nodes[*p];
    auto a = value_type(ctx, mm.inputs[0]);
    const ir::Tensor* w = constant_value(ctx.graph, mm.inputs[1]);
    const std::string& c = add.inputs[1 - side];
    if (!a || !a->is_tensor() || !a->shape || a->shape->size() < 3 || !w || w->dims.size() != 2) continue;
    if (a->elem != ir::DataType::kFloat || w->dtype != a->elem || elem_type(ctx, c) != a->elem) continue;
    if (!is_row_bias(ctx, c, w->dims[1])) continue;
    // The output keeps A's leading axes; a bias with more axes than the product would add some.
    if (static_shape(ctx, c)->size() > a->shape->size()) continue;

    ir::Node fused;
    fused.op_type = "MatMulBias";
    fused.domain = ops::layout::kDomain;
    fused.name = mm.name.empty() ? add.name : mm.name;
    fused.inputs = {mm.inputs[0], mm.inputs[1], c};
    fused.outputs = add.outputs;
    if (!kernel_available(ctx, fused)) return false;
    // MatMulBias takes a 1-D bias: a [1, N] constant is reshaped by a new initializer.
    if (static_shape(ctx, c)->size() != 1) {
      ir::Tensor row = *constant_value(ctx.graph, c);
      row.dims = {w->dims[1]};
      row.name = fresh_name(ctx.graph, c + "_row");
      fused.inputs[2] = row.name;
      ctx.graph.initializers.push_back(std::move(row));
    }
    ensure_opset_import(ctx.model, ops::layout::kDomain, 1);
    replace_with(ctx.graph, i, std::move(fused), {mm.id, add.id});
    return true;
  }
  return false;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_matmul_bias) {
  reg.add({"fuse_matmul_bias",
           tessera::passes::OptLevel::kLayout,
           10,
           tessera::passes::fuse_matmul_bias,
           {"cpu", "cuda"}});
}
