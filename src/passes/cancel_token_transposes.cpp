// cancel_token_transposes (layout, after fuse_attention): a Transpose that only reorders the leading
// ("token") axes of its input, [B, S, E] -> [S, B, E], is moved down through the per-token operations
// that read its result until it meets its inverse and both go. The dynamo export of nn.MultiheadAttention
// (batch_first=False, ViT-B/16) transposes to [S, B, E] before every attention and back after it: 24
// copies of [32, 197, 768] at batch 32, ~6 us each on the H100.
//
// From the Transpose's output, the rule grows a region of values that are the same tensors with their
// leading axes in the other order, "old = Transpose(new, P)", as long as every reader is one of:
//  - elementwise ops whose other inputs are region values of the same shape or broadcast along the
//    trailing axes only; LayerNormalization over trailing axes, com.microsoft SkipLayerNormalization,
//    BiasGelu, FastGelu; MatMul / com.tessera MatMulBias by a 2-D weight; Gemm on token rows;
//  - Reshapes that keep the leading axes and regroup the others ([S, B, 3E] -> [S, B, 3, H, D]), or merge
//    the leading axes into one row axis ([S, B, H, D] -> [S*B, E]: "flat", rows in the other order, read by
//    the row-wise ops above) or split that row axis back;
//  - com.tessera FusedAttention: its q/k/v_axes name where (batch, heads, seq, size) lie, so reading the
//    untransposed tensor is a change of attributes, and y_axes writes its output untransposed too;
//  - a Transpose that undoes P: it cancels, its readers read the untransposed value.
// Each region value still read elsewhere (another op, a subgraph, a graph output) gets the Transpose back
// under its own name ("flat" values cannot: then nothing changes). The rule rewrites only when it removes
// more Transposes than it adds. Static shapes only.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

enum class Kind { kTensor, kFlat };

struct RegionValue {
  Kind kind = Kind::kTensor;
  std::vector<int64_t> shape;  // the old value's static shape
  std::string new_name;
};

// What happens to an inside node.
enum class Action { kRename, kReshape, kAttention, kCancel };

// A node taken into the region: what happens to it, and its outputs that join the region (old shapes).
struct Admission {
  Action action = Action::kRename;
  std::vector<std::pair<std::string, std::vector<int64_t>>> outs;
  bool operator==(const Admission&) const = default;
};
using Admit = std::optional<Admission>;

bool in_domain(const ir::Node& n, std::string_view domain, std::string_view op) {
  return n.domain == domain && n.op_type == op;
}

bool is_elementwise(const ir::Node& n) {
  static const std::set<std::string> kOnnx = {
      "Relu", "Gelu",       "Erf",      "Sigmoid", "Tanh",     "Neg",       "Abs", "Exp",         "Log",
      "Sqrt", "Reciprocal", "Softplus", "Cast",    "Identity", "LeakyRelu", "Elu", "HardSigmoid", "HardSwish",
      "Clip", "Add",        "Sub",      "Mul",     "Div",      "Pow",       "Max", "Min",         "Where"};
  static const std::set<std::string> kMicrosoft = {"BiasGelu", "FastGelu", "Gelu", "QuickGelu"};
  if (n.outputs.size() != 1) return false;
  const std::string_view d = ir::canonical_domain(n.domain);
  return (d.empty() && kOnnx.count(n.op_type) > 0) ||
         (d == "com.microsoft" && kMicrosoft.count(n.op_type) > 0);
}

class TokenRegion {
 public:
  TokenRegion(RuleContext& ctx, size_t entry) : ctx_(ctx), g_(ctx.graph), entry_(entry) {}

