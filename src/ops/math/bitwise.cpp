// Bit operations on integers: BitwiseAnd/Or/Xor/Not (opset 18) and BitShift.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

namespace {

void infer_bitshift(InferenceContext& ctx) {
  std::string direction = ctx.attr_string("direction");
  if (direction != "LEFT" && direction != "RIGHT") {
    ctx.fail(fmt::format("attribute 'direction' is '{}'; it must be 'LEFT' or 'RIGHT'", direction));
  }
  infer_broadcast(ctx);
}

OpSchema bitshift(int since, std::vector<std::string> allowed) {
  OpSchema s("BitShift", since);
  s.category(Category::kLogical)
      .doc("Shifts the bits of each element of X left or right by the amount in Y (broadcast).")
      .input("X", "T")
      .input("Y", "T")
      .output("Z", "T")
      .types("T", std::move(allowed))
      .attr("direction", tessera::ir::AttrType::kString, "'LEFT' or 'RIGHT'.")
      .infer(infer_bitshift);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(math_bitwise) {
  struct Bitwise {
    const char* name;
    const char* doc;
  };
  for (Bitwise op : {Bitwise{"BitwiseAnd", "Bitwise and of A and B, elementwise."},
                     Bitwise{"BitwiseOr", "Bitwise or of A and B, elementwise."},
                     Bitwise{"BitwiseXor", "Bitwise exclusive or of A and B, elementwise."}}) {
    reg.add(binary_schema(op.name, 18, Category::kLogical, op.doc, kAllInt));
  }
  reg.add(unary_schema("BitwiseNot", 18, Category::kLogical, "Flips every bit of each element.", kAllInt));
  // Version 28 extended the shifts to signed integers.
  reg.add(bitshift(11, types::kUnsignedInt));
  reg.add(bitshift(28, kAllInt));
}
