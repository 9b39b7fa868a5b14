// Reference kernels of Optional, OptionalHasElement and OptionalGetElement. A present optional is just
// its element (see runtime/value.h), so only the empty one needs a value of its own: Value::none with
// the optional's type.
#include <fmt/format.h>

#include "runtime/kernel.h"

namespace {

using tessera::rt::KernelContext;
using tessera::rt::Value;

void optional_kernel(KernelContext& ctx) {
  if (ctx.has_input(0)) {
    ctx.set_output(0, ctx.value(0));
    return;
  }
  const tessera::ir::Attribute* a = ctx.info().attr("type");
  if (!a || a->types.empty()) {
    // An empty optional input passes on with its own type; without any the node is malformed.
    const Value* slot = ctx.input_slot(0);
    if (slot && !slot->none_type().is_none()) return ctx.set_output(0, *slot);
    ctx.fail("an Optional without input needs the 'type' attribute to say what it may hold");
  }
  ctx.set_output(0, Value::none(tessera::ir::Type::optional(a->types[0])));
}

void optional_has_element(KernelContext& ctx) {
  bool present = ctx.has_input(0);  // a missing input (opset 18) counts as empty
  ctx.output(0, tessera::ir::DataType::kBool, {}).data<bool>()[0] = present;
}

void optional_get_element(KernelContext& ctx) {
  const Value* slot = ctx.input_slot(0);
  if (!slot || slot->is_none()) ctx.fail("input 'input' is an empty optional; it has no element to get");
  ctx.set_output(0, *slot);
}

}  // namespace

TESSERA_REGISTER_KERNELS(sequence_optional) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Optional", optional_kernel));
  reg.add(KernelDef::fn("OptionalHasElement", optional_has_element));
  reg.add(KernelDef::fn("OptionalGetElement", optional_get_element));
}
