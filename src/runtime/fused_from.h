// The ONNX nodes a fused node replaced, as fusion rules record them in its metadata (passes'
// kFusedFromKey, "conv_1,relu_1"): the profiler ties a fused kernel's time back to them by name, and the
// CUDA backend's fault injection finds a node by a name it had before fusion.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/target.h"

namespace tessera::rt {

inline std::vector<std::string> fused_from(const ir::Node& n) {
  std::vector<std::string> out;
  for (const auto& [k, v] : n.metadata_props) {
    if (k != passes::kFusedFromKey) continue;
    size_t pos = 0;
    while (pos <= v.size()) {
      size_t c = v.find(',', pos);
      out.push_back(v.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
      if (c == std::string::npos) break;
      pos = c + 1;
    }
  }
  return out;
}

}  // namespace tessera::rt
