// GRU: gated recurrent unit with update, reset and hidden gates.
#include "ops/registry.h"
#include "ops/rnn/rnn_util.h"

using namespace tessera::ops;

TESSERA_REGISTER_OPS(rnn_gru) {
  const char* doc =
      "Gated recurrent unit layer (update, reset and hidden gates, Sigmoid and Tanh by default), forward, "
      "reverse or in both directions.";
  for (int version : {1, 3, 7, 14, 22}) {
    OpSchema s("GRU", version);
    add_recurrent_common(s, version);
    s.doc(doc).optional_output("Y", "T");
    // Opset 1 made Y_h mandatory and spelled the default direction "foward"; both are kept so that the
    // schema matches what version 1 declared.
    if (version == 1) {
      s.output("Y_h", "T").attr("direction", "foward");
    } else {
      s.optional_output("Y_h", "T").attr("direction", "forward");
    }
    s.attr_optional("activations", tessera::ir::AttrType::kStrings);
    if (version >= 3) s.attr("linear_before_reset", int64_t{0});
    if (version < 7) s.attr("output_sequence", int64_t{0});
    reg.add(std::move(s.infer([](InferenceContext& ctx) { infer_recurrent(ctx, 3); })));
  }
}
