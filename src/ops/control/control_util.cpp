#include "ops/control/control_util.h"

#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/sequence/container_types.h"

namespace tessera::ops {

std::vector<std::pair<int, std::vector<std::string>>> if_loop_versions() {
  return {
      {1, types::kAllTensor},
      {11, types::kAllTensor},
      {13, tensor_and_seq(types::kAllTensor)},
      {16, tensor_seq_optional(types::kAllTensorIr4)},
      {19, tensor_seq_optional(types::kAllTensorIr9)},
      {21, tensor_seq_optional(types::kAllTensorIr10)},
      {23, tensor_seq_optional(types::kAllTensorIr11)},
      {24, tensor_seq_optional(types::kAllTensorIr12)},
      {25, tensor_seq_optional(types::kAllTensorIr13)},
  };
}

const ir::Graph* graph_attr(const InferenceContext& ctx, std::string_view name) {
  const ir::Attribute* a = ctx.node().attr(name);
  if (!a || a->type != ir::AttrType::kGraph || a->graphs.empty()) return nullptr;
  return a->graphs[0].get();
}

void require_single_element(const InferenceContext& ctx, size_t i, std::string_view name) {
  if (!ctx.has_input(i)) return;
  const ir::Shape* s = input_shape(ctx, i);
  if (!s) return;
  auto n = ir::shape_numel(*s);
  if (s->size() > 1 || (n && *n != 1)) {
    ctx.fail_input(
        i, fmt::format("input '{}' must hold a single element, got shape {}", name, ir::shape_to_string(*s)));
  }
}

}  // namespace tessera::ops
