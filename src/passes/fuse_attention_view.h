// Strided views for the fuse_attention rule: an attention operand that view-like nodes (Reshape,
// Transpose, Squeeze, Unsqueeze, Gather of one constant index, Split, Slice, Identity) made out of a
// contiguous tensor is read by FusedAttention straight from that tensor, reshaped (a free view) so that the
// operand's batch, heads, seq and size are four of its axes and at most one more axis packs Q, K and V
// (`<x>_part` picks one). ViT's dynamo export is the case: q, k and v come out of one [S, B, 3E]
// in-projection through Reshape, Unsqueeze, Transpose, Squeeze, Gather, Reshape and Transpose, all of
// which become the view [S, B, 3, H, D] with axes (1, 3, 0, 4) and parts 0, 1 and 2.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "passes/graph_util.h"

namespace tessera::passes::attn {

// A view of a contiguous tensor: each axis is made of pieces (size, stride), outermost first, so that
// an axis merging axes of different strides ([S, B*H, D] made of [S, B, H*D]) can be split again.
// Element (i0, i1, ...) sits at offset + the sum over the axes of their index's digits (in the pieces'
// sizes) times the pieces' strides. An axis of size 1 has no pieces.
struct View {
  using Axis = std::vector<std::pair<int64_t, int64_t>>;
  std::vector<Axis> axes;
  int64_t offset = 0;
  std::vector<int64_t> dims() const {
    std::vector<int64_t> out;
    for (const auto& a : axes) {
      int64_t d = 1;
      for (const auto& p : a) d *= p.first;
      out.push_back(d);
    }
    return out;
  }
};

// The view a view-like node makes of its input's view, or nullopt when the node is not one of them or
// its parameters are not constants.
// `output` names the node's output that is followed (a Split has several).
std::optional<View> apply_view_node(const RuleContext& ctx, const ir::Node& n, const View& in,
                                    const std::string& output);

// (batch, heads, seq, size) with its strides (size contiguous), at `offset`, of a base tensor of
// `numel` elements, as axes of the base reshaped to `shape`; `part` indexes the packed axis (rank 5).
struct Packed {
  std::vector<int64_t> shape, axes;
  int64_t part = 0;
};
std::optional<Packed> factor_view(const int64_t (&dims)[4], const int64_t (&strides)[4], int64_t offset,
                                  int64_t numel);

// An operand read through such a chain: `base` reshaped to `packed.shape`, and the chain's nodes
// (indices, base to operand). `copies` says whether the chain holds a node that moves data (Gather,
// Split, Slice, or a Transpose) upstream of a Reshape/Squeeze/Unsqueeze, which the plain trace through
// Transposes cannot remove.
struct ChainOperand {
  std::string base;
  Packed packed;
  std::vector<size_t> chain;
  bool copies = false;
};

// `value` (rank 4) holds (batch, heads, seq, size) at its axes `axes`; the furthest base the chain of
// view-like nodes above it reaches from which the operand is such a view, or nullopt.
std::optional<ChainOperand> chain_operand(const RuleContext& ctx, const std::string& value,
                                          const std::vector<int64_t>& axes);

}  // namespace tessera::passes::attn
