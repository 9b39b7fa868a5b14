#include "cli/run_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include "check/checker.h"
#include "cli/run_inputs.h"
#include "cli/run_shape_values.h"

namespace tessera::cli {

namespace {

// Bytes of a tensor type whose every dimension is known; nullopt otherwise (and for strings, whose size
// is their contents').
std::optional<size_t> tensor_bytes(const ir::Type& t) {
  if (!t.is_tensor() || !t.shape) return std::nullopt;
  const int bits = ir::dtype_bits(t.elem);
  if (bits <= 0) return std::nullopt;
  double n = 1;
  for (const ir::Dim& d : *t.shape) {
    if (!d.is_static()) return std::nullopt;
    n *= static_cast<double>(d.value);
  }
  const double bytes = std::ceil(n * bits / 8);
  if (bytes > 1e18) return static_cast<size_t>(1e18);  // beyond any machine: the comparison still holds
  return static_cast<size_t>(bytes);
}

// A small int64/int32 feed as an initializer: shapes, repeats, axes and sizes, whose values decide the
// sizes of what the nodes make (Tile, Reshape, Expand, ConstantOfShape...); nullopt for other feeds.
std::optional<ir::Tensor> small_int_constant(const std::string& name, const rt::Tensor& t) {
  if (t.numel() > 1024) return std::nullopt;
  std::vector<int64_t> dims(t.shape().begin(), t.shape().end());
  if (t.dtype() == ir::DataType::kInt64) {
    const int64_t* p = t.data<int64_t>();
    return ir::make_tensor<int64_t>(name, t.dtype(), dims, std::vector<int64_t>(p, p + t.numel()));
  }
  if (t.dtype() == ir::DataType::kInt32) {
    const int32_t* p = t.data<int32_t>();
    return ir::make_tensor<int32_t>(name, t.dtype(), dims, std::vector<int32_t>(p, p + t.numel()));
  }
  return std::nullopt;
}

// The session's optimised model with its graph inputs typed as the feeds are (small integer ones as
// constants), and no other declared
// shape: a file's value_info and output shapes may hold for other inputs (the conformance suite's
// test_tile declares the output of its own repeats), and only inference from these inputs says what this
// run makes.
ir::Model with_feed_shapes(const rt::Session& session,
                           const std::vector<std::pair<std::string, rt::Value>>& feeds) {
  ir::Model m = session.model();
  m.graph.value_info.clear();
  for (ir::ValueInfo& out : m.graph.outputs)
    if (out.type.is_tensor()) out.type.shape.reset();
  std::vector<ir::ValueInfo> inputs;
  for (ir::ValueInfo& in : m.graph.inputs) {
    auto it = std::find_if(feeds.begin(), feeds.end(), [&](const auto& f) { return f.first == in.name; });
    if (it != feeds.end() && it->second.is_tensor()) {
      const rt::Tensor& t = it->second.tensor();
      if (auto value = small_int_constant(in.name, t)) {  // its values size what follows: a constant
        m.graph.initializers.push_back(std::move(*value));
        continue;
      }
      ir::Shape shape;
      for (int64_t d : t.shape()) shape.push_back(ir::Dim::of(d));
      in.type = ir::Type::tensor(t.dtype(), std::move(shape));
    }
    inputs.push_back(std::move(in));
  }
  m.graph.inputs = std::move(inputs);
  return m;
}

}  // namespace

namespace {

struct Life {
  size_t born = 0, dies = 0;  // the node making the value, the last node reading it
  std::optional<size_t> bytes;
  std::string storage;  // the value whose allocation it took over (empty: its own)
};

// Each node output's lifetime over the graph's node order (the graph's outputs live to the end) and its
// size as inferred (`checked` may come from a copy of the graph whose shape chains were folded: a folded
// value is an initializer there, typed all the same).
std::map<std::string, Life> lifetimes(const ir::Graph& g, const check::CheckResult& checked) {
  std::map<std::string, Life> life;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& in : g.nodes[i].inputs)
      if (auto it = life.find(in); it != life.end()) it->second.dies = i;
    for (const std::string& out : g.nodes[i].outputs) {
      if (out.empty()) continue;
      auto type = checked.value_types.find(out);
      life[out] = {i, i, type == checked.value_types.end() ? std::nullopt : tensor_bytes(type->second), {}};
    }
  }
  for (const ir::ValueInfo& out : g.outputs)
    if (auto it = life.find(out.name); it != life.end()) it->second.dies = g.nodes.size();
  return life;
}

