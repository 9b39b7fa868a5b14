#include "passes/pipeline.h"

#include <algorithm>
#include <iterator>

#include "passes/graph_util.h"
#include "passes/layout_nhwc.h"
#include "passes/rule.h"

// The order of the levels and rules.
//
// run_rules applies a level's rules, each over every node of every graph (subgraphs first), and repeats
// the sweep until nothing changes, so the order never decides *whether* a rewrite happens, only how soon
// and how the rewrites of a sweep feed each other. The basic level reaches its fixed point before the
// extended level starts, so the fusions see a graph already folded and cleaned, with standard ops only.
//
// Basic (standard ONNX ops in, standard ONNX ops out):
//   10 fold_constants          first: it turns Constant nodes into initializers, and every later rule
//                              recognises constants as initializers only.
//   20 fold_shape              Shape/Size of statically shaped values become constants, so that the
//                              Shape -> Gather -> Concat -> Reshape chains fold on the next sweep and
//                              eliminate_nop / fuse_consecutive_reshapes see constant targets.
//   30 eliminate_identity      Identity and inference Dropout: pure wiring, removed before the pattern
//                              rules below so that their patterns are not interrupted by them.
//   40 eliminate_nop           Transpose/Reshape/Cast/Pad/Slice/Expand/Concat that change nothing; after
//                              the folds above, which turn their parameters into constants.
//   50 fold_unsqueeze_squeeze  then the pairs that cancel out, and
//   60 fuse_consecutive_transposes, 70 fuse_consecutive_reshapes: chains collapsed into one node (an
//                              identity result is removed by eliminate_nop on the next sweep).
//   75 fold_transpose_reshape_chain: Transpose/Reshape chains that keep the memory order -> one Reshape;
//                              after the two above, which shorten the chains it inspects. With the NHWC
//                              layout it runs again after to_nhwc_layout, whose Transposes back to NCHW
//                              start such chains.
//   80 fold_conv_batchnorm, 90 fold_conv_add, 100 fold_conv_mul: per-channel affine ops folded into the
//                              Conv weights; BatchNormalization first, since exporters emit Conv+BN far
//                              more often, and a following Add/Mul then folds into the same Conv.
//  105 decompose_patch_conv     (CUDA) convolutions whose windows tile the input (ViT's patch embedding) ->
//                              Reshape, Transpose, Reshape, Gemm, Reshape, Transpose; after the folds into
//                              Conv above, and before the layout level, which then has no convolution to
//                              give an input Transpose.
//  110 eliminate_common_subexpressions: after the eliminations above, which make more nodes read the
//                              same values (the readers of a removed Identity read its input) and so
//                              become identical.
// 1000 eliminate_dead_nodes    last: it cleans up whatever the rules above left without readers.
//
// Extended (fusions into ONNX Runtime's contrib ops and faster standard kernels):
//   10 fuse_gelu               the erf decomposition -> Gelu; before fuse_bias_gelu, which needs Gelu.
//   20 fuse_layer_norm         the ReduceMean/Sub/Pow/.../Add decomposition -> LayerNormalization;
//                              before fuse_skip_layer_norm, which needs LayerNormalization.
//   30 fuse_matmul_add_to_gemm 2-D MatMul + bias -> Gemm, before FusedMatMul takes the MatMul.
//   40 fuse_matmul_scale_transpose: MatMul with input transposes and scalar scales -> FusedMatMul.
//   50 fuse_skip_layer_norm    residual Add + LayerNormalization -> SkipLayerNormalization.
//   60 fuse_bias_gelu          bias Add + Gelu -> BiasGelu.
//   70 fuse_conv_activation    Conv + activation -> FusedConv; last, after the basic level folded BN,
//                              Add and Mul into the Conv so that the activation directly follows it.
//
// Layout (Tessera's own com.tessera ops, for its CPU kernels; what other engines cannot run):
//   10 fuse_matmul_bias        MatMul over more than two axes + constant bias -> MatMulBias (the 2-D
//                              case became Gemm at the extended level).
//   12 fuse_matmul_bias_gelu   (CUDA) MatMulBias + the tanh GELU (recognised by what its nodes compute)
//                              -> MatMulBiasGelu, cuBLASLt's GELU_BIAS epilogue (GPT-2's MLP); before
//                              fuse_elementwise would take the GELU's nodes. Never the erf GELU.
//   15 merge_sibling_matmuls   (CUDA) sibling MatMul/MatMulBias (or Gemm) nodes on one activation with
//                              constant weights of equal K -> one product over the concatenated weights
//                              and a Split (BERT's Q, K, V: one [768, 2304] GEMM); after fuse_matmul_bias,
//                              whose biases it concatenates, before fuse_attention, which then reads q, k
//                              and v as parts of the packed output and absorbs the Split.
//   20 fuse_attention          (CUDA) Q/K/V reshapes and transposes, scaled product, mask, Softmax, product
//                              with V -> FusedAttention (fuse_attention.cpp), before the elementwise
//                              chains could take its scale and mask.
//   30 fuse_elementwise        (CUDA) trees of elementwise nodes -> FusedElementwise, one generated
//                              kernel; after fuse_matmul_bias, so that a linear layer's bias Add goes
//                              into the product's epilogue rather than into the activation's chain.
// then to_blocked_layout (layout_blocked.cpp), one pass over the whole graph rather than a rule, since
// where to convert between layouts depends on the chains of convolutions, not on one node. Last, on the
// fused graph: it takes FusedConv's activations along and fuses residual Adds into BlockedConv.
//
// to_nhwc_layout (layout_nhwc.cpp) takes that place instead when the target's layout is NHWC (GPU
// sessions): the same kind of chain pass, into channels-last com.tessera ops; fuse_elementwise then runs
// after it rather than before.
//
// Every fusion first checks that a CPU kernel exists for the node it would create: a model must never
// become unrunnable by optimising it.

