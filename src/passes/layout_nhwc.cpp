// to_nhwc_layout (layout level, Layout::kNhwc: GPU sessions): moves chains of 2-D convolutions, pooling
// and the ops between them to channels-last (ops/nhwc/nhwc.h), the layout cuDNN's float16 tensor-core
// convolutions compute in. Left in NCHW, cuDNN transposes every convolution's input and output itself
// (or picks slower NCHW kernels), and every pooling reads across channel planes.
//
// One sweep in graph order (the chain-layout sweep of layout_chain.h, this file being its strategy)
// rewrites, with `twin_` mapping each NCHW value to its NHWC twin:
//  - Conv / FusedConv (float, rank 4, static channel count, constant 4-D weights) -> NhwcConv, its
//    weights reordered once from [M, C/g, kH, kW] to [M, kH, kW, C/g] (a new initializer; the old one
//    is dropped when nothing else reads it). X (and FusedConv's Z) are twins, or Transpose(X) made once
//    per value; X = Transpose(x, [0,3,1,2]) of a channels-last x reads x itself (the transposes cancel);
//  - Add of an NhwcConv's result (read by nothing else; no activation, no Z yet) and another twin of the
//    same shape: the Add moves into the convolution as Z (ResNet's and MobileNetV2's residuals); an
//    activation of an NhwcConv without one (read by nothing else) moves into it (FusedConv's list);
//  - other elementwise unary ops run unchanged on the twin; Add/Sub/Mul/Div/Max/Min of two same-shaped
//    twins (or of twins that broadcast axis by axis, [N,C,H,W] * [N,C,1,1]), or of a twin and a scalar or
//    per-channel constant ([C,1,1], [1,C,1,1]: reshaped to [C], which broadcasts along the last axis);
//  - MaxPool (no Indices, storage_order 0) / AveragePool, 2-D -> NhwcMaxPool / NhwcAveragePool, and
//    GlobalMaxPool / GlobalAveragePool over a static H x W -> the same with an H x W window;
//  - Concat of twins on the channel axis -> Concat on axis 3; ReduceMean over the spatial axes ->
//    ReduceMean over axes 1 and 2 (with keepdims 0 its output is the plain [N, C] value itself);
//  - an inference BatchNormalization left unfused (constant parameters) -> Mul and Add of [C] constants.
// Afterwards every NCHW value still read (by another op, a subgraph or as a graph output) gets a
// Transpose(twin, [0,3,1,2]) right after the twin's producer, under the value's own name. Every node
// made is one the target has a kernel for (KernelOracle), or the node is left as it was.
#include "passes/layout_nhwc.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ops/nhwc/nhwc.h"
#include "passes/graph_util.h"
#include "passes/layout_chain.h"

namespace tessera::passes {
namespace {

namespace nhwc = ops::nhwc;

bool is_unary_elementwise(const ir::Node& n) {
  static const std::set<std::string> kOps = {
      "Relu",     "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu",  "Selu",
      "Softplus", "Neg",       "Abs",  "Exp",     "Log",  "Sqrt",        "Erf",       "Gelu", "Mish"};
  return ir::canonical_domain(n.domain).empty() && kOps.count(n.op_type) > 0 && n.outputs.size() == 1;
}

bool is_binary_elementwise(const ir::Node& n) {
  static const std::set<std::string> kOps = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  return ir::canonical_domain(n.domain).empty() && kOps.count(n.op_type) > 0 && n.inputs.size() == 2;
}

// [M, C/g, kH, kW] -> [M, kH, kW, C/g].
ir::Tensor ohwi_weights(const ir::Tensor& w, const std::vector<double>& v) {
  const int64_t m = w.dims[0], c = w.dims[1], kh = w.dims[2], kw = w.dims[3];
  std::vector<double> out(v.size());
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < c; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          out[static_cast<size_t>(((o * kh + y) * kw + x) * c + i)] =
              v[static_cast<size_t>(((o * c + i) * kh + y) * kw + x)];
  return make_float_tensor(w.dtype, {m, kh, kw, c}, out);
}

// Channels-last as a chain-layout strategy (layout_chain.h).
class NhwcLayout : public ChainLayout {
 public:
  explicit NhwcLayout(RuleContext& ctx)
      : ChainLayout(ctx, {kNhwcLayoutPass, "nhwc", "Nhwc", nhwc::kDomain}) {}

 private:
  bool accepts_binary(const ir::Node& n) const override { return is_binary_elementwise(n); }
  bool accepts_unary(const ir::Node& n) const override { return is_unary_elementwise(n); }

  bool rewrite_other(const ir::Node& n) override {
    if (is_op(n, "Concat")) return concat(n);
    if (is_op(n, "ReduceMean")) return reduce_mean(n);
    if (is_op(n, "BatchNormalization")) return batch_norm(n);
    return false;
  }

  ir::Node to_layout_node() const override {
    ir::Node r;
    r.op_type = "Transpose";
    r.attributes = {ir::Attribute::of_ints("perm", nhwc::to_nhwc_perm())};
    return r;
  }

