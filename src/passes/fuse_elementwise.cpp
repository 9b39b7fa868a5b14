// fuse_elementwise (layout, CUDA): a maximal tree of elementwise nodes (unary math and activations,
// broadcasting binary arithmetic, Where, Clip, LeakyRelu, Cast between float types) whose values all
// have the shape of the tree's last node becomes one com.tessera FusedElementwise node, whose program
// (ops/fused/elementwise_program.h) the CUDA backend compiles into one kernel: one pass over memory
// instead of one per node (GPT-2's tanh GELU is 8 nodes). Single-element constants become literals of
// the program; the tree's other inputs become the node's inputs; a value of the tree that something
// outside it also reads stays an output of the fused node. Earlier FusedElementwise nodes are inlined,
// so chains that meet merge. The tree grows from its last node (the root) upward; a node whose only
// reader is a node the rule could fuse with it is left for that reader.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "ops/fused/elementwise_program.h"
#include "ops/layout/blocked.h"
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

namespace fused = ops::fused;
using fused::EwOp;

constexpr size_t kMaxStatements = 64;  // the kernel keeps every temporary in registers
constexpr size_t kMaxInputs = 16;

bool is_fused(const ir::Node& n) {
  return n.domain == ops::layout::kDomain && n.op_type == fused::kFusedElementwiseOp;
}

// The program op of an ai.onnx node the rule can take, by its form; nullopt otherwise.
std::optional<EwOp> onnx_op(const RuleContext& ctx, const ir::Node& n) {
  if (!ir::canonical_domain(n.domain).empty() || n.outputs.size() != 1 || has_subgraph(n))
    return std::nullopt;
  static const std::map<std::string, EwOp, std::less<>> kOps = {
      {"Add", EwOp::kAdd},   {"Sub", EwOp::kSub},
      {"Mul", EwOp::kMul},   {"Div", EwOp::kDiv},
      {"Pow", EwOp::kPow},   {"Max", EwOp::kMax},
      {"Min", EwOp::kMin},   {"Where", EwOp::kWhere},
      {"Clip", EwOp::kClip}, {"LeakyRelu", EwOp::kLeakyRelu},
      {"Relu", EwOp::kRelu}, {"Sigmoid", EwOp::kSigmoid},
      {"Tanh", EwOp::kTanh}, {"Exp", EwOp::kExp},
      {"Log", EwOp::kLog},   {"Neg", EwOp::kNeg},
      {"Abs", EwOp::kAbs},   {"Sqrt", EwOp::kSqrt},
      {"Erf", EwOp::kErf},   {"Reciprocal", EwOp::kReciprocal},
      {"Cast", EwOp::kCast}};
  auto it = kOps.find(n.op_type);
  if (it == kOps.end()) return std::nullopt;
  const int64_t opset = onnx_opset(ctx.model);
  EwOp op = it->second;
  switch (op) {
    case EwOp::kAdd:
    case EwOp::kSub:
    case EwOp::kMul:
    case EwOp::kDiv:
    case EwOp::kPow:
      if (opset < 7 || n.inputs.size() != 2) return std::nullopt;  // before 7: broadcast attributes
      break;
    case EwOp::kMax:
    case EwOp::kMin:
      if (opset < 8 || n.inputs.size() != 2) return std::nullopt;
      break;
    case EwOp::kWhere:
      if (n.inputs.size() != 3) return std::nullopt;
      break;
    case EwOp::kClip:
      if (opset < 11 && n.inputs.size() != 1) return std::nullopt;
      break;
    case EwOp::kCast: {
      // Float to float only, and not where the session lowers float32 afterwards (the lowering
      // retargets the graph's Casts, not the program's).
      if (ctx.target.precision == Precision::kFp16 || ctx.target.precision == Precision::kBf16)
        return std::nullopt;
      auto to = static_cast<ir::DataType>(attr_int(n, "to", 0));
      if (to != ir::DataType::kFloat && to != ir::DataType::kFloat16 && to != ir::DataType::kBFloat16)
        return std::nullopt;
      break;
    }
    default:
      if (n.inputs.size() != 1) return std::nullopt;
  }
  for (const auto& in : n.inputs)
    if (in.empty() && op != EwOp::kClip) return std::nullopt;
  return op;
}

// The element types the GPU kernel computes on: the program's floats but double.
bool kernel_float(ir::DataType t) {
  return t == ir::DataType::kFloat || t == ir::DataType::kFloat16 || t == ir::DataType::kBFloat16;
}

class TreeBuilder {
 public:
  TreeBuilder(RuleContext& ctx, size_t root) : ctx_(ctx), g_(ctx.graph), root_(root) {}

