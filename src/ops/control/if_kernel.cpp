// Reference kernel of If: runs the branch the condition picks and passes its outputs on unchanged.
#include <fmt/format.h>

#include "runtime/kernel.h"

namespace {

using tessera::rt::KernelContext;

void if_kernel(KernelContext& ctx) {
  const tessera::rt::Tensor& c = ctx.input(0);
  if (c.dtype() != tessera::ir::DataType::kBool)
    ctx.fail(fmt::format("input 'cond' must be a bool tensor, got {}", tessera::ir::dtype_name(c.dtype())));
  if (c.numel() != 1)
    ctx.fail(
        fmt::format("input 'cond' must hold one element, got shape {}", tessera::rt::shape_str(c.shape())));
  const char* branch = c.data<bool>()[0] ? "then_branch" : "else_branch";
  std::vector<tessera::rt::Value> outs = ctx.run_subgraph(branch, {});
  if (outs.size() != ctx.output_count())
    ctx.fail(fmt::format("{} gave {} outputs but the node has {}", branch, outs.size(), ctx.output_count()));
  for (size_t i = 0; i < outs.size(); ++i) ctx.set_output(i, std::move(outs[i]));
}

}  // namespace

TESSERA_REGISTER_KERNELS(control_if) {
  reg.add(tessera::rt::KernelDef::fn("If", if_kernel));
}