  ir::Node from_layout_node(const LayoutTwin&) const override {
    ir::Node r;
    r.op_type = "Transpose";
    r.attributes = {ir::Attribute::of_ints("perm", nhwc::to_nchw_perm())};
    return r;
  }

  // Whether the target can run `n` (a com.tessera node is looked up at version 1, the import the pass
  // adds at the end).
  bool runnable(const ir::Node& n) const override { return kernel_available(ctx_, n); }

  bool conv(const ir::Node& n) override {
    if (n.outputs.size() != 1 || n.inputs.size() < 2) return false;
    if (elem_type(ctx_, n.inputs[0]) != ir::DataType::kFloat) return false;
    auto xt = value_type(ctx_, n.inputs[0]);
    if (!xt || !xt->is_tensor() || !xt->shape || xt->shape->size() != 4 || !(*xt->shape)[1].is_static())
      return false;
    const ir::Tensor* w = constant_value(g_, n.inputs[1]);
    if (!w || w->dims.size() != 4 || w->dtype != ir::DataType::kFloat) return false;
    const int64_t group = attr_int(n, "group", 1);
    if (group < 1 || w->dims[1] * group != (*xt->shape)[1].value) return false;
    const bool has_z = n.inputs.size() > 3 && !n.inputs[3].empty();
    if (has_z && !shape4(n.inputs[3])) return false;
    auto weights = constant_doubles(g_, n.inputs[1]);
    if (!weights) return false;

    ir::Node c = n;
    c.op_type = "NhwcConv";
    c.domain = nhwc::kDomain;
    c.id = next_id_++;
    c.outputs = {fresh(n.outputs[0])};
    if (!runnable(c)) return false;
    c.inputs[0] = nhwc_input(n.inputs[0], (*xt->shape)[1].value);
    c.inputs[1] = initializer(ohwi_weights(*w, *weights), n.inputs[1] + "_ohwi");
    old_weights_.push_back(n.inputs[1]);
    if (has_z) c.inputs[3] = nhwc_input(n.inputs[3], w->dims[0]);
    out_.push_back(std::move(c));
    twin_[n.outputs[0]] = {out_.back()->outputs[0], w->dims[0], out_.size() - 1};
    return true;
  }

  // The twin of `x`, the channels-last value a Transpose(x, [0,3,1,2]) read, or a Transpose of x (once).
  std::string nhwc_input(const std::string& x, int64_t channels) {
    if (!twin_.count(x)) {
      if (auto p = producer(g_, x)) {
        const ir::Node& t = g_.nodes[*p];
        if (is_op(t, "Transpose") && t.inputs.size() == 1 && attr_ints(t, "perm") == nhwc::to_nchw_perm()) {
          twin_[x] = {t.inputs[0], channels, std::nullopt, true};
          cancelled_.insert(x);
          return t.inputs[0];
        }
      }
    }
    return reorder_in(x, channels);
  }

  // An operand of a binary op beside a twin with `channels` channels: a scalar constant as it is, a
  // per-channel float constant reshaped to [C]; nullopt otherwise.
  std::optional<std::string> channel_operand(const std::string& v, int64_t channels) {
    const ir::Tensor* t = constant_value(g_, v);
    if (!t) return std::nullopt;
    auto numel = t->numel();
    if (numel && *numel == 1 && t->dims.size() <= 1) return v;
    if (t->dtype != ir::DataType::kFloat) return std::nullopt;
    if (auto it = reshaped_.find(v); it != reshaped_.end()) return it->second;
    auto values = per_channel(g_, v, 4, channels);
    if (!values) return std::nullopt;
    return reshaped_[v] = initializer(make_float_tensor(t->dtype, {channels}, *values), v);
  }

  // Both inputs twins whose rank-4 shapes broadcast axis by axis (equal, or 1 on one side): the same
  // axes broadcast after both are transposed (EfficientNet's squeeze-excitation Mul of [N,C,H,W] by
  // [N,C,1,1]).
  bool broadcasting_twins(const ir::Node& n) const {
    if (n.inputs.size() != 2 || !twin_.count(n.inputs[0]) || !twin_.count(n.inputs[1])) return false;
    auto a = shape4(n.inputs[0]), b = shape4(n.inputs[1]);
    if (!a || !b) return false;
    for (size_t d = 0; d < 4; ++d) {
      const ir::Dim &x = (*a)[d], &y = (*b)[d];
      const bool one = (x.is_static() && x.value == 1) || (y.is_static() && y.value == 1);
      if (!(x == y) && !one) return false;
    }
    return true;
  }

  bool binary(const ir::Node& n) override {
    std::vector<std::string> ins(2);
    int64_t channels = 0;
    if (broadcasting_twins(n)) {
      for (int k = 0; k < 2; ++k) ins[k] = twin_.at(n.inputs[k]).name;
      channels = std::max(twin_.at(n.inputs[0]).channels, twin_.at(n.inputs[1]).channels);
    } else {
      int k = twin_.count(n.inputs[0]) ? 0 : twin_.count(n.inputs[1]) ? 1 : -1;
      if (k < 0 || twin_.count(n.inputs[1 - k]) || !shape4(n.inputs[k])) return false;
      channels = twin_.at(n.inputs[k]).channels;
      auto other = channel_operand(n.inputs[1 - k], channels);
      if (!other) return false;
      ins[k] = twin_.at(n.inputs[k]).name;
      ins[1 - k] = *other;
    }
    ir::Node e = n;
    e.inputs = ins;
    emit_elementwise(std::move(e), n.outputs[0], channels);
    return true;
  }