  // Whether node `k` can join the tree: an elementwise node (or an earlier fused one) whose outputs
  // have the root's shape and float types, and whose readers are in the tree or come after the root.
  bool fusable(size_t k) const {
    const ir::Node& n = g_.nodes[k];
    auto op = onnx_op(ctx_, n);
    if (!is_fused(n) && !op) return false;
    // Every value the kernel reads is a float (bool for Where's condition) or a literal.
    auto kept = op ? kept_constant(n, *op) : std::nullopt;
    for (size_t i = 0; op && i < n.inputs.size(); ++i) {
      if (n.inputs[i].empty() || (is_literal(n.inputs[i]) && kept != i)) continue;
      ir::DataType t = elem_type(ctx_, n.inputs[i]);
      if (*op == EwOp::kWhere && i == 0 ? t != ir::DataType::kBool : !kernel_float(t)) return false;
    }
    for (const auto& out : n.outputs) {
      auto t = value_type(ctx_, out);
      if (out.empty() || !t || !t->is_tensor() || !kernel_float(t->elem) || !t->shape || *t->shape != shape_)
        return false;
    }
    return true;
  }

  // A node whose value operands are all single-element constants (Where(mask, 0, -inf)) keeps the first
  // as an input: a statement takes its element type from a non-literal operand.
  std::optional<size_t> kept_constant(const ir::Node& n, EwOp op) const {
    std::optional<size_t> first;
    for (size_t i = op == EwOp::kWhere ? 1 : 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i].empty()) continue;
      if (!is_literal(n.inputs[i])) return std::nullopt;
      if (!first) first = i;
    }
    return first;
  }

  bool readers_ok(size_t k) const {
    for (const auto& out : g_.nodes[k].outputs)
      for (const Use& u : uses(g_, out))
        if (!members_.count(u.node) && u.node <= root_) return false;
    return true;
  }

  bool start() {
    auto t = value_type(ctx_, g_.nodes[root_].outputs.empty() ? "" : g_.nodes[root_].outputs[0]);
    if (!t || !t->shape) return false;
    shape_ = *t->shape;
    if (!fusable(root_)) return false;
    members_.insert(root_);
    return true;
  }

  // Adds producers of the tree's inputs until none more can join.
  void grow() {
    for (bool added = true; added;) {
      added = false;
      for (size_t k : std::vector<size_t>(members_.begin(), members_.end()))
        for (const auto& in : g_.nodes[k].inputs) {
          if (in.empty() || is_literal(in)) continue;
          auto p = producer(g_, in);
          if (!p || members_.count(*p) || *p > root_ || !fusable(*p) || !readers_ok(*p)) continue;
          members_.insert(*p);
          added = true;
        }
    }
  }

  size_t size() const { return members_.size(); }

  // The program of the tree and the node computing it; nullopt when it does not fit the kernel.
  std::optional<ir::Node> build() {
    for (size_t k : members_)  // std::set: graph order, producers first
      if (!emit(g_.nodes[k])) return std::nullopt;
    if (prog_.code.size() > kMaxStatements || inputs_.size() > kMaxInputs) return std::nullopt;
    ir::Node n;
    n.op_type = fused::kFusedElementwiseOp;
    n.domain = ops::layout::kDomain;
    n.name = g_.nodes[root_].name;
    n.inputs = inputs_;
    // Outputs: the root's first, then every other value of the tree read outside it.
    std::vector<std::pair<std::string, int64_t>> outs;
    for (size_t k : members_)
      for (const auto& v : g_.nodes[k].outputs) {
        bool outside = is_graph_output(g_, v);
        for (const Use& u : uses(g_, v)) outside |= !members_.count(u.node);
        if (k == root_ || outside) outs.emplace_back(v, values_.at(v).index);
      }
    std::stable_partition(outs.begin(), outs.end(),
                          [&](const auto& o) { return producer(g_, o.first) == root_; });
    for (const auto& [v, t] : outs) {
      n.outputs.push_back(v);
      prog_.results.push_back(t);
    }
    n.attributes.push_back(ir::Attribute::of_string("program", fused::format_program(prog_)));
    n.attributes.push_back(ir::Attribute::of_ints("results", prog_.results));
    return n;
  }

  std::vector<ir::NodeId> ids() const {
    std::vector<ir::NodeId> out;
    for (size_t k : members_) out.push_back(g_.nodes[k].id);
    return out;
  }

 private:
  // A constant of one element that broadcasting cannot grow the tree's shape with.
  bool is_literal(const std::string& v) const {
    const ir::Tensor* c = constant_value(g_, v);
    if (!c || c->dims.size() > shape_.size()) return false;
    int64_t n = 1;
    for (int64_t d : c->dims) n *= d;
    return n == 1 && constant_doubles(g_, v).has_value();
  }

  // `as_input`: a constant that stays an input of the node rather than becoming a literal.
  fused::Operand operand(const std::string& v, bool as_input = false) {
    if (auto it = values_.find(v); it != values_.end()) return it->second;
    if (!as_input && is_literal(v)) return {fused::Operand::Kind::kLiteral, 0, (*constant_doubles(g_, v))[0]};
    auto index = static_cast<int>(std::find(inputs_.begin(), inputs_.end(), v) - inputs_.begin());
    if (index == static_cast<int>(inputs_.size())) inputs_.push_back(v);
    return {fused::Operand::Kind::kInput, index, 0};
  }

  int push(fused::Instr in) {
    prog_.code.push_back(std::move(in));
    return static_cast<int>(prog_.code.size() - 1);
  }

  bool emit(const ir::Node& n) {
    if (is_fused(n)) return inline_fused(n);
    EwOp op = *onnx_op(ctx_, n);
    fused::Instr in;
    in.op = op;
    auto kept = kept_constant(n, op);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (!n.inputs[i].empty()) in.args.push_back(operand(n.inputs[i], kept == i));
    if (op == EwOp::kClip) clip_bounds(n, in, kept == 0);
    if (op == EwOp::kLeakyRelu)
      in.args.push_back({fused::Operand::Kind::kLiteral, 0, attr_float(n, "alpha", 0.01f)});
    if (op == EwOp::kCast) in.to = static_cast<ir::DataType>(attr_int(n, "to", 0));
    values_[n.outputs[0]] = {fused::Operand::Kind::kTemp, push(std::move(in)), 0};
    return true;
  }

  // Clip's bounds: inputs 1 and 2 from opset 11 (absent: unbounded), attributes before.
  void clip_bounds(const ir::Node& n, fused::Instr& in, bool keep_x) {
    const double inf = std::numeric_limits<double>::infinity();
    if (onnx_opset(ctx_.model) < 11) {
      in.args.push_back({fused::Operand::Kind::kLiteral, 0, attr_float(n, "min", -3.4028234663852886e38f)});
      in.args.push_back({fused::Operand::Kind::kLiteral, 0, attr_float(n, "max", 3.4028234663852886e38f)});
      return;
    }
    in.args.clear();
    in.args.push_back(operand(n.inputs[0], keep_x));
    for (size_t b = 1; b < 3; ++b) {
      if (b < n.inputs.size() && !n.inputs[b].empty()) {
        in.args.push_back(operand(n.inputs[b]));
      } else {
        in.args.push_back({fused::Operand::Kind::kLiteral, 0, b == 1 ? -inf : inf});
      }
    }
  }

  // An earlier FusedElementwise: its statements, with its inputs mapped to this tree's operands.
  bool inline_fused(const ir::Node& n) {
    const ir::Attribute* text = n.attr("program");
    const ir::Attribute* res = n.attr("results");
    if (!text || !res) return false;
    fused::Program p;
    try {
      p = fused::parse_program(text->s, res->ints, n.inputs.size());
    } catch (const fused::ProgramError&) {
      return false;
    }
    std::vector<fused::Operand> xs;
    for (const auto& v : n.inputs) xs.push_back(operand(v));
    std::vector<int> temps;
    for (fused::Instr in : p.code) {
      for (auto& a : in.args) {
        if (a.kind == fused::Operand::Kind::kInput)
          a = xs[static_cast<size_t>(a.index)];
        else if (a.kind == fused::Operand::Kind::kTemp)
          a.index = temps[static_cast<size_t>(a.index)];
      }
      temps.push_back(push(std::move(in)));
    }
    for (size_t o = 0; o < n.outputs.size(); ++o)
      values_[n.outputs[o]] = {fused::Operand::Kind::kTemp, temps[static_cast<size_t>(p.results[o])], 0};
    return true;
  }

  RuleContext& ctx_;
  const ir::Graph& g_;
  size_t root_;
  ir::Shape shape_;
  std::set<size_t> members_;
  std::map<std::string, fused::Operand> values_;  // tree values -> their statement
  std::vector<std::string> inputs_;
  fused::Program prog_;
};

