// Small helpers shared by the graph- and node-level parts of the checker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/model.h"

namespace tessera::check {

// Subgraph nesting beyond this is not followed (the loader already refuses deeper files); it only
// guards the checker's own recursion against models built in memory.
inline constexpr int kMaxDepth = 256;

// The node's name for messages; unnamed nodes are named by their operator.
std::string node_name(const ir::Node& n);
// Materialises the value of a Constant node so later nodes can use it (Reshape targets, Slice starts).
std::optional<ir::Tensor> constant_value(const ir::Node& node);
// Whether the tensor's bytes (or strings) are all there and match its shape.
bool tensor_data_usable(const ir::Tensor& t);
// Domains whose operators Tessera knows completely (an unknown operator there is an error).
bool is_standard_domain(std::string_view d);
std::optional<int64_t> imported_version(const std::vector<ir::OpsetImport>& opsets, std::string_view domain);

}  // namespace tessera::check