  // Whether node `entry_` starts a region; fills perm_, lead sizes and the first value.
  bool start() {
    const ir::Node& t = g_.nodes[entry_];
    if (!is_op(t, "Transpose") || t.inputs.size() != 1 || t.outputs.size() != 1) return false;
    auto perm = attr_ints(t, "perm");
    auto out = static_shape(ctx_, t.outputs[0]);
    if (!perm || !out || perm->size() != out->size()) return false;
    size_t lead = 0;
    for (size_t k = 0; k < perm->size(); ++k)
      if ((*perm)[k] != static_cast<int64_t>(k)) lead = k + 1;
    if (lead < 2 || lead >= perm->size()) return false;  // the last axis stays where it is
    for (size_t k = 0; k < lead; ++k)
      if ((*perm)[k] < 0 || (*perm)[k] >= static_cast<int64_t>(lead)) return false;
    perm_.assign(perm->begin(), perm->begin() + static_cast<int64_t>(lead));
    lead_old_.assign(out->begin(), out->begin() + static_cast<int64_t>(lead));
    lead_new_.assign(lead, 0);
    tokens_ = 1;
    for (size_t k = 0; k < lead; ++k) {
      lead_new_[static_cast<size_t>(perm_[k])] = lead_old_[k];
      tokens_ *= lead_old_[k];
    }
    for (int64_t d : *out)
      if (d <= 0) return false;
    values_[t.outputs[0]] = {Kind::kTensor, *out, t.inputs[0]};
    return true;
  }

  // Grows the region to its fixed point: a node goes in once every input it needs there is there.
  void grow() {
    for (bool changed = true; changed;) {
      changed = false;
      std::vector<std::string> names;
      for (const auto& [name, v] : values_) names.push_back(name);
      for (const std::string& name : names) {
        for (const Use& u : uses(g_, name)) {
          if (u.input == Use::kInSubgraph || actions_.count(u.node) || u.node == entry_) continue;
          if (Admit a = classify(u.node)) {
            admit(u.node, *a);
            changed = true;
          }
        }
      }
    }
  }

  // Transposes removed minus added; the region's exits (values read outside it), or nullopt when one
  // cannot have its Transpose back.
  std::optional<int> gain() {
    int removed = 1, added = 0;
    // Each node again against the final region: an input that joined it after the node did may break
    // what the node was taken in for (a weight that is itself a region value).
    for (const auto& [n, a] : actions_)
      if (classify(n) != admitted_.at(n)) return std::nullopt;
    std::set<std::string> renamed;  // region values whose new form takes a graph output's name
    for (const auto& [n, a] : actions_) {
      if (a != Action::kCancel) continue;
      ++removed;
      const ir::Node& t = g_.nodes[n];
      if (is_graph_output(g_, t.outputs[0]) && !renamed.insert(t.inputs[0]).second) return std::nullopt;
    }
    for (const auto& [name, v] : values_) {
      if (!needs_exit(name)) continue;
      if (v.kind == Kind::kFlat) return std::nullopt;
      exits_.push_back(name);
      ++added;
    }
    return removed - added;
  }

  void rewrite() {
    std::set<std::string> taken;
    for (const auto& [index, action] : actions_) {  // cancelled into a graph output: that name
      const ir::Node& t = g_.nodes[index];
      if (action == Action::kCancel && is_graph_output(g_, t.outputs[0]))
        values_.at(t.inputs[0]).new_name = t.outputs[0];
    }
    for (auto& [name, v] : values_) {
      if (name == g_.nodes[entry_].outputs[0] || !v.new_name.empty()) continue;
      std::string fresh = fresh_name(g_, name + "_tok");
      for (int k = 1; taken.count(fresh); ++k) fresh = fresh_name(g_, name + "_tok" + std::to_string(k));
      taken.insert(fresh);
      v.new_name = fresh;
    }
    std::vector<ir::NodeId> gone = {g_.nodes[entry_].id};
    std::vector<std::pair<std::string, std::string>> bypass;  // a cancelled Transpose's output -> new value
    for (const auto& [index, action] : actions_) {
      ir::Node& n = g_.nodes[index];
      if (action == Action::kCancel) {
        gone.push_back(n.id);
        if (values_.at(n.inputs[0]).new_name != n.outputs[0])
          bypass.emplace_back(n.outputs[0], values_.at(n.inputs[0]).new_name);
        continue;
      }
      if (action == Action::kReshape) rewrite_reshape(n);
      if (action == Action::kAttention) rewrite_attention(n);
      for (auto& in : n.inputs)
        if (auto it = values_.find(in); it != values_.end()) in = it->second.new_name;
      for (auto& out : n.outputs)
        if (auto it = values_.find(out); it != values_.end()) out = it->second.new_name;
    }
    for (const auto& [from, to] : bypass) replace_uses(g_, from, to);
    for (const std::string& name : exits_) add_exit(name);
    std::erase_if(g_.value_info, [&](const ir::ValueInfo& vi) {
      return values_.count(vi.name) > 0 && std::find(exits_.begin(), exits_.end(), vi.name) == exits_.end();
    });
    remove_nodes(g_, gone);
  }

