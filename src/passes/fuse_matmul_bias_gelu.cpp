// fuse_matmul_bias_gelu (layout, CUDA): a com.tessera MatMulBias whose output is read only by the tanh
// approximation of GELU, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), becomes com.tessera
// MatMulBiasGelu, which the GPU runs as one cuBLASLt product with the GELU_BIAS epilogue (GPT-2's MLP:
// 12 x 16 us of a separate elementwise pass at batch 32). The GELU is recognised by what it computes, not
// by its node order (exporters write the same formula in several orders): the elementwise nodes fed by
// the product alone and by scalar constants (Mul, Add, Sub, Div, Pow, Tanh, Sqrt, Neg, and Gelu with
// approximate = "tanh") up to the single value read outside them are evaluated in double at sample points
// and must match the tanh GELU within 1e-5 relative. The erf GELU (Gelu, BiasGelu, or its decomposition)
// never matches: it differs by 4.7e-4 at x = -2.7, 5% of the value there, and must stay exact.
//
// Layout level at order 12: after fuse_matmul_bias (10) made the MatMulBias, before merge_sibling_matmuls
// (15) and before fuse_elementwise (30) takes the GELU's nodes into a generated kernel.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "ops/layout/blocked.h"
#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

constexpr const char* kRuleName = "fuse_matmul_bias_gelu";
constexpr size_t kMaxChain = 16;

double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

bool elementwise(const ir::Node& n) {
  static const std::set<std::string> ops = {"Mul", "Add", "Sub", "Div", "Pow", "Tanh", "Sqrt", "Neg"};
  if (n.outputs.size() != 1) return false;
  if (n.domain.empty() && ops.count(n.op_type)) return true;
  return is_op(n, "Gelu") && n.attr("approximate") && n.attr("approximate")->s == "tanh";
}

// The value of node n's op on its operands (double), or nullopt for an op not handled.
std::optional<double> eval(const ir::Node& n, const std::vector<double>& in) {
  const std::string& op = n.op_type;
  if (op == "Mul") return in[0] * in[1];
  if (op == "Add") return in[0] + in[1];
  if (op == "Sub") return in[0] - in[1];
  if (op == "Div") return in[0] / in[1];
  if (op == "Pow") return std::pow(in[0], in[1]);
  if (op == "Tanh") return std::tanh(in[0]);
  if (op == "Sqrt") return std::sqrt(in[0]);
  if (op == "Neg") return -in[0];
  if (op == "Gelu") return gelu_tanh(in[0]);
  return std::nullopt;
}

// The chain of elementwise nodes computing from `x` alone (and scalar constants), in graph order, and
// the one value of it read outside (the activation's output); nullopt when there is not exactly one.
struct Chain {
  std::vector<size_t> nodes;
  std::string out;
};

std::optional<Chain> gelu_chain(const RuleContext& ctx, const std::string& x) {
  const ir::Graph& g = ctx.graph;
  std::set<std::string> inside{x};
  Chain c;
  // Grow the set from the readers of what is inside: a node joins when every input is inside or a
  // scalar constant.
  std::vector<std::string> frontier{x};
  while (!frontier.empty() && c.nodes.size() <= kMaxChain) {
    const std::string v = frontier.back();
    frontier.pop_back();
    for (const Use& u : uses(g, v)) {
      if (u.input == Use::kInSubgraph) continue;
      const ir::Node& n = g.nodes[u.node];
      if (std::find(c.nodes.begin(), c.nodes.end(), u.node) != c.nodes.end() || !elementwise(n)) continue;
      const bool ok = std::all_of(n.inputs.begin(), n.inputs.end(), [&](const std::string& in) {
        return inside.count(in) || constant_scalar(g, in).has_value();
      });
      if (!ok) continue;  // another input may join later: it is tried again from that input's readers
      c.nodes.push_back(u.node);
      inside.insert(n.outputs[0]);
      frontier.push_back(n.outputs[0]);
    }
  }
  if (c.nodes.empty() || c.nodes.size() > kMaxChain) return std::nullopt;
  std::sort(c.nodes.begin(), c.nodes.end());
  // Exactly one value (a node's output) is read outside the chain or is a graph output; x itself only
  // inside it.
  std::set<size_t> mine(c.nodes.begin(), c.nodes.end());
  auto read_outside = [&](const std::string& v) {
    if (is_graph_output(g, v)) return true;
    for (const Use& u : uses(g, v))
      if (u.input == Use::kInSubgraph || !mine.count(u.node)) return true;
    return false;
  };
  if (read_outside(x)) return std::nullopt;
  for (size_t i : c.nodes) {
    const std::string& v = g.nodes[i].outputs[0];
    if (!read_outside(v)) continue;
    if (!c.out.empty()) return std::nullopt;
    c.out = v;
  }
  if (c.out.empty()) return std::nullopt;
  return c;
}

// Whether the chain computes the tanh GELU of x: evaluated at points over [-8, 8].
bool computes_gelu_tanh(const ir::Graph& g, const Chain& c, const std::string& x) {
  for (double p = -8.0; p <= 8.0; p += 0.37) {
    std::map<std::string, double> val{{x, p}};
    for (size_t i : c.nodes) {
      const ir::Node& n = g.nodes[i];
      std::vector<double> in;
      for (const auto& v : n.inputs) {
        auto it = val.find(v);
        in.push_back(it != val.end() ? it->second : *constant_scalar(g, v));
      }
      auto r = eval(n, in);
      if (!r) return false;
      val[n.outputs[0]] = *r;
    }
    const double want = gelu_tanh(p), got = val[c.out];
    if (!(std::fabs(got - want) <= 1e-5 * std::fabs(want) + 1e-9)) return false;
  }
  return true;
}

bool fuse_matmul_bias_gelu(RuleContext& ctx, size_t i) {
  const ir::Node& mm = ctx.graph.nodes[i];
  if (mm.op_type != "MatMulBias" || mm.domain != ops::layout::kDomain || mm.outputs.size() != 1) return false;
  const std::string& x = mm.outputs[0];
  if (is_graph_output(ctx.graph, x)) return false;
  auto chain = gelu_chain(ctx, x);
  if (!chain || !computes_gelu_tanh(ctx.graph, *chain, x)) return false;

  ir::Node fused;
  fused.op_type = "MatMulBiasGelu";
  fused.domain = ops::layout::kDomain;
  fused.name = mm.name;
  fused.inputs = mm.inputs;
  fused.outputs = {chain->out};
  if (!kernel_available(ctx, fused)) return false;
  std::vector<ir::NodeId> gone{mm.id};
  for (size_t k : chain->nodes) gone.push_back(ctx.graph.nodes[k].id);
  // In the place of the chain's last node: every reader of the output comes after it.
  replace_with(ctx.graph, chain->nodes.back(), std::move(fused), gone);
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(fuse_matmul_bias_gelu) {
  reg.add({tessera::passes::kRuleName,
           tessera::passes::OptLevel::kLayout,
           12,
           tessera::passes::fuse_matmul_bias_gelu,
           {"cuda"}});
}
