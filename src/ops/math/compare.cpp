// Comparisons: Equal, Greater, Less, GreaterOrEqual, LessOrEqual give a bool tensor of the broadcast
// shape. Version 1 of the first three used the limited `broadcast`/`axis` broadcasting.
#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

namespace {

constexpr Category kCat = Category::kArithmetic;

OpSchema compare(const char* name, int since, const char* doc, std::vector<std::string> allowed) {
  return binary_schema(name, since, kCat, doc, std::move(allowed), /*bool_output=*/true);
}

void add_equal(OpRegistry& reg) {
  const char* doc = "True where A equals B, elementwise.";
  auto v1 = types::tensors({"bool", "int32", "int64"});
  reg.add(with_legacy_broadcast(compare("Equal", 1, doc, v1), true));
  reg.add(compare("Equal", 7, doc, v1));
  reg.add(compare("Equal", 11, doc, types::concat({kBool, types::kNumeric})));
  reg.add(compare("Equal", 13, doc, types::concat({kBool, types::kNumericBf16})));
  reg.add(compare("Equal", 19, doc, types::concat({kBool, types::kNumericBf16, types::tensors({"string"})})));
}

void add_ordering(OpRegistry& reg) {
  struct Order {
    const char* name;
    const char* doc;
  };
  for (Order op : {Order{"Greater", "True where A > B, elementwise."},
                   Order{"Less", "True where A < B, elementwise."}}) {
    reg.add(with_legacy_broadcast(compare(op.name, 1, op.doc, types::kFloat), true));
    reg.add(compare(op.name, 7, op.doc, types::kFloat));
    reg.add(compare(op.name, 9, op.doc, types::kNumeric));
    reg.add(compare(op.name, 13, op.doc, types::kNumericBf16));
  }
  for (Order op : {Order{"GreaterOrEqual", "True where A >= B, elementwise."},
                   Order{"LessOrEqual", "True where A <= B, elementwise."}}) {
    reg.add(compare(op.name, 12, op.doc, types::kNumeric));
    reg.add(compare(op.name, 16, op.doc, types::kNumericBf16));
  }
}

}  // namespace

TESSERA_REGISTER_OPS(math_compare) {
  add_equal(reg);
  add_ordering(reg);
}
