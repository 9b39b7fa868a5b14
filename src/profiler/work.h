// The work of a layer, counted from the model: floating-point operations (a multiply-add counts 2) and
// the bytes it must move at least (each distinct input and output tensor once, at its element size,
// weights included). Counted from the types and shapes of the node's inputs and outputs as the session
// ran it, after fusion (a fused node is counted from its own inputs and outputs), so a profile can say
// how far each layer is from its roofline bound (profiler/roofline.h). docs/profile-report.md lists the
// rules: what each operator's FLOPs are, and which operators are views (no bytes) or not counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"

namespace tessera::profiler {

// A value as the count needs it: element type and, when every dimension is known, the shape.
struct TensorInfo {
  ir::DataType dtype = ir::DataType::kUndefined;
  std::optional<std::vector<int64_t>> shape;

  std::optional<double> elements() const;
  std::optional<double> bytes() const;  // elements at the element's storage width
};
using ValueInfos = std::unordered_map<std::string, TensorInfo>;

// One node's work for one execution.
struct Work {
  // nullopt where the rule does not count this operator's FLOPs (an LSTM, a Resize) or a shape it needs
  // is unknown; 0 for data movement.
  std::optional<double> flops;
  std::optional<double> bytes;  // nullopt where an input's or output's shape is unknown
  std::string rule;             // how the FLOPs were counted: "convolution", "elementwise 1/element"...
  bool device_copy = false;     // a copy the session inserted between devices (no roofline of its own)
};

// Counts the work of node `n` from the types of its inputs and outputs (looked up by value name).
Work node_work(const ir::Node& n, const ValueInfos& values);

// The FLOPs per element of an elementwise, normalisation or softmax operator, or nullopt when the node
// is none of those. An arithmetic operation, a comparison or a function (exp, erf, tanh, sqrt) counts 1.
struct PerElement {
  std::string_view kind;  // "elementwise", "normalisation", "softmax"
  double flops = 0;
};
std::optional<PerElement> pointwise_flops(const ir::Node& n);
// FLOPs per element of com.tessera FusedElementwise's program: the sum over its statements.
std::optional<double> fused_elementwise_flops(const ir::Node& n);
// Per element, for the `activation` of a fused convolution (FusedConv, NhwcConv, BlockedConv).
double activation_flops(std::string_view activation);

// Query rows x key columns that an attention computes: all of them, or with a causal mask only key j
// <= i + offset for query i (offset: keys of the past ahead of the queries, 0 for the upper-left limit).
double attention_pairs(int64_t queries, int64_t keys, bool causal, int64_t offset = 0);

}  // namespace tessera::profiler
