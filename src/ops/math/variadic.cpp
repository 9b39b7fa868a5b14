// Max, Min, Sum, Mean over any number of inputs, elementwise. Before opset 8 every input had to have
// the same shape; from opset 8 they broadcast numpy-style.
#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

namespace {

OpSchema variadic(const char* name, const char* out, int since, const char* doc,
                  std::vector<std::string> allowed) {
  OpSchema s(name, since);
  s.category(Category::kArithmetic)
      .doc(doc)
      .variadic_input("data_0", "T")
      .output(out, "T")
      .types("T", std::move(allowed))
      .infer(since < 8 ? infer_same_shape_inputs : infer_broadcast);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(math_variadic) {
  struct Variadic {
    const char* name;
    const char* out;
    const char* doc;
    bool ints_from_12;  // Max and Min accept integers from opset 12; Sum and Mean never do
  };
  for (Variadic op : {Variadic{"Max", "max", "Elementwise maximum of the inputs.", true},
                      Variadic{"Min", "min", "Elementwise minimum of the inputs.", true},
                      Variadic{"Sum", "sum", "Elementwise sum of the inputs.", false},
                      Variadic{"Mean", "mean", "Elementwise mean of the inputs.", false}}) {
    reg.add(with_consumed_inputs(variadic(op.name, op.out, 1, op.doc, types::kFloat)));
    reg.add(variadic(op.name, op.out, 6, op.doc, types::kFloat));
    reg.add(variadic(op.name, op.out, 8, op.doc, types::kFloat));
    if (op.ints_from_12) {
      reg.add(variadic(op.name, op.out, 12, op.doc, types::kNumeric));
      reg.add(variadic(op.name, op.out, 13, op.doc, types::kNumericBf16));
    } else {
      reg.add(variadic(op.name, op.out, 13, op.doc, types::kFloatBf16));
    }
  }
}