 private:
  size_t lead() const { return perm_.size(); }

  bool leading_is_old(const std::vector<int64_t>& s) const {
    return s.size() > lead() && std::equal(lead_old_.begin(), lead_old_.end(), s.begin());
  }
  // A region value's old shape of `kind`: a tensor with the old leading axes and at least one more, or
  // flat rows [tokens, ...] with at least one more axis.
  std::optional<Kind> kind_of(const std::vector<int64_t>& s) const {
    if (std::any_of(s.begin(), s.end(), [](int64_t d) { return d <= 0; })) return std::nullopt;
    if (leading_is_old(s)) return Kind::kTensor;
    if (s.size() >= 2 && s[0] == tokens_) return Kind::kFlat;
    return std::nullopt;
  }

  const RegionValue* region(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }

  // A value outside the region that broadcasts against `out` (of `kind`) along the trailing axes only.
  bool trailing_broadcast(const std::string& name, const std::vector<int64_t>& out, Kind kind) const {
    if (name.empty()) return true;
    auto s = static_shape(ctx_, name);
    if (!s || s->size() > out.size()) return false;
    const size_t first_trailing = kind == Kind::kTensor ? lead() : 1;
    const size_t offset = out.size() - s->size();
    for (size_t k = 0; k < s->size(); ++k)
      if (k + offset < first_trailing && (*s)[k] != 1) return false;
    return true;
  }

  // Inputs `slots` region values of `kind` and shape `shape`, or (if `others_ok`) trailing broadcasts.
  bool region_inputs(const ir::Node& n, const std::vector<size_t>& slots, Kind kind,
                     const std::vector<int64_t>& shape, bool others_ok) const {
    for (size_t s : slots) {
      if (s >= n.inputs.size() || n.inputs[s].empty()) continue;
      const RegionValue* v = region(n.inputs[s]);
      if (v && (v->kind != kind || v->shape != shape)) return false;
      if (!v && !(others_ok && trailing_broadcast(n.inputs[s], shape, kind))) return false;
    }
    return true;
  }

  // Only these outputs of `n` may be read.
  bool only_outputs_used(const ir::Node& n, const std::vector<size_t>& allowed) const {
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (!n.outputs[k].empty() && std::find(allowed.begin(), allowed.end(), k) == allowed.end() &&
          is_used(g_, n.outputs[k]))
        return false;
    return true;
  }

  // Whether no input of `n` outside `slots` is in the region.
  bool none_in_region_except(const ir::Node& n, const std::vector<size_t>& slots) const {
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (std::find(slots.begin(), slots.end(), k) == slots.end() && region(n.inputs[k])) return false;
    return true;
  }

  void admit(size_t index, const Admission& a) {
    actions_[index] = a.action;
    admitted_[index] = a;
    for (const auto& [name, shape] : a.outs) values_[name] = {*kind_of(shape), shape, ""};
  }

