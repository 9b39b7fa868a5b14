// Identity passes its input on without a copy: values are immutable once produced, so sharing the
// storage is safe (the memory planner sees the longer lifetime through the shared reference).
#include "runtime/kernel.h"

namespace {

void identity(tessera::rt::KernelContext& ctx) {
  ctx.set_output(0, ctx.value(0));
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_identity) {
  reg.add(tessera::rt::KernelDef::fn("Identity", identity));
}
