// The runtime's side of passes::Target: the kernels the backends have and a node evaluator for
// constant folding, so that the passes never include the runtime.
#pragma once

#include <vector>

#include "passes/target.h"

namespace tessera::rt {

class Backend;

// Has a kernel when one of the backends (the CPU backend among them) has one. A com.microsoft or
// com.tessera node the model does not import yet is looked up at version 1, the version the fusions'
// ensure_opset_import adds.
class BackendKernelOracle : public passes::KernelOracle {
 public:
  explicit BackendKernelOracle(std::vector<const Backend*> backends) : backends_(std::move(backends)) {}
  bool has_kernel(const ir::Model& model, const ir::Node& node) const override;

 private:
  std::vector<const Backend*> backends_;
};

// Runs one node on the CPU's kernels, directly: a kernel, a context, heap memory, one thread.
class CpuNodeEvaluator : public passes::NodeEvaluator {
 public:
  std::optional<std::vector<ir::Tensor>> evaluate(
      const ir::Model& model, const ir::Node& node,
      const std::vector<const ir::Tensor*>& inputs) const override;
};

// A target for the CPU at `level` (kernels and evaluator of the built-in CPU backend), for callers
// outside a session: `tessera optimize`, the transformations, tests.
passes::Target cpu_target(passes::OptLevel level);

}  // namespace tessera::rt
