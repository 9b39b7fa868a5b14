// to_blocked_layout (layout level): moves chains of 2-D convolutions, pooling and the elementwise ops
// between them to the blocked layout of ops/layout/blocked.h, as ONNX Runtime's NCHWc transformer does.
// The CPU convolution kernels compute in that layout; left in NCHW, each of them would reorder its input
// in and its output back out, which costs more than many of the convolutions themselves (MobileNetV2's
// 1x1 convolutions).
//
// One sweep in graph order (the chain-layout sweep of layout_chain.h, this file being its strategy)
// rewrites, with `twin_` mapping each NCHW value to its blocked twin:
//  - Conv / FusedConv (float, rank 4, constant 4-D weights; group 1, depthwise, or groups whose channel
//    counts are whole blocks) -> BlockedConv. Its X is the blocked twin, or ReorderToBlocked(X) once per
//    value, or X itself for a first convolution over fewer channels than a block;
//  - Add of a BlockedConv's result (read by nothing else) and another blocked value of the same shape:
//    the Add moves into the convolution as Z (a sum post-op), the residual connection of ResNet and
//    MobileNetV2; other Adds and Muls of two same-shaped blocked values stay elementwise, blocked;
//  - an activation of a BlockedConv without one (read by nothing else) moves into it; other unary
//    activations run elementwise on the blocked value (the padded channels stay finite);
//    A strided 1x1 convolution without padding reads a BlockedMaxPool with a 1x1 window (a subsampling)
//    and runs with stride 1;
//  - MaxPool (no Indices) / AveragePool of a blocked value -> BlockedMaxPool / BlockedAveragePool, and
//    GlobalMaxPool / GlobalAveragePool over a static H x W -> the same with an H x W window, so that a
//    classifier head reorders C values back to NCHW, not C x H x W.
// Afterwards every NCHW value still read (by another op, a subgraph or as a graph output) gets a
// ReorderFromBlocked right after its blocked producer, under its own name.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ops/layout/blocked.h"
#include "passes/graph_util.h"
#include "passes/layout_chain.h"
#include "passes/pipeline.h"

