// Trigonometric and hyperbolic functions, elementwise. Each came in opset 7 (circular) or 9 (hyperbolic)
// for float16/float/double and gained bfloat16 in opset 22; the output has the input's type and shape.
#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

TESSERA_REGISTER_OPS(math_trig) {
  struct Trig {
    const char* name;
    int since;
    const char* doc;
  };
  for (Trig op : {Trig{"Sin", 7, "Sine of each element (radians)."},
                  Trig{"Cos", 7, "Cosine of each element (radians)."},
                  Trig{"Tan", 7, "Tangent of each element (radians)."},
                  Trig{"Asin", 7, "Arcsine of each element, in radians."},
                  Trig{"Acos", 7, "Arccosine of each element, in radians."},
                  Trig{"Atan", 7, "Arctangent of each element, in radians."},
                  Trig{"Sinh", 9, "Hyperbolic sine of each element."},
                  Trig{"Cosh", 9, "Hyperbolic cosine of each element."},
                  Trig{"Asinh", 9, "Inverse hyperbolic sine of each element."},
                  Trig{"Acosh", 9, "Inverse hyperbolic cosine of each element."},
                  Trig{"Atanh", 9, "Inverse hyperbolic tangent of each element."}}) {
    reg.add(unary_schema(op.name, op.since, Category::kArithmetic, op.doc, types::kFloat, "input", "output"));
    reg.add(unary_schema(op.name, 22, Category::kArithmetic, op.doc, types::kFloatBf16, "input", "output"));
  }
}
