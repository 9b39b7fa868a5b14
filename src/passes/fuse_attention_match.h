// The matcher of the fuse_attention rule (fuse_attention.cpp): finds the attention subgraph around a
// Softmax and describes the FusedAttention node that replaces it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "passes/graph_util.h"

namespace tessera::passes::attn {

// An operand read in place: `value` holds (batch, heads, seq, size) at axes `axes`; for 3-D products
// (torch.nn.MultiheadAttention's [B * H, S, D]) (batch * heads, seq, size).
// `shape`, when not empty, is a contiguous shape `value` is reshaped to first (a view); rank 5 packs Q,
// K and V of one projection along the axis `axes` leaves out, `part` choosing this operand's slice.
struct Operand {
  std::string value;
  std::vector<int64_t> axes = {0, 1, 2, 3};
  std::vector<int64_t> shape;
  int64_t part = 0;
};

struct Match {
  Operand q, k, v;
  std::vector<int64_t> y_axes = {0, 1, 2, 3};
  std::string y;                 // the output value (the last node's output)
  std::vector<int64_t> y_shape;  // 3-D products: Y's 3-D shape (-1 for B * H), reshaped from the 4-D Y
  std::string bias, keep;        // optional inputs ("" when absent)
  double scale = 1, fill = 0;
  bool causal = false;
  std::string name;              // of the new node
  std::vector<ir::NodeId> gone;  // the nodes it replaces
  size_t last = 0;               // index of the last of them (where the new node goes)
};

// The attention subgraph whose Softmax is node `softmax`, or nullopt.
std::optional<Match> match_attention(const RuleContext& ctx, size_t softmax);
// The FusedAttention node; `inputs` are Q, K and V as it reads them (after any head-splitting Reshape),
// `y` its output.
ir::Node fused_node(const Match& m, std::vector<std::string> inputs, std::string y);

}  // namespace tessera::passes::attn
