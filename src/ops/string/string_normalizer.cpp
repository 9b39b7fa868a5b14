// StringNormalizer: removes stop words and changes the case of a 1-D (or [1, C]) string tensor.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::AttrType;
using tessera::ir::DataType;
using tessera::ir::Dim;

namespace {

// Same rank as X; the word count is unknown when stop words may remove some (an all-removed input
// still gives one empty string).
void infer_string_normalizer(InferenceContext& ctx) {
  std::string action = ctx.attr_string("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER") {
    ctx.fail(fmt::format("attribute 'case_change_action' is '{}'; it must be NONE, LOWER or UPPER", action));
  }
  const auto* x = input_shape(ctx, 0);
  if (!x) return set_output(ctx, 0, DataType::kString, std::nullopt);
  if (x->size() != 1 && x->size() != 2) {
    ctx.fail_input(0, fmt::format("X must be [C] or [1, C], got {}", tessera::ir::shape_to_string(*x)));
  }
  if (x->size() == 2 && (*x)[0].is_static() && (*x)[0].value != 1) {
    ctx.fail_input(0, fmt::format("a 2-D X must be [1, C], got {}", tessera::ir::shape_to_string(*x)));
  }
  tessera::ir::Shape out = *x;
  if (!ctx.attr_strings("stopwords").empty()) out.back() = Dim::unknown();
  set_output(ctx, 0, DataType::kString, std::move(out));
}

}  // namespace

TESSERA_REGISTER_OPS(string_string_normalizer) {
  reg.add(OpSchema("StringNormalizer", 10)
              .category(Category::kString)
              .doc("Drops the words listed in 'stopwords' (optionally ignoring case) and turns the rest to "
                   "lower or "
                   "upper case, or leaves their case alone.")
              .input("X", "tensor(string)")
              .output("Y", "tensor(string)")
              .attr("case_change_action", "NONE")
              .attr("is_case_sensitive", int64_t{0})
              .attr_optional("locale", AttrType::kString)
              .attr_optional("stopwords", AttrType::kStrings)
              .infer(infer_string_normalizer));
}
