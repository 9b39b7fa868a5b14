// The optimisation levels, as ONNX Runtime names them:
//   none      the model as written;
//   basic     rewrites that keep to standard ONNX ops (folding constants, removing dead and identity
//             nodes, folding BatchNormalization into Conv, merging common subexpressions);
//   extended  fusions into Tessera's own kernels (Conv+activation, MatMul+Add, attention...);
//   layout    the CPU's blocked activation layout for convolution chains (ONNX Runtime's NCHWc).
// Each level includes the ones before it. Rules are one file each in this folder (fold_*, eliminate_*,
// fuse_*; the framework in rule.h); why they run in the order they do is written in pipeline.cpp.
#pragma once

#include <string>
#include <vector>

#include "ir/model.h"
#include "passes/target.h"

namespace tessera::passes {

// One application of a rule, for the report and `tessera optimize --verbose`.
struct Rewrite {
  std::string rule;
  std::string node;  // the node the rule matched (its name, or op type)
};

// The layout level: chains of 2-D convolutions and pooling move to the blocked layout of
// ops/layout/blocked.h (com.tessera BlockedConv...), with reorders where plain NCHW values are read.
void to_blocked_layout(ir::Model& model, const Target& target, std::vector<Rewrite>& log);
// The channel block the CPU's convolution kernels use: 16 with AVX-512, else 8.
int64_t cpu_channel_block();

// Rewrites `model` in place up to `target.level` for `target`; returns what was rewritten, in order.
std::vector<Rewrite> optimize(ir::Model& model, const Target& target);

// A registered rule as `tessera optimize --list-rules` shows it.
struct RuleInfo {
  std::string name;
  OptLevel level = OptLevel::kBasic;
  int order = 0;                      // position within the level
  std::vector<std::string> backends;  // empty: every backend
};
// Every rule, in the order optimize() tries them: the basic level first, each level by order.
std::vector<RuleInfo> list_rules();
// Whether a rule of that name exists (for --disable-rule).
bool rule_exists(std::string_view name);

}  // namespace tessera::passes