// Whether node `k` is better left to its only reader, which would take it into its own tree.
bool left_to_reader(RuleContext& ctx, size_t k) {
  const ir::Node& n = ctx.graph.nodes[k];
  if (n.outputs.size() != 1) return false;
  auto r = sole_consumer(ctx.graph, n.outputs[0]);
  if (!r || *r <= k) return false;
  TreeBuilder reader(ctx, *r);
  return reader.start() && reader.fusable(k);
}

bool fuse_elementwise(RuleContext& ctx, size_t i) {
  const ir::Node& root = ctx.graph.nodes[i];
  if (!is_fused(root) && !onnx_op(ctx, root)) return false;  // cheap exit for every other node
  if (left_to_reader(ctx, i)) return false;
  TreeBuilder tree(ctx, i);
  if (!tree.start()) return false;
  tree.grow();
  if (tree.size() < 2) return false;
  auto fused = tree.build();
  if (!fused || !kernel_available(ctx, *fused)) return false;
  ensure_opset_import(ctx.model, ops::layout::kDomain, 1);
  replace_with(ctx.graph, i, std::move(*fused), tree.ids());
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_elementwise) {
  reg.add({"fuse_elementwise",
           tessera::passes::OptLevel::kLayout,
           30,
           tessera::passes::fuse_elementwise,
           {"cuda"}});
}
