// Reference kernel of SequenceMap: runs the body once per element of the input sequence. Additional
// inputs that are sequences contribute their element of the same index (they must be as long); tensors
// are passed whole to every call. Output k collects the body's output k of every call.
#include <fmt/format.h>

#include "ops/sequence/sequence_util_kernel.h"
#include "runtime/exec_graph.h"
#include "runtime/kernel.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::ir::Type;
using tessera::rt::KernelContext;
using tessera::rt::Sequence;
using tessera::rt::Value;

// The element type of output k before any element is known: the body's declared output type.
Type declared_elem(const KernelContext& ctx, size_t k) {
  const auto& outs = ctx.info().subgraph("body").graph().outputs;
  if (k >= outs.size()) return {};
  Type t = outs[k].type;
  if (t.is_tensor()) return Type::tensor(t.elem);
  return t;
}

void sequence_map(KernelContext& ctx) {
  const Sequence& in = sequence_input(ctx, 0, "input_sequence");
  const size_t n = in.items.size();
  for (size_t j = 1; j < ctx.input_count(); ++j) {
    const Value& v = ctx.value(j);
    if (v.is_sequence() && v.sequence().items.size() != n)
      ctx.fail(fmt::format("additional input {} is a sequence of {} element(s) but input_sequence has {}", j,
                           v.sequence().items.size(), n));
  }
  std::vector<Sequence> outs(ctx.output_count());
  for (size_t k = 0; k < outs.size(); ++k) outs[k].elem_type = declared_elem(ctx, k);
  for (size_t i = 0; i < n; ++i) {
    if (ctx.cancelled()) ctx.fail("run cancelled");
    std::vector<Value> args{in.items[i]};
    for (size_t j = 1; j < ctx.input_count(); ++j) {
      const Value& v = ctx.value(j);
      args.push_back(v.is_sequence() ? v.sequence().items[i] : v);
    }
    std::vector<Value> res = ctx.run_subgraph("body", args);
    if (res.size() != outs.size())
      ctx.fail(fmt::format("the body gave {} outputs but the node has {}", res.size(), outs.size()));
    for (size_t k = 0; k < outs.size(); ++k) {
      if (!res[k].is_tensor())
        ctx.fail(fmt::format("body output {} must be a tensor, got {}", k, res[k].describe()));
      if (!outs[k].elem_type.is_tensor() || outs[k].elem_type.elem == tessera::ir::DataType::kUndefined)
        outs[k].elem_type = Type::tensor(res[k].tensor().dtype());
      outs[k].items.push_back(std::move(res[k]));
    }
  }
  for (size_t k = 0; k < outs.size(); ++k) ctx.set_output(k, Value::sequence(std::move(outs[k])));
}

}  // namespace

TESSERA_REGISTER_KERNELS(sequence_sequence_map) {
  reg.add(tessera::rt::KernelDef::fn("SequenceMap", sequence_map));
}