namespace tessera::passes {
namespace {

namespace layout = ops::layout;

bool is_activation_op(const std::string& op) {
  static const std::set<std::string> kOps = {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid"};
  return kOps.count(op) > 0;
}

// The blocked layout as a chain-layout strategy (layout_chain.h).
class BlockedLayout : public ChainLayout {
 public:
  BlockedLayout(RuleContext& ctx, int64_t block)
      : ChainLayout(ctx, {"to_blocked_layout", "blocked", "Blocked", layout::kDomain}), block_(block) {}

 private:
  // Add and Mul of two same-shaped blocked values.
  bool accepts_binary(const ir::Node& n) const override { return n.op_type == "Add" || n.op_type == "Mul"; }
  bool binary(const ir::Node& n) override {
    if (!same_twin_shapes(n)) return false;
    ir::Node e = n;
    e.inputs = {twin_.at(n.inputs[0]).name, twin_.at(n.inputs[1]).name};
    emit_elementwise(std::move(e), n.outputs[0], twin_.at(n.inputs[0]).channels);
    return true;
  }

  // The activations BlockedConv can apply (so always with their parameters at hand).
  bool accepts_unary(const ir::Node& n) const override {
    return ir::canonical_domain(n.domain).empty() && is_activation_op(n.op_type) && n.outputs.size() == 1 &&
           fusable_activation(ctx_, n);
  }

  ir::Node to_layout_node() const override {
    ir::Node r;
    r.op_type = "ReorderToBlocked";
    r.domain = layout::kDomain;
    r.attributes.push_back(ir::Attribute::of_int("block", block_));
    return r;
  }

  ir::Node from_layout_node(const LayoutTwin& v) const override {
    ir::Node r;
    r.op_type = "ReorderFromBlocked";
    r.domain = layout::kDomain;
    r.attributes.push_back(ir::Attribute::of_int("channels", v.channels));
    return r;
  }

  bool conv(const ir::Node& n) override {
    if (n.inputs.size() < 2 || elem_type(ctx_, n.inputs[0]) != ir::DataType::kFloat) return false;
    auto xt = value_type(ctx_, n.inputs[0]);
    if (!xt || !xt->is_tensor() || !xt->shape || xt->shape->size() != 4) return false;
    const ir::Tensor* w = constant_value(g_, n.inputs[1]);
    if (!w || w->dims.size() != 4 || w->dtype != ir::DataType::kFloat) return false;
    if (n.inputs.size() > 2 && !n.inputs[2].empty() && !constant_value(g_, n.inputs[2])) return false;
    if (n.inputs.size() > 3 && !n.inputs[3].empty()) return false;  // FusedConv's Z: left alone
    std::string act = attr_string(n, "activation");
    if (!act.empty() && !is_activation_op(act)) return false;
    int64_t group = attr_int(n, "group", 1);
    int64_t cout = w->dims[0], cin = w->dims[1] * group;
    bool depthwise = group == cin && cout == cin;
    if (group != 1 && !depthwise && (cin / group % block_ != 0 || cout / group % block_ != 0)) return false;

    ir::Node b = n;
    b.op_type = "BlockedConv";
    b.domain = layout::kDomain;
    b.attributes.push_back(ir::Attribute::of_int("block", block_));
    if (b.inputs.size() > 3) b.inputs.resize(3);
    // A first convolution over fewer channels than a block reads the plain X.
    const bool plain_ok = group == 1 && cin < block_;
    b.inputs[0] = plain_ok && !twin_.count(n.inputs[0]) ? n.inputs[0] : reorder_in(n.inputs[0], cin);
    if (auto strides = pointwise_strides(n, *w); strides && b.inputs[0] != n.inputs[0]) {
      b.inputs[0] = subsample(b.inputs[0], *strides);
      std::erase_if(b.attributes, [](const ir::Attribute& a) { return a.name == "strides"; });
    }
    b.outputs = {fresh(n.outputs[0])};
    b.id = next_id_++;
    out_.push_back(std::move(b));
    twin_[n.outputs[0]] = {out_.back()->outputs[0], cout, out_.size() - 1};
    return true;
  }

  // The strides of a 1x1 convolution that skips pixels (a ResNet downsample), without padding: such a
  // convolution is a subsampling and then a 1x1 convolution with stride 1, which oneDNN runs faster
  // than the strided one (ResNet-50's three at 16 threads: 0.36-0.39 ms strided, 0.25-0.28 ms plus a
  // copy of the pixels kept). nullopt otherwise.
  static std::optional<std::vector<int64_t>> pointwise_strides(const ir::Node& n, const ir::Tensor& w) {
    if (w.dims[2] != 1 || w.dims[3] != 1 || attr_int(n, "group", 1) != 1) return std::nullopt;
    auto strides = attr_ints(n, "strides");
    if (!strides || strides->size() != 2 || (*strides)[0] * (*strides)[1] == 1) return std::nullopt;
    std::string pad = attr_string(n, "auto_pad");
    if (!pad.empty() && pad != "NOTSET" && pad != "VALID") return std::nullopt;
    if (auto pads = attr_ints(n, "pads"))
      if (std::any_of(pads->begin(), pads->end(), [](int64_t p) { return p != 0; })) return std::nullopt;
    return strides;
  }

  // A 1x1 max pool with `strides` of the blocked value `x`: every strides-th pixel.
  std::string subsample(const std::string& x, const std::vector<int64_t>& strides) {
    ir::Node p;
    p.op_type = "BlockedMaxPool";
    p.domain = layout::kDomain;
    p.name = x + "_subsampled";
    p.inputs = {x};
    p.outputs = {fresh(x + "_subsampled")};
    p.attributes = {ir::Attribute::of_ints("kernel_shape", {1, 1}),
                    ir::Attribute::of_ints("strides", strides)};
    p.id = next_id_++;
    out_.push_back(std::move(p));
    return out_.back()->outputs[0];
  }

  int64_t block_;
};

}  // namespace

int64_t cpu_channel_block() {
  static const int64_t block = __builtin_cpu_supports("avx512f") ? 16 : 8;
  return block;
}

void to_blocked_layout(ir::Model& model, const Target& target, std::vector<Rewrite>& log) {
  RuleContext ctx{model, model.graph, true, target};
  if (!BlockedLayout(ctx, cpu_channel_block()).run(log)) return;
  ensure_opset_import(model, layout::kDomain, 1);
}

}  // namespace tessera::passes
