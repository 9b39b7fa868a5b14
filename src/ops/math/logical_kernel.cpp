// Reference kernels of And, Or, Xor (broadcasting; the limited `broadcast`/`axis` alignment for the
// opset-1 versions) and Not, on bool tensors.
#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
using BoolTypes = tessera::rt::TypeList<bool>;

void and_kernel(KernelContext& ctx) {
  compare_map<BoolTypes>(ctx, [](bool a, bool b) { return a && b; });
}
void or_kernel(KernelContext& ctx) {
  compare_map<BoolTypes>(ctx, [](bool a, bool b) { return a || b; });
}
void xor_kernel(KernelContext& ctx) {
  compare_map<BoolTypes>(ctx, [](bool a, bool b) { return a != b; });
}
void not_kernel(KernelContext& ctx) {
  unary_map<BoolTypes>(ctx, [](bool x) { return !x; });
}

}  // namespace

TESSERA_REGISTER_KERNELS(math_logical) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("And", and_kernel));
  reg.add(KernelDef::fn("Or", or_kernel));
  reg.add(KernelDef::fn("Xor", xor_kernel));
  reg.add(KernelDef::fn("Not", not_kernel));
}