  bool concat(const ir::Node& n) {
    int64_t axis = attr_int(n, "axis", 0);
    if (axis != 1 && axis != -3) return false;
    int64_t channels = 0;
    std::vector<std::string> ins;
    for (const auto& in : n.inputs) {
      auto it = twin_.find(in);
      if (in.empty() || it == twin_.end()) return false;
      ins.push_back(it->second.name);
      channels += it->second.channels;
    }
    ir::Node e = n;
    e.inputs = ins;
    for (auto& a : e.attributes)
      if (a.name == "axis") a.i = 3;
    emit_elementwise(std::move(e), n.outputs[0], channels);
    return true;
  }

  // ReduceMean over axes {2, 3}: an attribute before opset 18, an input from 18 on.
  bool reduce_mean(const ir::Node& n) {
    auto it = twin_.find(n.inputs[0]);
    if (it == twin_.end()) return false;
    const bool axes_input = n.inputs.size() > 1 && !n.inputs[1].empty();
    auto axes = axes_input ? constant_ints(g_, n.inputs[1]) : attr_ints(n, "axes");
    if (!axes || axes->size() != 2) return false;
    std::vector<int64_t> a = *axes;
    for (auto& x : a)
      if (x < 0) x += 4;
    std::sort(a.begin(), a.end());
    if (a != std::vector<int64_t>{2, 3}) return false;
    ir::Node e = n;
    e.inputs[0] = it->second.name;
    const std::vector<int64_t> spatial{1, 2};
    if (axes_input) {
      e.inputs[1] =
          initializer(ir::make_tensor<int64_t>("", ir::DataType::kInt64, {2}, spatial), n.inputs[1]);
    } else {
      for (auto& at : e.attributes)
        if (at.name == "axes") at.ints = spatial;
    }
    if (attr_int(n, "keepdims", 1) == 0) {  // [N, C] either way: the plain value itself
      e.id = next_id_++;
      out_.push_back(std::move(e));
      return true;
    }
    emit_elementwise(std::move(e), n.outputs[0], it->second.channels);
    return true;
  }

  // Inference BatchNormalization with constant float parameters (one the basic level could not fold into
  // a convolution): x * a + c per channel, a = scale / sqrt(var + epsilon), c = B - mean * a, as a Mul
  // and an Add of [C] constants, which broadcast along the channels-last axis.
  bool batch_norm(const ir::Node& n) {
    auto it = twin_.find(n.inputs[0]);
    if (it == twin_.end() || n.inputs.size() != 5 || attr_int(n, "training_mode", 0) != 0) return false;
    const int64_t c = it->second.channels;
    std::vector<std::vector<double>> p;
    for (size_t i = 1; i < 5; ++i) {
      const ir::Tensor* t = constant_value(g_, n.inputs[i]);
      auto v = constant_doubles(g_, n.inputs[i]);
      if (!t || t->dtype != ir::DataType::kFloat || !v || v->size() != static_cast<size_t>(c)) return false;
      p.push_back(std::move(*v));
    }
    const double eps = attr_float(n, "epsilon", 1e-5f);
    std::vector<double> a(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
    for (size_t k = 0; k < a.size(); ++k) {
      a[k] = p[0][k] / std::sqrt(p[3][k] + eps);
      shift[k] = p[1][k] - p[2][k] * a[k];
    }
    const std::string base = n.name.empty() ? n.outputs[0] : n.name;
    ir::Node mul;
    mul.op_type = "Mul";
    mul.name = base + "_scale";
    mul.inputs = {it->second.name, initializer(make_float_tensor(ir::DataType::kFloat, {c}, a), base + "_a")};
    mul.outputs = {fresh(base + "_scaled")};
    mul.id = next_id_++;
    std::string scaled = mul.outputs[0];
    out_.push_back(std::move(mul));
    ir::Node add;
    add.op_type = "Add";
    add.name = base + "_shift";
    add.inputs = {scaled, initializer(make_float_tensor(ir::DataType::kFloat, {c}, shift), base + "_c")};
    add.metadata_props.emplace_back(kFusedFromKey, fused_names(n));
    emit_elementwise(std::move(add), n.outputs[0], c);
    return true;
  }

  std::map<std::string, std::string> reshaped_;  // per-channel constant -> its [C] copy
};

}  // namespace

void to_nhwc_layout(ir::Model& model, const Target& target, std::vector<Rewrite>& log) {
  RuleContext ctx{model, model.graph, true, target};
  if (!NhwcLayout(ctx).run(log)) return;
  ensure_opset_import(model, nhwc::kDomain, 1);
}

}  // namespace tessera::passes
