// to_blocked_layout (layout level): moves chains of 2-D convolutions, pooling and the elementwise ops
// between them to the blocked layout of ops/layout/blocked.h, as ONNX Runtime's NCHWc transformer does.
// The CPU convolution kernels compute in that layout; left in NCHW, each of them would reorder its input
// in and its output back out, which costs more than many of the convolutions themselves (MobileNetV2's
// 1x1 convolutions).
//
// One sweep in graph order rewrites, with `blocked` mapping each NCHW value to its blocked twin:
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
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ops/layout/blocked.h"
#include "passes/graph_util.h"
#include "passes/pipeline.h"

namespace tessera::passes {
namespace {

namespace layout = ops::layout;

struct BlockedValue {
  std::string name;  // of the blocked twin
  int64_t channels = 0;
  std::optional<size_t> conv;  // index in the new node list of the BlockedConv producing it, if one does
  bool plain_exists = false;   // the NCHW value is still produced (a ReorderToBlocked reads it)
};

bool is_activation_op(const std::string& op) {
  static const std::set<std::string> kOps = {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid"};
  return kOps.count(op) > 0;
}

bool is_unary_activation(const ir::Node& n) {
  return ir::canonical_domain(n.domain).empty() && is_activation_op(n.op_type) && n.outputs.size() == 1;
}

std::string attr_string(const ir::Node& n, std::string_view name) {
  const ir::Attribute* a = n.attr(name);
  return a ? a->s : std::string();
}

// The ONNX nodes a node stands for, as replace_with records them.
std::string fused_names(const ir::Node& n) {
  for (const auto& [k, v] : n.metadata_props)
    if (k == kFusedFromKey) return v;
  return n.name.empty() ? n.op_type : n.name;
}

void absorb(ir::Node& into, const ir::Node& gone) {
  std::string from = fused_names(into) + "," + fused_names(gone);
  std::erase_if(into.metadata_props, [](const ir::StringPair& p) { return p.first == kFusedFromKey; });
  into.metadata_props.emplace_back(kFusedFromKey, from);
}

class BlockedLayout {
 public:
  BlockedLayout(RuleContext& ctx, int64_t block) : ctx_(ctx), g_(ctx.graph), block_(block) {}

  // Returns whether anything moved to the blocked layout.
  bool run(std::vector<Rewrite>& log) {
    bool any = false;
    for (const ir::Node& n : g_.nodes) {
      if (rewrite(n)) {
        any = true;
        log.push_back({"to_blocked_layout", n.name.empty() ? n.op_type : n.name});
      } else {
        out_.push_back(n);
      }
    }
    if (!any) return false;
    add_reorders_back();
    g_.next_node_id = next_id_;
    g_.nodes.clear();
    for (auto& n : out_)
      if (n) g_.nodes.push_back(std::move(*n));
    return true;
  }

 private:
  bool rewrite(const ir::Node& n) {
    if (n.outputs.size() != 1 || n.outputs[0].empty() || n.inputs.empty()) return false;
    if (is_op(n, "Conv") || (n.op_type == "FusedConv" && ir::canonical_domain(n.domain) == "com.microsoft"))
      return conv(n);
    if (is_op(n, "Add")) return add(n);
    if (is_op(n, "Mul")) return same_shape_binary(n);
    if (is_unary_activation(n)) return activation(n);
    if (is_op(n, "MaxPool") || is_op(n, "AveragePool")) return pool(n);
    if (is_op(n, "GlobalMaxPool") || is_op(n, "GlobalAveragePool")) return global_pool(n);
    return false;
  }

  // Whether a value is read only by node `reader` (directly) and is not a graph output.
  bool read_only_by(const std::string& value, const ir::Node& reader) const {
    auto c = sole_consumer(g_, value);
    return c && g_.nodes[*c].id == reader.id;
  }

  // A rank-4 shape whose every dimension is a number or a symbol (one symbol is one size, so two such
  // shapes compare exactly).
  std::optional<ir::Shape> shape4(const std::string& v) const {
    auto t = value_type(ctx_, v);
    if (!t || !t->is_tensor() || !t->shape || t->shape->size() != 4) return std::nullopt;
    for (const ir::Dim& d : *t->shape)
      if (d.is_unknown()) return std::nullopt;
    return *t->shape;
  }

  bool conv(const ir::Node& n) {
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
    b.inputs[0] = blocked_input(n.inputs[0], cin, group == 1 && cin < block_);
    if (auto strides = pointwise_strides(n, *w); strides && b.inputs[0] != n.inputs[0]) {
      b.inputs[0] = subsample(b.inputs[0], *strides);
      std::erase_if(b.attributes, [](const ir::Attribute& a) { return a.name == "strides"; });
    }
    b.outputs = {fresh(n.outputs[0])};
    b.id = next_id_++;
    out_.push_back(std::move(b));
    blocked_[n.outputs[0]] = {out_.back()->outputs[0], cout, out_.size() - 1};
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

  // The blocked twin of `x`, a ReorderToBlocked of it (made once), or `x` itself when `plain_ok`.
  std::string blocked_input(const std::string& x, int64_t channels, bool plain_ok) {
    if (auto it = blocked_.find(x); it != blocked_.end()) return it->second.name;
    if (plain_ok) return x;
    ir::Node r;
    r.op_type = "ReorderToBlocked";
    r.domain = layout::kDomain;
    r.name = x + "_to_blocked";
    r.inputs = {x};
    r.outputs = {fresh(x)};
    r.attributes.push_back(ir::Attribute::of_int("block", block_));
    r.id = next_id_++;
    out_.push_back(std::move(r));
    blocked_[x] = {out_.back()->outputs[0], channels, std::nullopt, true};
    return blocked_[x].name;
  }

  // Both inputs blocked, of one static shape.
  bool same_blocked_shapes(const ir::Node& n) const {
    if (n.inputs.size() != 2 || !blocked_.count(n.inputs[0]) || !blocked_.count(n.inputs[1])) return false;
    auto a = shape4(n.inputs[0]), b = shape4(n.inputs[1]);
    return a && b && *a == *b;
  }

  bool add(const ir::Node& n) {
    if (!same_blocked_shapes(n)) return false;
    for (int k = 0; k < 2; ++k) {
      const std::string& mine = n.inputs[k];
      const std::string& other = n.inputs[1 - k];
      const BlockedValue& v = blocked_.at(mine);
      if (!v.conv || mine == other || !read_only_by(mine, n)) continue;
      ir::Node& conv = *out_[*v.conv];
      if (conv.inputs.size() > 3 || !attr_string(conv, "activation").empty()) continue;
      // The convolution moves down to the Add, where Z exists for certain.
      ir::Node moved = std::move(conv);
      out_[*v.conv].reset();
      while (moved.inputs.size() < 3) moved.inputs.emplace_back();
      moved.inputs.push_back(blocked_.at(other).name);
      moved.outputs = {fresh(n.outputs[0])};
      absorb(moved, n);
      out_.push_back(std::move(moved));
      blocked_[n.outputs[0]] = {out_.back()->outputs[0], v.channels, out_.size() - 1};
      blocked_.erase(mine);
      return true;
    }
    return same_shape_binary(n);
  }

  bool same_shape_binary(const ir::Node& n) {
    if (!same_blocked_shapes(n)) return false;
    ir::Node e = n;
    e.inputs = {blocked_.at(n.inputs[0]).name, blocked_.at(n.inputs[1]).name};
    e.outputs = {fresh(n.outputs[0])};
    e.id = next_id_++;
    int64_t channels = blocked_.at(n.inputs[0]).channels;
    out_.push_back(std::move(e));
    blocked_[n.outputs[0]] = {out_.back()->outputs[0], channels, std::nullopt};
    return true;
  }

  bool activation(const ir::Node& n) {
    auto it = blocked_.find(n.inputs[0]);
    if (it == blocked_.end()) return false;
    auto params = fusable_activation(ctx_, n);
    if (!params) return false;
    BlockedValue v = it->second;
    if (v.conv && read_only_by(n.inputs[0], n) && attr_string(*out_[*v.conv], "activation").empty()) {
      ir::Node& conv = *out_[*v.conv];
      conv.attributes.push_back(ir::Attribute::of_string("activation", n.op_type));
      if (!params->empty()) conv.attributes.push_back(ir::Attribute::of_floats("activation_params", *params));
      conv.outputs = {fresh(n.outputs[0])};
      absorb(conv, n);
      blocked_[n.outputs[0]] = {conv.outputs[0], v.channels, v.conv};
      blocked_.erase(n.inputs[0]);
      return true;
    }
    ir::Node e = n;
    e.inputs[0] = v.name;  // Clip's bounds, if inputs, stay as they are
    e.outputs = {fresh(n.outputs[0])};
    e.id = next_id_++;
    out_.push_back(std::move(e));
    blocked_[n.outputs[0]] = {out_.back()->outputs[0], v.channels, std::nullopt};
    return true;
  }

  bool pool(const ir::Node& n) {
    auto it = blocked_.find(n.inputs[0]);
    if (it == blocked_.end() || n.outputs.size() != 1 || attr_int(n, "storage_order", 0) != 0) return false;
    auto ks = attr_ints(n, "kernel_shape");
    if (!ks || ks->size() != 2) return false;
    ir::Node p = n;
    p.op_type = is_op(n, "MaxPool") ? "BlockedMaxPool" : "BlockedAveragePool";
    p.domain = layout::kDomain;
    std::erase_if(p.attributes, [](const ir::Attribute& a) { return a.name == "storage_order"; });
    p.inputs = {it->second.name};
    p.outputs = {fresh(n.outputs[0])};
    p.id = next_id_++;
    int64_t channels = it->second.channels;
    out_.push_back(std::move(p));
    blocked_[n.outputs[0]] = {out_.back()->outputs[0], channels, std::nullopt};
    return true;
  }

  bool global_pool(const ir::Node& n) {
    auto it = blocked_.find(n.inputs[0]);
    auto shape = shape4(n.inputs[0]);
    if (it == blocked_.end() || !shape || !(*shape)[2].is_static() || !(*shape)[3].is_static()) return false;
    ir::Node p = n;
    p.op_type = is_op(n, "GlobalMaxPool") ? "BlockedMaxPool" : "BlockedAveragePool";
    p.domain = layout::kDomain;
    p.attributes = {ir::Attribute::of_ints("kernel_shape", {(*shape)[2].value, (*shape)[3].value})};
    p.inputs = {it->second.name};
    p.outputs = {fresh(n.outputs[0])};
    p.id = next_id_++;
    int64_t channels = it->second.channels;
    out_.push_back(std::move(p));
    blocked_[n.outputs[0]] = {out_.back()->outputs[0], channels, std::nullopt};
    return true;
  }

  // NCHW values still read after the rewrite come back from their blocked twins.
  void add_reorders_back() {
    std::vector<std::optional<ir::Node>> with;
    std::map<std::string, std::vector<ir::Node>> after;  // blocked name -> reorders to add after it
    ir::Graph probe;
    probe.inputs = g_.inputs;
    probe.outputs = g_.outputs;
    for (auto& n : out_)
      if (n) probe.nodes.push_back(*n);
    for (const auto& [plain, v] : blocked_) {
      if (v.plain_exists || !is_used(probe, plain)) continue;
      ir::Node r;
      r.op_type = "ReorderFromBlocked";
      r.domain = layout::kDomain;
      r.name = plain + "_from_blocked";
      r.inputs = {v.name};
      r.outputs = {plain};
      r.attributes.push_back(ir::Attribute::of_int("channels", v.channels));
      r.id = next_id_++;
      after[v.name].push_back(std::move(r));
    }
    for (auto& n : out_) {
      if (!n) continue;
      std::string produced = n->outputs.empty() ? std::string() : n->outputs[0];
      with.push_back(std::move(n));
      if (auto it = after.find(produced); it != after.end())
        for (auto& r : it->second) with.push_back(std::move(r));
    }
    out_ = std::move(with);
  }

  std::string fresh(const std::string& plain) {
    std::string base = plain + "_blocked";
    std::string name = fresh_name(g_, base);
    while (taken_.count(name)) name = fresh_name(g_, base + std::to_string(taken_.size()));
    taken_.insert(name);
    return name;
  }

  RuleContext& ctx_;
  ir::Graph& g_;
  int64_t block_;
  std::vector<std::optional<ir::Node>> out_;
  std::map<std::string, BlockedValue> blocked_;
  std::set<std::string> taken_;
  // Ids for new nodes; the graph's own counter moves only at the end, since the type queries cache the
  // checker's results for as long as the graph looks unchanged.
  ir::NodeId next_id_ = g_.next_node_id;
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
