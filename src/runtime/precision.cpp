#include "runtime/precision.h"

#include <fmt/format.h>

#include <set>

#include "check/checker.h"
#include "runtime/backend.h"
#include "runtime/exec_graph.h"
#include "transforms/float16.h"

namespace tessera::rt {

namespace {

bool touches(const ir::Node& n, const std::unordered_map<std::string, ir::Type>& types, ir::DataType t) {
  auto is = [&](const std::string& v) {
    auto it = types.find(v);
    return !v.empty() && it != types.end() && it->second.is_tensor() && it->second.elem == t;
  };
  for (const auto& v : n.inputs)
    if (is(v)) return true;
  for (const auto& v : n.outputs)
    if (is(v)) return true;
  return false;
}

// Names the nodes that have none, so that the conversion's block list can name them.
void name_nodes(ir::Model& m) {
  std::set<std::string> taken;
  for (const auto& n : m.graph.nodes) taken.insert(n.name);
  size_t k = 0;
  for (auto& n : m.graph.nodes) {
    if (!n.name.empty()) continue;
    std::string name;
    do name = fmt::format("{}_{}", n.op_type, k++);
    while (taken.count(name));
    taken.insert(name);
    n.name = std::move(name);
  }
}

size_t count_casts(const ir::Model& m) {
  size_t n = 0;
  for (const auto& node : m.graph.nodes) n += node.op_type == "Cast" && node.domain.empty();
  return n;
}

}  // namespace

PrecisionResult lower_precision(ir::Model& model, passes::Precision p, const Backend& device) {
  PrecisionResult r;
  if (p != passes::Precision::kFp16 && p != passes::Precision::kBf16) {
    r.precision = p;
    return r;
  }
  ir::DataType narrow = p == passes::Precision::kFp16 ? ir::DataType::kFloat16 : ir::DataType::kBFloat16;
  transforms::FloatConvertOptions o;
  o.to = narrow;
  o.keep_io_types = true;
  ir::Model named = model;
  name_nodes(named);
  size_t casts_before = count_casts(named);
  try {
    transforms::Report report;
    ir::Model lowered = transforms::convert_float_copy(named, o, report);
    // Nodes the device would not run in the narrow type stay float32 (control flow runs on the host
    // and converts with its bodies).
    auto typed = check::check_model(lowered);
    for (const auto& n : lowered.graph.nodes) {
      if (!touches(n, typed.value_types, narrow) || n.op_type == "Cast") continue;
      bool has_body = false;
      for (const auto& a : n.attributes) has_body |= a.type == ir::AttrType::kGraph;
      if (has_body) continue;
      auto info = make_kernel_info(n, lowered, &typed.value_types);
      if (!device.supports_op(*info)) o.node_block_list.push_back(n.name);
    }
    if (!o.node_block_list.empty()) lowered = transforms::convert_float_copy(named, o, report);
    r.kept = o.node_block_list;
    r.casts = count_casts(lowered) - std::min(count_casts(lowered), casts_before);
    auto final_types = check::check_model(lowered);
    for (const auto& n : lowered.graph.nodes) r.lowered += touches(n, final_types.value_types, narrow);
    model = std::move(lowered);
    r.precision = p;
  } catch (const std::exception& e) {
    r.note =
        fmt::format("computing in float32: the {} lowering failed: {}", passes::precision_name(p), e.what());
  }
  return r;
}

}  // namespace tessera::rt
