// Boolean logic: And, Or, Xor (two inputs, broadcast) and Not.
#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

TESSERA_REGISTER_OPS(math_logical) {
  struct Logic {
    const char* name;
    const char* doc;
  };
  for (Logic op : {Logic{"And", "Logical and of A and B, elementwise."},
                   Logic{"Or", "Logical or of A and B, elementwise."},
                   Logic{"Xor", "Logical exclusive or of A and B, elementwise."}}) {
    reg.add(with_legacy_broadcast(binary_schema(op.name, 1, Category::kLogical, op.doc, kBool, true), true));
    reg.add(binary_schema(op.name, 7, Category::kLogical, op.doc, kBool, true));
  }
  reg.add(unary_schema("Not", 1, Category::kLogical, "Logical negation of each element.", kBool));
}
