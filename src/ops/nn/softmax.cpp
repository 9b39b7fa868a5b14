// Softmax, LogSoftmax and Hardmax. Before opset 13 they flattened the input to 2-D at `axis` (default 1)
// and normalized each row; from opset 13 they work along the single axis `axis` (default -1).
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;

namespace {

void infer_softmax(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  const ir::Shape* xs = input_shape(ctx, 0);
  if (!xs) return;
  auto rank = static_cast<int64_t>(xs->size());
  int64_t axis = ctx.attr_int("axis", ctx.schema().since_version() >= 13 ? -1 : 1);
  // Opset 1 documented no negative axes and let the 2-D coercion take axis == rank; only reject what no
  // version accepts there.
  if (ctx.schema().since_version() < 11) {
    if (axis < -rank || axis > rank)
      ctx.fail(fmt::format("attribute 'axis' is {}, outside [{}, {}]", axis, -rank, rank));
    return;
  }
  normalize_axis(ctx, axis, rank);
}

struct Flavour {
  const char* name;
  const char* doc13;
  const char* doc_old;
};

}  // namespace

TESSERA_REGISTER_OPS(nn_softmax) {
  const Flavour flavours[] = {
      {"Softmax", "exp(x) / sum(exp(x)) along `axis`: each slice becomes a probability distribution.",
       "Flattens the input to 2-D at `axis` and turns each row into a probability distribution, exp(x) / "
       "sum(exp(x))."},
      {"LogSoftmax", "The logarithm of Softmax along `axis`, computed stably.",
       "Flattens the input to 2-D at `axis` and takes the logarithm of the softmax of each row."},
      {"Hardmax", "1 at the first maximum of each slice along `axis`, 0 elsewhere.",
       "Flattens the input to 2-D at `axis` and puts 1 at the first maximum of each row, 0 elsewhere."},
  };
  for (const Flavour& f : flavours) {
    for (int v : {1, 11, 13}) {
      reg.add(OpSchema(f.name, v)
                  .category(Category::kActivation)
                  .doc(v >= 13 ? f.doc13 : f.doc_old)
                  .input("input", "T")
                  .output("output", "T")
                  .types("T", v >= 13 ? types::kFloatBf16 : types::kFloat)
                  .attr("axis", int64_t{v >= 13 ? -1 : 1})
                  .infer(infer_softmax));
    }
  }
}
