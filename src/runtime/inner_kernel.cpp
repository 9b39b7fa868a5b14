#include "runtime/inner_kernel.h"

#include <fmt/format.h>

#include "ops/registry.h"

namespace tessera::rt {
namespace {

// Lets the inner kernel allocate from the outer node's allocator and threads.
class ForwardingHost : public ExecutionHost {
 public:
  explicit ForwardingHost(KernelContext& ctx) : ctx_(ctx) {}
  Tensor allocate(DataType dtype, Shape shape) override { return ctx_.scratch(dtype, std::move(shape)); }
  Tensor allocate_uninitialized(DataType dtype, Shape shape) override {
    return ctx_.scratch_uninitialized(dtype, std::move(shape));
  }
  std::vector<Value> run_subgraph(const ExecGraph&, std::span<const Value>) override {
    throw KernelError("an inner kernel has no subgraph");
  }
  Stream& stream() override { return ctx_.stream(); }
  ThreadPool& threads() override { return ctx_.threads(); }
  bool cancelled() const override { return ctx_.cancelled(); }

 private:
  KernelContext& ctx_;
};

}  // namespace

InnerKernel::InnerKernel(ir::Node node, int opset, int max_priority)
    : node_(std::make_unique<ir::Node>(std::move(node))) {
  const ops::OpSchema* schema = ops::OpRegistry::global().find(node_->domain, node_->op_type, opset);
  if (!schema) throw KernelError(fmt::format("the {} schema is missing", node_->op_type));
  info_ = std::make_unique<KernelInfo>(*node_, schema, schema->since_version());
  const KernelDef* def = KernelRegistry::cpu().find(*info_, max_priority);
  if (!def) throw KernelError(fmt::format("no CPU kernel for {} is registered", node_->op_type));
  kernel_ = def->create(*info_);
}

std::vector<Value> InnerKernel::run(KernelContext& outer, std::span<const Value* const> inputs) const {
  std::vector<Value> outs(node_->outputs.size());
  ForwardingHost host(outer);
  KernelContext ctx(*info_, inputs, outs, host);
  kernel_->compute(ctx);
  return outs;
}

}  // namespace tessera::rt