  static Admission admission(Action a, std::vector<std::pair<std::string, std::vector<int64_t>>> outs) {
    return {a, std::move(outs)};
  }

  // Puts node `index` in the region when it is one of the readers the file comment lists.
  Admit classify(size_t index) const {
    const ir::Node& n = g_.nodes[index];
    if (has_subgraph(n)) return std::nullopt;
    if (is_op(n, "Transpose")) return classify_transpose(index);
    if (is_op(n, "Reshape")) return classify_reshape(index);
    if (in_domain(n, "com.tessera", "FusedAttention")) return classify_attention(index);
    // Per-token ops: the output keeps the leading structure of the region input in slot 0 (or 1).
    const ir::Node* node = &n;
    auto first = [&]() -> const RegionValue* {
      for (const auto& in : node->inputs)
        if (const RegionValue* v = region(in)) return v;
      return nullptr;
    };
    const RegionValue* v = first();
    if (!v || n.outputs.empty() || n.outputs[0].empty()) return std::nullopt;
    auto out = static_shape(ctx_, n.outputs[0]);
    if (!out || kind_of(*out) != v->kind) return std::nullopt;
    if (is_elementwise(n)) {
      if (*out != v->shape || !region_inputs(n, all_slots(n), v->kind, *out, true)) return std::nullopt;
      return admission(Action::kRename, {{n.outputs[0], *out}});
    }
    const bool matmul = is_op(n, "MatMul") || in_domain(n, "com.tessera", "MatMulBias");
    if (matmul || is_op(n, "Gemm")) return classify_linear(index, *v, *out, matmul);
    if (is_op(n, "LayerNormalization") || in_domain(n, "com.microsoft", "SkipLayerNormalization"))
      return classify_norm(index, *v, *out);
    return std::nullopt;
  }

  static std::vector<size_t> all_slots(const ir::Node& n) {
    std::vector<size_t> s(n.inputs.size());
    for (size_t k = 0; k < s.size(); ++k) s[k] = k;
    return s;
  }

