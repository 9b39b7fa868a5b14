#include "cli/run_shape_values.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <string_view>

#include "check/checker.h"
#include "runtime/pass_target.h"

namespace tessera::cli {
namespace {

// What a shape value may hold: more is not shape math, and folding it could allocate a lot.
constexpr int64_t kMaxElements = 4096;
// Rounds of folding: one per Reshape whose target waits on a Shape made static by the round before;
// a transformer's layers each add one.
constexpr int kMaxRounds = 256;

std::optional<int64_t> static_numel(const ir::Type& t) {
  if (!t.is_tensor() || !t.shape) return std::nullopt;
  int64_t n = 1;
  for (const ir::Dim& d : *t.shape) {
    if (!d.is_static()) return std::nullopt;
    n *= d.value;
    if (n > kMaxElements) return n;
  }
  return n;
}

int64_t attr_int(const ir::Node& n, std::string_view name, int64_t fallback) {
  const ir::Attribute* a = n.attr(name);
  return a ? a->i : fallback;
}

// Shape (with Shape-15's start and end, clamped) or Size of an input whose shape inference knows.
std::optional<ir::Tensor> shape_of(const ir::Node& n, const check::CheckResult& checked) {
  const bool size = n.op_type == "Size";
  if ((n.op_type != "Shape" && !size) || n.inputs.empty() || n.outputs.size() != 1) return std::nullopt;
  auto t = checked.value_types.find(n.inputs[0]);
  if (t == checked.value_types.end() || !t->second.is_tensor() || !t->second.shape) return std::nullopt;
  std::vector<int64_t> dims;
  for (const ir::Dim& d : *t->second.shape) {
    if (!d.is_static()) return std::nullopt;
    dims.push_back(d.value);
  }
  if (size) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    return ir::make_tensor<int64_t>(n.outputs[0], ir::DataType::kInt64, {}, {count});
  }
  const auto rank = static_cast<int64_t>(dims.size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clamp(attr_int(n, "start", 0)),
                end = std::max(start, clamp(attr_int(n, "end", rank)));
  std::vector<int64_t> kept(dims.begin() + start, dims.begin() + end);
  return ir::make_tensor<int64_t>(n.outputs[0], ir::DataType::kInt64, {static_cast<int64_t>(kept.size())},
                                  kept);
}

bool has_subgraph(const ir::Node& n) {
  return std::any_of(n.attributes.begin(), n.attributes.end(), [](const ir::Attribute& a) {
    return a.type == ir::AttrType::kGraph || a.type == ir::AttrType::kGraphs;
  });
}

bool random(const ir::Node& n) {
  return n.op_type.starts_with("Random") || n.op_type == "Bernoulli" || n.op_type == "Multinomial";
}

// The node's outputs computed from small constants, when every input is one and inference says every
// output is small.
std::optional<std::vector<ir::Tensor>> computed(const ir::Model& m, const ir::Node& n,
                                                const std::map<std::string, const ir::Tensor*>& constants,
                                                const check::CheckResult& checked,
                                                const rt::CpuNodeEvaluator& eval) {
  if (n.outputs.empty() || has_subgraph(n) || random(n)) return std::nullopt;
  std::vector<const ir::Tensor*> inputs;
  for (const std::string& in : n.inputs) {
    if (in.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    auto c = constants.find(in);
    if (c == constants.end() || c->second->numel() > kMaxElements) return std::nullopt;
    inputs.push_back(c->second);
  }
  for (const std::string& out : n.outputs) {
    auto t = checked.value_types.find(out);
    if (out.empty() || t == checked.value_types.end()) return std::nullopt;
    const auto numel = static_numel(t->second);
    if (!numel || *numel > kMaxElements) return std::nullopt;
  }
  return eval.evaluate(m, n, inputs);
}

}  // namespace

size_t fold_shape_values(ir::Model& m) {
  const rt::CpuNodeEvaluator eval;
  size_t folded = 0;
  for (int round = 0; round < kMaxRounds; ++round) {
    const check::CheckResult checked = check::check_model(m);
    std::map<std::string, const ir::Tensor*> constants;
    for (const ir::Tensor& t : m.graph.initializers) constants[t.name] = &t;
    std::deque<ir::Tensor> made;  // stable addresses for `constants`
    std::vector<ir::Node> kept;
    for (const ir::Node& n : m.graph.nodes) {
      std::optional<std::vector<ir::Tensor>> values;
      if (auto s = shape_of(n, checked)) {
        values = std::vector<ir::Tensor>{std::move(*s)};
      } else {
        values = computed(m, n, constants, checked, eval);
      }
      if (!values || values->size() != n.outputs.size()) {
        kept.push_back(n);
        continue;
      }
      for (size_t i = 0; i < values->size(); ++i) {
        (*values)[i].name = n.outputs[i];
        made.push_back(std::move((*values)[i]));
        constants[made.back().name] = &made.back();
      }
      ++folded;
    }
    if (made.empty()) break;
    m.graph.nodes = std::move(kept);
    for (ir::Tensor& t : made) m.graph.initializers.push_back(std::move(t));
  }
  return folded;
}

}  // namespace tessera::cli