// The types of `m`'s values with its shape chains evaluated for these sizes (run_shape_values.h), which
// inference alone leaves unknown past a Reshape whose target comes from a free dimension.
check::CheckResult types_with_shape_values(ir::Model m) {
  fold_shape_values(m);
  return check::check_model(m);
}

// A blocked convolution writes its output into its residual Z when Z dies there (KernelContext::
// output_reusing in src/backends/cpu/dnnl_blocked_kernel.cpp): one allocation, living on as the output
// (and on through the next residual block, whose Z that output is).
void share_residuals(const ir::Graph& g, std::map<std::string, Life>& life) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (n.op_type != "BlockedConv" || n.inputs.size() < 4 || n.inputs[3].empty() || n.outputs.empty())
      continue;
    auto z = life.find(n.inputs[3]);
    auto y = life.find(n.outputs[0]);
    if (z == life.end() || y == life.end() || z->second.dies != i || !y->second.bytes) continue;
    const std::string owner = z->second.storage.empty() ? z->first : z->second.storage;
    Life& held = life[owner];
    if (held.dies != i || held.bytes != y->second.bytes) continue;
    held.dies = y->second.dies;
    y->second.storage = owner;
  }
}

}  // namespace

PlannedMemory plan_memory(const rt::Session& session,
                          const std::vector<std::pair<std::string, rt::Value>>& feeds) {
  const ir::Model m = with_feed_shapes(session, feeds);
  const ir::Graph& g = m.graph;
  std::map<std::string, Life> life = lifetimes(g, types_with_shape_values(m));
  share_residuals(g, life);
  // Bytes coming alive at each node and freed after it.
  PlannedMemory plan;
  const size_t end = g.nodes.size();
  std::vector<size_t> born(end + 1, 0), dies(end + 1, 0);
  for (const auto& [name, l] : life) {
    if (!l.bytes) {
      ++plan.unknown;
      continue;
    }
    if (!l.storage.empty()) continue;  // counted with the allocation it took over
    born[l.born] += *l.bytes;
    dies[l.dies] += *l.bytes;
  }
  size_t live = 0;
  for (size_t i = 0; i < end; ++i) {
    live += born[i];
    if (live > plan.peak_bytes) {
      plan.peak_bytes = live;
      const ir::Node& n = g.nodes[i];
      plan.at_node = !n.name.empty() || n.outputs.empty()
                         ? fmt::format("'{}' ({})", n.name, n.op_type)
                         : fmt::format("{} making '{}'", n.op_type, n.outputs[0]);
    }
    live -= dies[i];
  }
  return plan;
}

void check_planned_memory(const rt::Session& session,
                          const std::vector<std::pair<std::string, rt::Value>>& feeds, size_t limit) {
  if (limit == 0) return;
  for (const rt::BackendInfo& b : session.backends())
    if (b.name != "cpu" && b.nodes > 0) return;
  const PlannedMemory plan = plan_memory(session, feeds);
  if (plan.peak_bytes <= limit) return;
  const std::string unknown =
      plan.unknown == 0 ? ""
                        : fmt::format(" ({} value{} whose size cannot be told before running not counted)",
                                      plan.unknown, plan.unknown == 1 ? "" : "s");
  throw std::runtime_error(fmt::format(
      "the run's memory plan (the model's values for these input sizes) needs {} bytes ({}){} at node {}, "
      "more than the limit of {} bytes ({}) for one run: stopped before running",
      plan.peak_bytes, human_bytes(plan.peak_bytes), unknown, plan.at_node, limit, human_bytes(limit)));
}

}  // namespace tessera::cli
