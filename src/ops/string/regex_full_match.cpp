// RegexFullMatch: whether each string matches a regular expression in full.
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::AttrType;

TESSERA_REGISTER_OPS(string_regex_full_match) {
  reg.add(
      OpSchema("RegexFullMatch", 20)
          .category(Category::kString)
          .doc("Tests each string against the RE2 regular expression 'pattern', true where the whole string "
               "matches.")
          .input("X", "T1")
          .output("Y", "T2")
          .attr_optional("pattern", AttrType::kString)
          .types("T1", types::tensors({"string"}))
          .types("T2", types::tensors({"bool"}))
          .infer([](InferenceContext& ctx) {
            const auto* x = input_shape(ctx, 0);
            set_output(ctx, 0, tessera::ir::DataType::kBool,
                       x ? std::optional<tessera::ir::Shape>(*x) : std::nullopt);
          }));
}
