// StringConcat: elementwise concatenation of two string tensors, with broadcasting.
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;

TESSERA_REGISTER_OPS(string_string_concat) {
  reg.add(
      OpSchema("StringConcat", 20)
          .category(Category::kString)
          .doc("Joins the strings of X and Y element by element (X's first), broadcasting the two shapes.")
          .input("X", "T")
          .input("Y", "T")
          .output("Z", "T")
          .types("T", types::tensors({"string"}))
          .infer([](InferenceContext& ctx) {
            set_output(ctx, 0, tessera::ir::DataType::kString, broadcast_inputs(ctx, {0, 1}));
          }));
}
