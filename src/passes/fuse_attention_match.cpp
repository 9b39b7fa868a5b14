#include "passes/fuse_attention_match.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <span>

#include "passes/fuse_attention_split.h"
#include "passes/fuse_attention_view.h"

namespace tessera::passes::attn {
namespace {

constexpr int kGuard = 16;  // nodes followed along one path at most

bool is_float_cast(const RuleContext& ctx, const ir::Node& n) {
  return is_op(n, "Cast") && n.inputs.size() == 1 && n.outputs.size() == 1 &&
         is_compute_float(elem_type(ctx, n.inputs[0])) && is_compute_float(elem_type(ctx, n.outputs[0]));
}

// The node producing `value` when node `reader` is the value's only reader (and no graph output reads it).
std::optional<size_t> exclusive_producer(const ir::Graph& g, const std::string& value, size_t reader) {
  if (sole_consumer(g, value) != reader) return std::nullopt;
  auto p = producer(g, value);
  if (!p || g.nodes[*p].outputs.size() != 1) return std::nullopt;
  return p;
}

// A Transpose's permutation of a tensor of rank `rank`.
std::optional<std::vector<int64_t>> perm_of(const ir::Node& t, size_t rank) {
  if (!is_op(t, "Transpose") || t.inputs.size() != 1 || t.outputs.size() != 1) return std::nullopt;
  auto perm = attr_ints(t, "perm");
  if (!perm) {  // the default reverses the axes
    std::vector<int64_t> rev(rank);
    for (size_t k = 0; k < rank; ++k) rev[k] = static_cast<int64_t>(rank - 1 - k);
    return rev;
  }
  if (perm->size() != rank) return std::nullopt;
  return perm;
}

// What the chain from the Softmax back to the Q K product holds.
struct Scores {
  std::string a, b;  // the product's operands
  bool trans_b = false;
  double scale = 1;
  std::string bias, keep;
  double fill = 0;
  size_t product = 0;
  std::vector<ir::NodeId> gone;
};

// A scalar constant operand of a two-input node: its value and the index of the other input.
std::optional<std::pair<double, size_t>> scalar_side(const ir::Graph& g, const ir::Node& n, bool either) {
  if (n.inputs.size() != 2) return std::nullopt;
  if (auto c = constant_scalar(g, n.inputs[1])) return std::pair{*c, size_t{0}};
  if (!either) return std::nullopt;
  if (auto c = constant_scalar(g, n.inputs[0])) return std::pair{*c, size_t{1}};
  return std::nullopt;
}

// The product's scores through Casts, scalar scales, an optional Where(keep, s, fill) and an optional
// bias Add, walking back from `value` read by node `reader`. `stage` orders what may still come: 0 the
// bias Add, 1 the Where, 2 only scales and the product (the bias is added after the keep mask, both
// after the scale).
bool match_scores(const RuleContext& ctx, std::string value, size_t reader, int stage, Scores& s) {
  const ir::Graph& g = ctx.graph;
  for (int guard = 0; guard < kGuard; ++guard) {
    auto p = exclusive_producer(g, value, reader);
    if (!p) return false;
    const ir::Node& n = g.nodes[*p];
    if (is_float_cast(ctx, n)) {
      s.gone.push_back(n.id);
    } else if (is_op(n, "Add") && stage == 0 && n.inputs.size() == 2) {
      for (size_t side = 0; side < 2; ++side) {
        Scores t = s;
        t.bias = n.inputs[1 - side];
        t.gone.push_back(n.id);
        if (n.inputs[side] != n.inputs[1 - side] && match_scores(ctx, n.inputs[side], *p, 1, t)) {
          s = std::move(t);
          return true;
        }
      }
      return false;
    } else if (is_op(n, "Where") && stage <= 1 && n.inputs.size() == 3) {
      auto fill = constant_scalar(g, n.inputs[2]);
      if (!fill || elem_type(ctx, n.inputs[0]) != ir::DataType::kBool) return false;
      s.keep = n.inputs[0];
      s.fill = *fill;
      s.gone.push_back(n.id);
      stage = 2;
      value = n.inputs[1];
      reader = *p;
      continue;
    } else if (is_op(n, "Mul") || is_op(n, "Div")) {
      const bool mul = is_op(n, "Mul");
      auto c = scalar_side(g, n, mul);
      if (!c || c->first == 0 || !std::isfinite(c->first)) return false;
      s.scale = mul ? s.scale * c->first : s.scale / c->first;
      s.gone.push_back(n.id);
      stage = 2;
      value = n.inputs[c->second];
      reader = *p;
      continue;
    } else if (is_op(n, "MatMul") && n.inputs.size() == 2) {
      s.a = n.inputs[0], s.b = n.inputs[1], s.trans_b = false;
    } else if (n.op_type == "FusedMatMul" && n.domain == "com.microsoft" && n.inputs.size() == 2) {
      if (attr_int(n, "transA", 0) || attr_int(n, "transBatchA", 0) || attr_int(n, "transBatchB", 0))
        return false;
      s.a = n.inputs[0], s.b = n.inputs[1], s.trans_b = attr_int(n, "transB", 0) != 0;
      s.scale *= attr_float(n, "alpha", 1.0f);
    } else {
      return false;
    }
    if (!s.a.empty()) {
      s.gone.push_back(n.id);
      s.product = *p;
      return true;
    }
    value = n.inputs[0];
    reader = *p;
  }
  return false;
}

// Follows an operand back through Transposes (each permutation moves the axes); the Transposes that
// only the chain reads go with it. `reader` ends as the node reading the returned value, `exclusive`
// (true on entry when everything so far goes) says whether everything between it and the chain goes.
Operand trace_back(const RuleContext& ctx, std::string value, std::vector<int64_t> axes, size_t& reader,
                   bool& exclusive, std::vector<ir::NodeId>& gone) {
  const ir::Graph& g = ctx.graph;
  for (int guard = 0; guard < kGuard; ++guard) {
    auto p = producer(g, value);
    if (!p) break;
    auto perm = perm_of(g.nodes[*p], axes.size());
    if (!perm) break;
    exclusive = exclusive && sole_consumer(g, value) == reader;
    if (exclusive) gone.push_back(g.nodes[*p].id);
    for (auto& a : axes) a = (*perm)[static_cast<size_t>(a)];
    value = g.nodes[*p].inputs[0];
    reader = *p;
  }
  Operand out;
  out.value = value;
  out.axes = axes;
  return out;
}

// Follows the output forward through Transposes that only the chain reads, as long as the head size
// stays the innermost axis (the kernel writes rows of it).
void trace_out(const RuleContext& ctx, size_t pv, Match& m) {
  const ir::Graph& g = ctx.graph;
  std::string value = g.nodes[pv].outputs[0];
  std::vector<int64_t> axes = m.y_axes;
  const size_t rank = axes.size();
  for (int guard = 0; guard < kGuard; ++guard) {
    auto c = sole_consumer(g, value);
    if (!c) break;
    auto perm = perm_of(g.nodes[*c], rank);
    if (!perm) break;
    std::vector<int64_t> moved = axes;
    for (auto& a : moved) a = std::find(perm->begin(), perm->end(), a) - perm->begin();
    if (moved.back() != static_cast<int64_t>(rank) - 1) break;
    axes = moved;
    m.gone.push_back(g.nodes[*c].id);
    value = g.nodes[*c].outputs[0];
  }
  m.y = value;
  m.y_axes = axes;
}

bool same_dim(const ir::Dim& a, const ir::Dim& b) {
  return a == b && (a.is_static() || a.is_symbolic());
}

// The bias broadcasts to the scores without growing them: each of its axes is 1 or the scores' own.
bool bias_fits(const RuleContext& ctx, const std::string& bias, const ir::Shape& scores) {
  auto t = value_type(ctx, bias);
  if (!t || !t->shape || t->shape->size() > scores.size() || !is_compute_float(t->elem)) return false;
  const ir::Shape& b = *t->shape;
  for (size_t k = 0; k < b.size(); ++k) {
    const ir::Dim& d = b[k];
    const ir::Dim& s = scores[scores.size() - b.size() + k];
    if (!(d.is_static() && d.value == 1) && !same_dim(d, s)) return false;
  }
  return true;
}

// A constant [.., n, n] bias (leading axes 1) that is 0 on and below the diagonal and <= -1e4 above:
// a causal mask (the exporters' -10000 or the type's lowest value; either makes exp() exactly 0).
bool causal_bias(const RuleContext& ctx, const std::string& bias) {
  const ir::Tensor* t = constant_value(ctx.graph, bias);
  if (!t || t->dims.size() < 2) return false;
  const int64_t n = t->dims.back();
  if (t->dims[t->dims.size() - 2] != n) return false;
  for (size_t k = 0; k + 2 < t->dims.size(); ++k)
    if (t->dims[k] != 1) return false;
  auto v = constant_doubles(ctx.graph, bias);
  if (!v || static_cast<int64_t>(v->size()) != n * n) return false;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double x = (*v)[static_cast<size_t>(i * n + j)];
      if (j <= i ? x != 0 : !(x <= -1e4)) return false;
    }
  return true;
}

// A constant boolean [.., n, n] keep mask (leading axes 1), true exactly on and below the diagonal, whose
// fill is <= -1e4 (a masked_fill with the type's lowest value or -inf): the causal limit.
bool causal_keep(const RuleContext& ctx, const std::string& keep, double fill) {
  const ir::Tensor* t = constant_value(ctx.graph, keep);
  if (!t || t->dtype != ir::DataType::kBool || t->dims.size() < 2 || !(fill <= -1e4)) return false;
  const int64_t n = t->dims.back();
  if (t->dims[t->dims.size() - 2] != n) return false;
  for (size_t k = 0; k + 2 < t->dims.size(); ++k)
    if (t->dims[k] != 1) return false;
  std::span<const std::byte> v = t->bytes();  // one byte per bool
  if (static_cast<int64_t>(v.size()) != n * n) return false;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if ((v[static_cast<size_t>(i * n + j)] != std::byte{0}) != (j <= i)) return false;
  return true;
}

// The MatMul(P, V) the Softmax's output reaches through Casts.
std::optional<size_t> pv_product(const RuleContext& ctx, size_t softmax, std::vector<ir::NodeId>& gone) {
  const ir::Graph& g = ctx.graph;
  std::string p = g.nodes[softmax].outputs[0];
  for (int guard = 0; guard < kGuard; ++guard) {
    auto c = sole_consumer(g, p);
    if (!c) return std::nullopt;
    const ir::Node& n = g.nodes[*c];
    if (is_float_cast(ctx, n)) {
      gone.push_back(n.id);
      p = n.outputs[0];
      continue;
    }
    if (is_op(n, "MatMul") && n.inputs.size() == 2 && n.inputs[0] == p && n.inputs[1] != p &&
        n.outputs.size() == 1)
      return c;
    return std::nullopt;
  }
  return std::nullopt;
}

// Scalar Mul/Div nodes producing a product operand (torch.nn.MultiheadAttention scales Q before the
// product), read only by the chain: their factors join `scale`.
void absorb_scales(const RuleContext& ctx, std::string& value, size_t& reader, double& scale,
                   std::vector<ir::NodeId>& gone) {
  const ir::Graph& g = ctx.graph;
  for (int guard = 0; guard < kGuard; ++guard) {
    auto p = exclusive_producer(g, value, reader);
    if (!p) return;
    const ir::Node& n = g.nodes[*p];
    const bool mul = is_op(n, "Mul");
    if (!mul && !is_op(n, "Div")) return;
    auto c = scalar_side(g, n, mul);
    if (!c || c->first == 0 || !std::isfinite(c->first)) return;
    scale = mul ? scale * c->first : scale / c->first;
    gone.push_back(n.id);
    value = n.inputs[c->second];
    reader = *p;
  }
}

bool rank_of(const RuleContext& ctx, const std::string& v, ir::DataType t, size_t rank) {
  auto type = value_type(ctx, v);
  return type && type->shape && type->shape->size() == rank && type->elem == t;
}

// Traces one operand given in the product's layout (`axes` of its logical dimensions there) to where it
// can be read in place.
// Two dimensions known to be equal (the same static value or the same symbol).
bool equal_dims(const ir::Shape& a, size_t ia, const ir::Shape& b, size_t ib) {
  const ir::Dim &x = a[ia], &y = b[ib];
  return (x.is_static() && y.is_static() && x.value == y.value) || (x.is_symbolic() && x == y);
}

// Grouped KV heads repeated for the products (Llama's repeat_kv):
//   Reshape(Expand(Unsqueeze(x [B, Hkv, S, D], axis 2), [B, Hkv, n, S, D]), [B, Hkv * n, S, D])
// is read as x itself: the kernels map query head h to KV head h / n. Only when the types prove that
// the Expand repeats axis 2 alone and the Reshape merges axes 1 and 2.
void skip_repeat_kv(const RuleContext& ctx, Operand& op, size_t& reader, bool& exclusive,
                    std::vector<ir::NodeId>& gone) {
  const ir::Graph& g = ctx.graph;
  if (op.axes != std::vector<int64_t>{0, 1, 2, 3}) return;
  auto r = producer(g, op.value);
  if (!r || !is_op(g.nodes[*r], "Reshape")) return;
  auto e = producer(g, g.nodes[*r].inputs[0]);
  if (!e || !is_op(g.nodes[*e], "Expand")) return;
  auto u = producer(g, g.nodes[*e].inputs[0]);
  if (!u || !is_op(g.nodes[*u], "Unsqueeze")) return;
  const ir::Node& un = g.nodes[*u];
  auto axes = un.inputs.size() > 1 ? constant_ints(g, un.inputs[1]) : attr_ints(un, "axes");
  if (!axes || axes->size() != 1 || (*axes)[0] != 2) return;
  auto rt = value_type(ctx, op.value), et = value_type(ctx, g.nodes[*e].outputs[0]),
       xt = value_type(ctx, un.inputs[0]);
  if (!rt || !et || !xt || !rt->shape || !et->shape || !xt->shape) return;
  const ir::Shape &rs = *rt->shape, &es = *et->shape, &xs = *xt->shape;
  if (rs.size() != 4 || es.size() != 5 || xs.size() != 4) return;
  // Expand keeps x's axes (0, 1, 2, 3 -> 0, 1, 3, 4); the Reshape keeps batch, seq and size.
  if (!equal_dims(es, 0, xs, 0) || !equal_dims(es, 1, xs, 1) || !equal_dims(es, 3, xs, 2) ||
      !equal_dims(es, 4, xs, 3) || !equal_dims(rs, 0, es, 0) || !equal_dims(rs, 2, es, 3) ||
      !equal_dims(rs, 3, es, 4))
    return;
  for (size_t n : {*r, *e, *u}) {
    exclusive = exclusive && sole_consumer(g, g.nodes[n].outputs[0]) == reader;
    if (exclusive) gone.push_back(g.nodes[n].id);
    reader = n;
  }
  op.value = un.inputs[0];
}

// Where the kernel reads one operand: through the Transposes right above the product (their perms
// go into the axes), or, when view-like nodes above it (Reshape, Squeeze, Gather of one index...) keep
// Transposes or Gathers that copy data (ViT's dynamo export splitting the packed in-projection), from
// the tensor at the top of that chain, reshaped. `chain` collects that chain's nodes (they go when
// nothing else reads them).
std::optional<Operand> operand(const RuleContext& ctx, const std::string& value, std::vector<int64_t> axes,
                               size_t reader, std::vector<ir::NodeId>& gone, std::vector<size_t>& chain) {
  std::vector<ir::NodeId> plain_gone;
  bool exclusive = true;
  Operand op = trace_back(ctx, value, axes, reader, exclusive, plain_gone);
  const std::string repeated = op.value;
  skip_repeat_kv(ctx, op, reader, exclusive, plain_gone);
  if (op.value != repeated) op = trace_back(ctx, op.value, op.axes, reader, exclusive, plain_gone);
  // The kernels read rows of the head size: it must be the innermost axis.
  const bool plain_ok = op.axes.back() == static_cast<int64_t>(op.axes.size()) - 1;
  if (auto c = chain_operand(ctx, value, axes); c && (c->copies || !plain_ok)) {
    Operand out;
    out.value = c->base;
    out.axes = c->packed.axes;
    out.part = c->packed.part;
    if (static_shape(ctx, c->base) != c->packed.shape) out.shape = c->packed.shape;
    chain.insert(chain.end(), c->chain.begin(), c->chain.end());
    return out;
  }
  // A head split of one part of a packed projection of free leading sizes (fuse_attention_split.h): read
  // from the projection itself; the head split and the Split go when nothing else reads them.
  if (auto s = split_operand(ctx, op.value, op.axes)) {
    Operand out;
    out.value = s->base;
    out.axes = s->axes;
    out.part = s->part;
    out.shape = s->shape;
    chain.push_back(s->reshape);
    chain.insert(chain.end(), s->target_nodes.begin(), s->target_nodes.end());
    if (auto sp = producer(ctx.graph, ctx.graph.nodes[s->reshape].inputs[0])) chain.push_back(*sp);
    gone.insert(gone.end(), plain_gone.begin(), plain_gone.end());
    return out;
  }
  if (!plain_ok) return std::nullopt;
  gone.insert(gone.end(), plain_gone.begin(), plain_gone.end());
  return op;
}

// The chain nodes whose every output is read only by nodes that go (the match's or other such chain
// nodes), and no graph output: added to `gone`.
void drop_dead_chain(const ir::Graph& g, const std::vector<size_t>& chain, std::vector<ir::NodeId>& gone) {
  std::set<ir::NodeId> going(gone.begin(), gone.end());
  for (size_t i : chain) going.insert(g.nodes[i].id);
  std::set<ir::NodeId> mine;
  for (size_t i : chain) mine.insert(g.nodes[i].id);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i : chain) {
      const ir::Node& n = g.nodes[i];
      if (!mine.count(n.id)) continue;
      bool dead = true;
      for (const auto& out : n.outputs) {
        if (is_graph_output(g, out)) dead = false;
        for (const Use& u : uses(g, out))
          if (u.input == Use::kInSubgraph || !going.count(g.nodes[u.node].id)) dead = false;
      }
      if (dead) continue;
      mine.erase(n.id);
      going.erase(n.id);
      changed = true;
    }
  }
  for (ir::NodeId id : mine)
    if (std::find(gone.begin(), gone.end(), id) == gone.end()) gone.push_back(id);
}

}  // namespace

