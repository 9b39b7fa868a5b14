// ConcatFromSequence: joins the tensors of a sequence along an axis, or stacks them on a new one.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/sequence_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

TESSERA_REGISTER_OPS(sequence_concat_from_sequence) {
  reg.add(OpSchema("ConcatFromSequence", 11)
              .category(Category::kSequence)
              .doc("Concatenates the sequence's tensors along 'axis'; with new_axis=1 they are stacked along "
                   "a new "
                   "axis instead.")
              .input("input_sequence", "S")
              .output("concat_result", "T")
              .types("S", sequence_types())
              .types("T", types::kAllTensor)
              .attr("axis", tessera::ir::AttrType::kInt)
              .attr("new_axis", int64_t{0})
              .infer([](InferenceContext& ctx) {
                const auto* elem = sequence_elem(ctx, 0, "input_sequence");
                if (!elem) return;
                bool new_axis = ctx.attr_int("new_axis", 0) != 0;
                if (!elem->shape) return set_output(ctx, 0, elem->elem, std::nullopt);
                // The number of tensors is not known statically, so the joined axis's size is not either.
                auto rank = static_cast<int64_t>(elem->shape->size());
                Shape out = *elem->shape;
                int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), new_axis ? rank + 1 : rank);
                if (new_axis) {
                  out.insert(out.begin() + axis, Dim::unknown());
                } else {
                  out[axis] = Dim::unknown();
                }
                set_output(ctx, 0, elem->elem, out);
              }));
}
