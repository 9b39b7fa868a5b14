// What the passes optimise for: the backend that will run the model, its precision and activation
// layout, the level of rewriting, and the rules switched off. The passes never include the runtime: what
// they need of it (does a kernel exist for this node? what does this node compute?) comes through the
// two interfaces below, which the runtime implements (runtime/pass_target.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/model.h"

namespace tessera::passes {

// The optimisation levels (pipeline.h); each includes the ones before it.
enum class OptLevel { kNone, kBasic, kExtended, kLayout };
std::string_view opt_level_name(OptLevel l);
std::optional<OptLevel> opt_level_from_name(std::string_view s);

enum class Precision { kFp32, kTf32, kFp16, kBf16 };
std::string_view precision_name(Precision p);
std::optional<Precision> precision_from_name(std::string_view s);

// The activation layout of convolution chains: NCHW as ONNX writes it, NHWC (channels last, the GPU's
// tensor-core layout) or the CPU's channel-blocked layout (ops/layout/blocked.h).
enum class Layout { kNchw, kNhwc, kBlocked };
std::string_view layout_name(Layout l);
std::optional<Layout> layout_from_name(std::string_view s);

// Node metadata key where fusion rules list the names of the ONNX nodes a fused node replaced
// ("conv_1,relu_1"); the profiler reports them with the fused node's time.
inline constexpr const char* kFusedFromKey = "tessera.fused_from";

// Whether the engine can run a node (a fusion must never make a model unrunnable).
class KernelOracle {
 public:
  virtual ~KernelOracle() = default;
  virtual bool has_kernel(const ir::Model& model, const ir::Node& node) const = 0;
};

// Computes a node whose inputs are all constants (constant folding); nullopt when it cannot (no kernel,
// a kernel error, an output that is not a tensor). `inputs` are in the node's input order (nullptr for
// an omitted one).
class NodeEvaluator {
 public:
  virtual ~NodeEvaluator() = default;
  virtual std::optional<std::vector<ir::Tensor>> evaluate(
      const ir::Model& model, const ir::Node& node, const std::vector<const ir::Tensor*>& inputs) const = 0;
};

struct Target {
  std::string backend = "cpu";  // rules listing other backends only are skipped
  OptLevel level = OptLevel::kLayout;
  Precision precision = Precision::kFp32;
  Layout layout = Layout::kBlocked;  // used from the layout level on
  std::vector<std::string> disabled_rules;
  const KernelOracle* kernels = nullptr;     // null: no fusion that needs a kernel is made
  const NodeEvaluator* evaluator = nullptr;  // null: computed nodes are not folded

  bool rule_enabled(std::string_view name) const;
};

}  // namespace tessera::passes
