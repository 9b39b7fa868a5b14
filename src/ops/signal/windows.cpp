// BlackmanWindow, HammingWindow and HannWindow: 1-D windows of a given length, differing only in formula.
#include <fmt/format.h>

#include "ops/dtype_attr.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Dim;

namespace {

// A 1-D tensor of `size` elements (known when the size is a constant) of type 'output_datatype'.
void infer_window(InferenceContext& ctx) {
  DataType elem = dtype_attr(ctx, "output_datatype", "T2").value_or(DataType::kFloat);
  const auto* s = input_shape(ctx, 0);
  // A scalar, though a one-element 1-D tensor is accepted as the same thing.
  if (s && !(s->empty() || (s->size() == 1 && (*s)[0].is_static() && (*s)[0].value == 1))) {
    ctx.fail_input(0, fmt::format("size must be a scalar, got shape {}", tessera::ir::shape_to_string(*s)));
  }
  Dim n = Dim::unknown();
  if (auto c = constant_ints(ctx, 0); c && c->size() == 1) {
    if ((*c)[0] < 0) ctx.fail_input(0, fmt::format("window size must not be negative, got {}", (*c)[0]));
    n = Dim::of((*c)[0]);
  }
  set_output(ctx, 0, elem, tessera::ir::Shape{n});
}

}  // namespace

TESSERA_REGISTER_OPS(signal_windows) {
  struct Window {
    const char* name;
    const char* doc;
  };
  for (auto [name, doc] : {
           Window{"BlackmanWindow",
                  "A Blackman window of the given length (three cosine terms), periodic or symmetric."},
           Window{"HammingWindow",
                  "A Hamming window of the given length (raised cosine with non-zero ends), periodic "
                  "or symmetric."},
           Window{"HannWindow",
                  "A Hann window of the given length (raised cosine reaching zero at the ends), "
                  "periodic or symmetric."},
       }) {
    reg.add(OpSchema(name, 17)
                .category(Category::kImage)
                .doc(doc)
                .input("size", "T1")
                .output("output", "T2")
                .attr("output_datatype", int64_t{1})
                .attr("periodic", int64_t{1})
                .types("T1", types::tensors({"int32", "int64"}))
                .types("T2", types::concat({types::kFloatBf16, types::kSignedInt, types::kUnsignedInt}))
                .infer(infer_window));
  }
}