std::optional<Match> match_attention(const RuleContext& ctx, size_t i) {
  const ir::Graph& g = ctx.graph;
  const ir::Node& sm = g.nodes[i];
  if (!is_op(sm, "Softmax") || sm.inputs.size() != 1 || sm.outputs.size() != 1) return std::nullopt;
  auto st = value_type(ctx, sm.inputs[0]);
  if (!st || !st->shape || (st->shape->size() != 4 && st->shape->size() != 3)) return std::nullopt;
  const size_t rank = st->shape->size();
  const int64_t axis = attr_int(sm, "axis", onnx_opset(ctx.model) < 13 ? 1 : -1);
  if (axis != -1 && axis != static_cast<int64_t>(rank) - 1) return std::nullopt;

  Match m;
  m.name = sm.name;
  m.gone = {sm.id};
  auto pv = pv_product(ctx, i, m.gone);
  if (!pv) return std::nullopt;
  m.gone.push_back(g.nodes[*pv].id);
  Scores s;
  if (!match_scores(ctx, sm.inputs[0], i, 0, s)) return std::nullopt;
  const std::string& v = g.nodes[*pv].inputs[1];
  const ir::DataType t = elem_type(ctx, v);
  if (!is_compute_float(t) || !rank_of(ctx, s.a, t, rank) || !rank_of(ctx, s.b, t, rank) ||
      !rank_of(ctx, v, t, rank))
    return std::nullopt;
  if (!s.bias.empty() && !bias_fits(ctx, s.bias, *st->shape)) return std::nullopt;
  if (!s.keep.empty()) {
    auto kt = value_type(ctx, s.keep);
    if (!kt || !kt->shape || kt->shape->size() > rank) return std::nullopt;
  }
  m.gone.insert(m.gone.end(), s.gone.begin(), s.gone.end());
  // The logical axes of each operand in the products' layout: 4-D (b, h, s, d), 3-D (b * h, s, d).
  std::vector<int64_t> plain(rank), swapped(rank);
  for (size_t k = 0; k < rank; ++k) plain[k] = swapped[k] = static_cast<int64_t>(k);
  std::swap(swapped[rank - 1], swapped[rank - 2]);
  size_t q_reader = s.product, k_reader = s.product;
  absorb_scales(ctx, s.a, q_reader, s.scale, m.gone);
  absorb_scales(ctx, s.b, k_reader, s.scale, m.gone);
  std::vector<size_t> chain;
  auto q = operand(ctx, s.a, plain, q_reader, m.gone, chain);
  auto k = operand(ctx, s.b, s.trans_b ? plain : swapped, k_reader, m.gone, chain);
  auto vv = operand(ctx, v, plain, *pv, m.gone, chain);
  if (!q || !k || !vv) return std::nullopt;
  m.q = *q, m.k = *k, m.v = *vv;
  m.y_axes = plain;
  trace_out(ctx, *pv, m);
  m.bias = s.bias;
  m.keep = s.keep;
  m.fill = s.fill;
  m.scale = s.scale;
  // A causal constant alone (no second mask, so no row loses every key) becomes the causal limit.
  if (m.keep.empty() && !m.bias.empty() && causal_bias(ctx, m.bias)) {
    m.causal = true;
    m.bias.clear();
  } else if (m.bias.empty() && !m.keep.empty() && causal_keep(ctx, m.keep, m.fill)) {
    m.causal = true;
    m.keep.clear();
  }
  std::sort(chain.begin(), chain.end());
  chain.erase(std::unique(chain.begin(), chain.end()), chain.end());
  drop_dead_chain(g, chain, m.gone);
  m.last = 0;
  for (ir::NodeId id : m.gone) m.last = std::max(m.last, g.node_index(id));
  return m;
}