  // MatMul / MatMulBias by a 2-D weight (slot 0 the region, rows independent), or Gemm on flat rows.
  Admit classify_linear(size_t index, const RegionValue& v, const std::vector<int64_t>& out,
                        bool matmul) const {
    const ir::Node& n = g_.nodes[index];
    if (n.inputs.size() < 2 || !region(n.inputs[0]) || !none_in_region_except(n, {0})) return std::nullopt;
    auto w = static_shape(ctx_, n.inputs[1]);
    if (!w || w->size() != 2 || n.outputs.size() != 1) return std::nullopt;
    if (out.size() != v.shape.size() || !std::equal(out.begin(), out.end() - 1, v.shape.begin()))
      return std::nullopt;
    if (matmul) {
      if (n.inputs.size() > 2 && !trailing_broadcast(n.inputs[2], out, v.kind)) return std::nullopt;
    } else {
      if (v.kind != Kind::kFlat || attr_int(n, "transA", 0) != 0) return std::nullopt;
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
        auto c = static_shape(ctx_, n.inputs[2]);
        if (!c || (c->size() == 2 && (*c)[0] != 1) || c->size() > 2) return std::nullopt;
      }
    }
    return admission(Action::kRename, {{n.outputs[0], out}});
  }

  // LayerNormalization over trailing axes; SkipLayerNormalization (input and skip in the region or
  // broadcast along the trailing axes; its mean / inv_std outputs unread).
  Admit classify_norm(size_t index, const RegionValue& v, const std::vector<int64_t>& out) const {
    const ir::Node& n = g_.nodes[index];
    if (out != v.shape) return std::nullopt;
    if (is_op(n, "LayerNormalization")) {
      int64_t axis = attr_int(n, "axis", -1);
      if (axis < 0) axis += static_cast<int64_t>(out.size());
      const int64_t first_trailing = v.kind == Kind::kTensor ? static_cast<int64_t>(lead()) : 1;
      if (axis < first_trailing || !region(n.inputs[0]) || !none_in_region_except(n, {0}))
        return std::nullopt;
      if (!only_outputs_used(n, {0})) return std::nullopt;
      return admission(Action::kRename, {{n.outputs[0], out}});
    }
    if (n.inputs.size() < 3 || !none_in_region_except(n, {0, 1})) return std::nullopt;
    if (!region_inputs(n, {0, 1}, v.kind, out, true) || !only_outputs_used(n, {0, 3})) return std::nullopt;
    std::vector<std::pair<std::string, std::vector<int64_t>>> outs = {{n.outputs[0], out}};
    if (n.outputs.size() > 3 && !n.outputs[3].empty()) outs.push_back({n.outputs[3], out});
    return admission(Action::kRename, outs);
  }

  // Transpose(old, Q) = Transpose(new, P o Q): the identity cancels.
  Admit classify_transpose(size_t index) const {
    const ir::Node& n = g_.nodes[index];
    const RegionValue* v = region(n.inputs[0]);
    auto q = attr_ints(n, "perm");
    if (!v || v->kind != Kind::kTensor || !q || q->size() != v->shape.size()) return std::nullopt;
    // A graph output keeps its name: the untransposed value takes it, which the chain's input cannot.
    if (is_graph_output(g_, n.outputs[0]) && n.inputs[0] == g_.nodes[entry_].outputs[0]) return std::nullopt;
    const std::vector<int64_t> p = extended(v->shape.size());
    for (size_t i = 0; i < q->size(); ++i) {
      if ((*q)[i] < 0 || (*q)[i] >= static_cast<int64_t>(p.size())) return std::nullopt;
      if (p[static_cast<size_t>((*q)[i])] != static_cast<int64_t>(i)) return std::nullopt;
    }
    return admission(Action::kCancel, {});
  }

  // Keeps the leading axes (or the flat row axis) and regroups the others, or moves between the two.
  Admit classify_reshape(size_t index) const {
    const ir::Node& n = g_.nodes[index];
    if (n.inputs.size() < 2 || !region(n.inputs[0]) || region(n.inputs[1]) || n.outputs.size() != 1)
      return std::nullopt;
    auto out = static_shape(ctx_, n.outputs[0]);
    if (!out || !kind_of(*out)) return std::nullopt;
    return admission(Action::kReshape, {{n.outputs[0], *out}});
  }

  // FusedAttention reading region tensors as Q, K or V (4 axes named); its output joins the region when
  // it has the old leading axes.
  Admit classify_attention(size_t index) const {
    const ir::Node& n = g_.nodes[index];
    if (!none_in_region_except(n, {0, 1, 2}) || n.outputs.size() != 1) return std::nullopt;
    for (size_t s = 0; s < 3 && s < n.inputs.size(); ++s) {
      const RegionValue* v = region(n.inputs[s]);
      if (v && (v->kind != Kind::kTensor || axes(n, s).size() != 4)) return std::nullopt;
    }
    std::vector<std::pair<std::string, std::vector<int64_t>>> outs;
    auto y = static_shape(ctx_, n.outputs[0]);
    if (y && y->size() == 4 && axes(n, 3).size() == 4 && kind_of(*y) == Kind::kTensor)
      outs.push_back({n.outputs[0], *y});
    return admission(Action::kAttention, outs);
  }

  static constexpr const char* kAxes[] = {"q_axes", "k_axes", "v_axes", "y_axes"};

  // The node's <x>_axes (the default [B, S, H, D] order when absent).
  static std::vector<int64_t> axes(const ir::Node& n, size_t which) {
    auto a = attr_ints(n, kAxes[which]);
    return a ? *a : std::vector<int64_t>{0, 2, 1, 3};
  }

  // P over the leading axes, the identity over the rest of a rank-`rank` value.
  std::vector<int64_t> extended(size_t rank) const {
    std::vector<int64_t> p = perm_;
    for (size_t k = lead(); k < rank; ++k) p.push_back(static_cast<int64_t>(k));
    return p;
  }

  std::vector<int64_t> new_shape(const RegionValue& v) const {
    if (v.kind == Kind::kFlat) return v.shape;
    std::vector<int64_t> s = lead_new_;
    s.insert(s.end(), v.shape.begin() + static_cast<int64_t>(lead()), v.shape.end());
    return s;
  }

  void rewrite_reshape(ir::Node& n) {
    const RegionValue& out = values_.at(n.outputs[0]);
    const std::vector<int64_t> s = new_shape(out);
    n.inputs[1] =
        add_initializer(g_, ir::make_tensor("", ir::DataType::kInt64, {static_cast<int64_t>(s.size())}, s),
                        out.new_name + "_shape");
    std::erase_if(n.attributes, [](const ir::Attribute& a) { return a.name == "allowzero"; });
  }

  // Old axis k of a region value is new axis P[k]: each named axis moves accordingly.
  void rewrite_attention(ir::Node& n) {
    for (size_t w = 0; w < 4; ++w) {
      const std::string& value = w < 3 ? (w < n.inputs.size() ? n.inputs[w] : std::string()) : n.outputs[0];
      const RegionValue* v = value.empty() ? nullptr : region(value);
      if (!v) continue;
      const std::vector<int64_t> p = extended(v->shape.size());
      std::vector<int64_t> a = axes(n, w);
      for (int64_t& x : a) x = p[static_cast<size_t>(x)];
      if (ir::Attribute* attr = n.attr(kAxes[w])) {
        attr->ints = a;
      } else {
        n.attributes.push_back(ir::Attribute::of_ints(kAxes[w], a));
      }
    }
  }

  bool needs_exit(const std::string& name) const {
    if (is_graph_output(g_, name)) return true;
    for (const Use& u : uses(g_, name))
      if (u.input == Use::kInSubgraph || (!actions_.count(u.node) && u.node != entry_)) return true;
    return false;
  }

  // old = Transpose(new, P), under the old name, right after the new value's producer.
  void add_exit(const std::string& name) {
    const RegionValue& v = values_.at(name);
    ir::Node t;
    t.op_type = "Transpose";
    t.name = fresh_name(g_, name + "_untok");
    auto taken = [&](const std::string& s) {
      return std::any_of(g_.nodes.begin(), g_.nodes.end(), [&](const ir::Node& n) { return n.name == s; });
    };
    for (int k = 1; taken(t.name); ++k) t.name = fresh_name(g_, name + "_untok" + std::to_string(k));
    t.inputs = {v.new_name};
    t.outputs = {name};
    t.attributes = {ir::Attribute::of_ints("perm", extended(v.shape.size()))};
    auto p = producer(g_, v.new_name);
    g_.add_node(std::move(t), p ? *p + 1 : 0);
  }

  RuleContext& ctx_;
  ir::Graph& g_;
  size_t entry_;
  std::vector<int64_t> perm_, lead_old_, lead_new_;
  int64_t tokens_ = 1;
  std::map<std::string, RegionValue> values_;  // by old name
  std::map<size_t, Action> actions_;           // inside nodes by index
  std::map<size_t, Admission> admitted_;
  std::vector<std::string> exits_;
};

bool cancel_token_transposes(RuleContext& ctx, size_t i) {
  if (!is_op(ctx.graph.nodes[i], "Transpose")) return false;
  TokenRegion r(ctx, i);
  if (!r.start()) return false;
  r.grow();
  auto gain = r.gain();
  if (!gain || *gain <= 0) return false;
  r.rewrite();
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(cancel_token_transposes) {
  reg.add({"cancel_token_transposes", tessera::passes::OptLevel::kLayout, 25,
           tessera::passes::cancel_token_transposes});
}
