#include "runtime/pass_target.h"

#include "ops/registry.h"
#include "runtime/backend.h"
#include "runtime/thread_pool.h"

namespace tessera::rt {

namespace {

int opset_for(const ir::Model& model, const ir::Node& n) {
  if (auto v = model.opset_version(n.domain)) return static_cast<int>(*v);
  return n.domain == "com.microsoft" || n.domain == "com.tessera" ? 1 : 0;
}

// Heap allocations and one thread: folding runs on small constants, once.
class EvaluatorHost : public ExecutionHost {
 public:
  Tensor allocate(DataType dtype, Shape shape) override { return Tensor::zeros(dtype, std::move(shape)); }
  std::vector<Value> run_subgraph(const ExecGraph&, std::span<const Value>) override {
    throw KernelError("a node with subgraphs is not folded");
  }
  ThreadPool& threads() override {
    static ThreadPool pool(1);
    return pool;
  }
  bool cancelled() const override { return false; }
};

}  // namespace

bool BackendKernelOracle::has_kernel(const ir::Model& model, const ir::Node& node) const {
  const ops::OpSchema* schema =
      ops::OpRegistry::global().find(node.domain, node.op_type, opset_for(model, node));
  if (!schema) return false;
  KernelInfo info(node, schema, schema->since_version());
  for (const Backend* b : backends_)
    if (b->supports_op(info)) return true;
  return false;
}

std::optional<std::vector<ir::Tensor>> CpuNodeEvaluator::evaluate(
    const ir::Model& model, const ir::Node& node, const std::vector<const ir::Tensor*>& inputs) const {
  const ops::OpSchema* schema =
      ops::OpRegistry::global().find(node.domain, node.op_type, opset_for(model, node));
  if (!schema) return std::nullopt;
  KernelInfo info(node, schema, schema->since_version());
  const KernelDef* def = KernelRegistry::cpu().find(info);
  if (!def) return std::nullopt;
  try {
    KernelPtr kernel = def->create(info);
    std::vector<Value> values;
    values.reserve(inputs.size());
    for (const ir::Tensor* t : inputs) values.push_back(t ? Value(Tensor::from_ir(*t)) : Value());
    std::vector<const Value*> ins;
    for (size_t i = 0; i < inputs.size(); ++i) ins.push_back(inputs[i] ? &values[i] : nullptr);
    std::vector<Value> outs(node.outputs.size());
    EvaluatorHost host;
    KernelContext ctx(info, ins, outs, host);
    kernel->compute(ctx);
    std::vector<ir::Tensor> result;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (node.outputs[i].empty()) continue;
      if (!outs[i].is_tensor()) return std::nullopt;
      result.push_back(outs[i].tensor().to_ir(node.outputs[i]));
    }
    return result;
  } catch (const std::exception&) {
    return std::nullopt;  // the node stays, and the session reports the error when it runs
  }
}

passes::Target cpu_target(passes::OptLevel level) {
  static const std::unique_ptr<Backend> cpu = make_cpu_backend();
  static const BackendKernelOracle oracle({cpu.get()});
  static const CpuNodeEvaluator evaluator;
  passes::Target t;
  t.level = level;
  t.kernels = &oracle;
  t.evaluator = &evaluator;
  return t;
}

}  // namespace tessera::rt