ir::Node fused_node(const Match& m, std::vector<std::string> inputs, std::string y) {
  ir::Node n;
  n.op_type = "FusedAttention";
  n.domain = "com.tessera";
  n.name = m.name;
  n.inputs = std::move(inputs);
  n.inputs.push_back(m.bias);
  n.inputs.push_back(m.keep);
  while (n.inputs.back().empty()) n.inputs.pop_back();
  n.outputs = {std::move(y)};
  n.attributes = {ir::Attribute::of_float("scale", static_cast<float>(m.scale)),
                  ir::Attribute::of_ints("q_axes", m.q.axes), ir::Attribute::of_ints("k_axes", m.k.axes),
                  ir::Attribute::of_ints("v_axes", m.v.axes), ir::Attribute::of_ints("y_axes", m.y_axes)};
  const std::pair<const char*, const Operand*> parts[] = {
      {"q_part", &m.q}, {"k_part", &m.k}, {"v_part", &m.v}};
  for (const auto& [name, op] : parts)
    if (op->part != 0) n.attributes.push_back(ir::Attribute::of_int(name, op->part));
  if (m.causal) n.attributes.push_back(ir::Attribute::of_int("causal", 1));
  if (!m.keep.empty())
    n.attributes.push_back(ir::Attribute::of_float("mask_fill", static_cast<float>(m.fill)));
  return n;
}

}  // namespace tessera::passes::attn
