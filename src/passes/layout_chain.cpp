// The chain-layout sweep shared by to_blocked_layout and to_nhwc_layout (layout_chain.h).
#include "passes/layout_chain.h"

#include <algorithm>
#include <utility>

namespace tessera::passes {

std::string attr_string(const ir::Node& n, std::string_view name) {
  const ir::Attribute* a = n.attr(name);
  return a ? a->s : std::string();
}

std::string fused_names(const ir::Node& n) {
  for (const auto& [k, v] : n.metadata_props)
    if (k == kFusedFromKey) return v;
  return n.name.empty() ? n.op_type : n.name;
}

void absorb_fused(ir::Node& into, const ir::Node& gone) {
  std::string from = fused_names(into) + "," + fused_names(gone);
  std::erase_if(into.metadata_props, [](const ir::StringPair& p) { return p.first == kFusedFromKey; });
  into.metadata_props.emplace_back(kFusedFromKey, from);
}

bool ChainLayout::run(std::vector<Rewrite>& log) {
  bool any = false;
  for (const ir::Node& n : g_.nodes) {
    if (rewrite(n)) {
      any = true;
      log.push_back({names_.pass, n.name.empty() ? n.op_type : n.name});
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
  for (auto& t : new_initializers_) g_.initializers.push_back(std::move(t));
  drop_unused_initializers(g_, old_weights_);
  return true;
}

bool ChainLayout::rewrite(const ir::Node& n) {
  if (n.outputs.size() != 1 || n.outputs[0].empty() || n.inputs.empty()) return false;
  if (is_op(n, "Conv") || (n.op_type == "FusedConv" && ir::canonical_domain(n.domain) == "com.microsoft"))
    return conv(n);
  if (is_op(n, "Add") && residual(n)) return true;
  if (ir::canonical_domain(n.domain).empty() && accepts_binary(n)) return binary(n);
  if (accepts_unary(n)) return unary(n);
  if (is_op(n, "MaxPool") || is_op(n, "AveragePool")) return pool(n);
  if (is_op(n, "GlobalMaxPool") || is_op(n, "GlobalAveragePool")) return global_pool(n);
  return rewrite_other(n);
}

bool ChainLayout::read_only_by(const std::string& value, const ir::Node& reader) const {
  auto c = sole_consumer(g_, value);
  return c && g_.nodes[*c].id == reader.id;
}

std::optional<ir::Shape> ChainLayout::shape4(const std::string& v) const {
  auto t = value_type(ctx_, v);
  if (!t || !t->is_tensor() || !t->shape || t->shape->size() != 4) return std::nullopt;
  for (const ir::Dim& d : *t->shape)
    if (d.is_unknown()) return std::nullopt;
  return *t->shape;
}

bool ChainLayout::same_twin_shapes(const ir::Node& n) const {
  if (n.inputs.size() != 2 || !twin_.count(n.inputs[0]) || !twin_.count(n.inputs[1])) return false;
  auto a = shape4(n.inputs[0]), b = shape4(n.inputs[1]);
  return a && b && *a == *b;
}

std::string ChainLayout::reorder_in(const std::string& x, int64_t channels) {
  if (auto it = twin_.find(x); it != twin_.end()) return it->second.name;
  ir::Node r = to_layout_node();
  r.name = x + "_to_" + names_.tag;
  r.inputs = {x};
  r.outputs = {fresh(x)};
  r.id = next_id_++;
  out_.push_back(std::move(r));
  twin_[x] = {out_.back()->outputs[0], channels, std::nullopt, true};
  return twin_[x].name;
}

// Add(conv, other) -> the layout's convolution with Z = other.
bool ChainLayout::residual(const ir::Node& n) {
  if (!same_twin_shapes(n)) return false;
  for (int k = 0; k < 2; ++k) {
    const std::string& mine = n.inputs[k];
    const std::string& other = n.inputs[1 - k];
    const LayoutTwin& v = twin_.at(mine);
    if (!v.conv || mine == other || !read_only_by(mine, n)) continue;
    ir::Node& conv = *out_[*v.conv];
    if ((conv.inputs.size() > 3 && !conv.inputs[3].empty()) || !attr_string(conv, "activation").empty())
      continue;
    // The convolution moves down to the Add, where Z exists for certain.
    ir::Node moved = std::move(conv);
    out_[*v.conv].reset();
    moved.inputs.resize(4);
    moved.inputs[3] = twin_.at(other).name;
    moved.outputs = {fresh(n.outputs[0])};
    absorb_fused(moved, n);
    out_.push_back(std::move(moved));
    twin_[n.outputs[0]] = {out_.back()->outputs[0], v.channels, out_.size() - 1};
    twin_.erase(mine);
    return true;
  }
  return false;
}

void ChainLayout::emit_elementwise(ir::Node e, const std::string& plain_out, int64_t channels) {
  e.outputs = {fresh(plain_out)};
  e.id = next_id_++;
  out_.push_back(std::move(e));
  twin_[plain_out] = {out_.back()->outputs[0], channels, std::nullopt};
}

// An activation of a convolution without one (read by nothing else) moves into it when the target can
// run the result; otherwise the op runs elementwise on the twin.
bool ChainLayout::unary(const ir::Node& n) {
  auto it = twin_.find(n.inputs[0]);
  if (it == twin_.end()) return false;
  LayoutTwin v = it->second;
  auto params = fusable_activation(ctx_, n);
  if (params && v.conv && read_only_by(n.inputs[0], n) && attr_string(*out_[*v.conv], "activation").empty()) {
    ir::Node& conv = *out_[*v.conv];
    conv.attributes.push_back(ir::Attribute::of_string("activation", n.op_type));
    if (!params->empty()) conv.attributes.push_back(ir::Attribute::of_floats("activation_params", *params));
    if (runnable(conv)) {
      conv.outputs = {fresh(n.outputs[0])};
      absorb_fused(conv, n);
      twin_[n.outputs[0]] = {conv.outputs[0], v.channels, v.conv};
      twin_.erase(n.inputs[0]);
      return true;
    }
    std::erase_if(conv.attributes, [](const ir::Attribute& a) {
      return a.name == "activation" || a.name == "activation_params";
    });
  }
  ir::Node e = n;
  e.inputs[0] = v.name;  // Clip's bounds, if inputs, stay as they are
  emit_elementwise(std::move(e), n.outputs[0], v.channels);
  return true;
}

bool ChainLayout::emit_pool(const ir::Node& n, ir::Node p, const LayoutTwin& v) {
  p.domain = names_.domain;
  p.inputs = {v.name};
  p.outputs = {fresh(n.outputs[0])};
  p.id = next_id_++;
  if (!runnable(p)) return false;
  out_.push_back(std::move(p));
  twin_[n.outputs[0]] = {out_.back()->outputs[0], v.channels, std::nullopt};
  return true;
}

// MaxPool (no Indices, storage_order 0) / AveragePool, 2-D.
bool ChainLayout::pool(const ir::Node& n) {
  auto it = twin_.find(n.inputs[0]);
  if (it == twin_.end() || attr_int(n, "storage_order", 0) != 0) return false;
  auto ks = attr_ints(n, "kernel_shape");
  if (!ks || ks->size() != 2) return false;
  ir::Node p = n;
  p.op_type = names_.op_prefix + (is_op(n, "MaxPool") ? "MaxPool" : "AveragePool");
  std::erase_if(p.attributes, [](const ir::Attribute& a) { return a.name == "storage_order"; });
  return emit_pool(n, std::move(p), it->second);
}

// GlobalMaxPool / GlobalAveragePool over a static H x W: the pool with an H x W window, so that a
// classifier head reorders C values back to NCHW, not C x H x W.
bool ChainLayout::global_pool(const ir::Node& n) {
  auto it = twin_.find(n.inputs[0]);
  auto shape = shape4(n.inputs[0]);
  if (it == twin_.end() || !shape || !(*shape)[2].is_static() || !(*shape)[3].is_static()) return false;
  ir::Node p = n;
  p.op_type = names_.op_prefix + (is_op(n, "GlobalMaxPool") ? "MaxPool" : "AveragePool");
  p.attributes = {ir::Attribute::of_ints("kernel_shape", {(*shape)[2].value, (*shape)[3].value})};
  return emit_pool(n, std::move(p), it->second);
}

// NCHW values still read after the rewrite come back from their twins, right after the twin's producer
// and under their own names.
void ChainLayout::add_reorders_back() {
  std::map<std::string, std::vector<ir::Node>> after;  // twin name -> reorders to add after it
  ir::Graph probe;
  probe.inputs = g_.inputs;
  probe.outputs = g_.outputs;
  for (auto& n : out_)
    if (n) probe.nodes.push_back(*n);
  for (const auto& [plain, v] : twin_) {
    if (v.plain_exists || !is_used(probe, plain)) continue;
    ir::Node r = from_layout_node(v);
    r.name = plain + "_from_" + names_.tag;
    r.inputs = {v.name};
    r.outputs = {plain};
    r.id = next_id_++;
    after[v.name].push_back(std::move(r));
  }
  std::vector<std::optional<ir::Node>> with;
  for (auto& n : out_) {
    if (!n) continue;
    // A reorder out of the layout whose readers all read its input (the twin) now.
    if (n->outputs.size() == 1 && cancelled_.count(n->outputs[0]) && !is_used(probe, n->outputs[0])) continue;
    std::string produced = n->outputs.empty() ? std::string() : n->outputs[0];
    with.push_back(std::move(n));
    if (auto it = after.find(produced); it != after.end())
      for (auto& r : it->second) with.push_back(std::move(r));
  }
  out_ = std::move(with);
}

std::string ChainLayout::initializer(ir::Tensor t, const std::string& base) {
  t.name = fresh(base);
  new_initializers_.push_back(std::move(t));
  return new_initializers_.back().name;
}

std::string ChainLayout::fresh(const std::string& plain) {
  std::string base = plain + "_" + names_.tag;
  std::string name = fresh_name(g_, base);
  while (taken_.count(name)) name = fresh_name(g_, base + std::to_string(taken_.size()));
  taken_.insert(name);
  return name;
}

}  // namespace tessera::passes