namespace tessera::passes {

namespace {
constexpr const char* kBlockedLayoutPass = "to_blocked_layout";
constexpr const char* kFuseElementwiseRule = "fuse_elementwise";        // fuse_elementwise.cpp
constexpr const char* kViewChainRule = "fold_transpose_reshape_chain";  // fold_transpose_reshape_chain.cpp
}  // namespace

std::vector<Rewrite> optimize(ir::Model& model, const Target& target) {
  std::vector<Rewrite> done;
  OptLevel level = target.level;
  if (level == OptLevel::kNone) return done;
  forget_type_cache();  // types cached for another model at this address (graph_util.h)
  run_rules(model, rules_for(OptLevel::kBasic, target), target, done);
  if (level >= OptLevel::kExtended) run_rules(model, rules_for(OptLevel::kExtended, target), target, done);
  if (level < OptLevel::kLayout) return done;
  std::vector<const Rule*> layout_rules = rules_for(OptLevel::kLayout, target);
  const bool nhwc = target.layout == Layout::kNhwc && target.rule_enabled(kNhwcLayoutPass);
  // Channels-last: the elementwise chains are fused after the layout pass, which moves the elementwise
  // nodes between convolutions (a residual Add and its Relu) to channels-last first; a FusedElementwise
  // made before would end the chain there, with a Transpose on each side.
  std::vector<const Rule*> after_layout;
  if (nhwc) {
    auto late = [](const Rule* r) { return r->name == kFuseElementwiseRule; };
    std::copy_if(layout_rules.begin(), layout_rules.end(), std::back_inserter(after_layout), late);
    std::erase_if(layout_rules, late);
    // The layout pass's Transposes back to NCHW meet the model's own views: ViT's patch embedding reads
    // its NHWC output through Transpose, Reshape and Transpose, together a reshape of it.
    for (const Rule* r : rules_for(OptLevel::kBasic, target))
      if (r->name == kViewChainRule) after_layout.push_back(r);
  }
  run_rules(model, layout_rules, target, done);
  if (target.layout == Layout::kBlocked && target.rule_enabled(kBlockedLayoutPass))
    to_blocked_layout(model, target, done);
  if (nhwc) to_nhwc_layout(model, target, done);
  run_rules(model, after_layout, target, done);
  return done;
}

std::vector<RuleInfo> list_rules() {
  std::vector<RuleInfo> out;
  for (OptLevel level : {OptLevel::kBasic, OptLevel::kExtended, OptLevel::kLayout})
    for (const Rule* r : rules_for(level)) out.push_back({r->name, r->level, r->order, r->backends});
  out.push_back({kBlockedLayoutPass, OptLevel::kLayout, 100, {"cpu"}});  // after the layout rules
  out.push_back({kNhwcLayoutPass, OptLevel::kLayout, 110, {"cuda"}});    // the same place, for Layout::kNhwc
  return out;
}

bool rule_exists(std::string_view name) {
  for (const auto& r : list_rules())
    if (r.name == name) return true;
  return false;
}

}  // namespace tessera::passes
