// fuse_attention's reading of Q, K and V out of one packed projection whose leading sizes are free (a
// batch or sequence dim_param): what merge_sibling_matmuls leaves of a BERT exported with dynamic axes,
//
//   P = MatMulBias(x, W_qkv) [B, S, 3E]   q, k, v = Split(P, last axis, E each)
//   q' = Reshape(q, [B, S, H, D])  (the target a constant with 0 for B, or computed at run time from
//                                   Shape(q)[0] and constants, as TorchScript writes x.size(0))
//
// The view machinery of fuse_attention_view.h needs static sizes; here the operand is read from P
// reshaped to [0, 0, 3, H, D] (ONNX Reshape copies a 0 from the input, whatever its size at run time)
// with `part` picking q, k or v: a free view, so neither the Split's copy nor the head split's is made.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "passes/graph_util.h"

namespace tessera::passes::attn {

struct SplitOperand {
  std::string base;            // P
  std::vector<int64_t> shape;  // P's view: 0 for each leading axis (copied), then parts, H, D
  std::vector<int64_t> axes;   // (batch, heads, seq, size) as axes of that view
  int64_t part = 0;            // which of the Split's outputs the operand was
  size_t reshape = 0;          // the head-splitting Reshape (index), which the fused node no longer reads
  std::vector<size_t> target_nodes;  // the nodes computing its target (Shape, Gather, Concat...)
};

// `value` is the rank-4 operand holding (batch, heads, seq, size) at its `axes` (after the Transposes above
// the product); the packed reading of it, or nullopt where it is not such a head split of a Split.
std::optional<SplitOperand> split_operand(const RuleContext& ctx, const std::string& value,
                                          const std::vector<int64_t>& axes);

}  // namespace tessera::passes::attn
