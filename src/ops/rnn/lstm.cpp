// LSTM: long short-term memory layer with input, output, forget and cell gates and optional peepholes.

#include "ops/registry.h"
#include "ops/rnn/rnn_util.h"

using namespace tessera::ops;

TESSERA_REGISTER_OPS(rnn_lstm) {
  const char* doc =
      "Long short-term memory layer (input, output, forget and cell gates, optional peepholes P), forward, "
      "reverse or in both directions; returns the sequence Y and the last hidden and cell states.";
  for (int version : {1, 7, 14, 22}) {
    OpSchema s("LSTM", version);
    add_recurrent_common(s, version);
    s.doc(doc)
        .optional_input("initial_c", "T")
        .optional_input("P", "T")
        .optional_output("Y", "T")
        .optional_output("Y_h", "T")
        .optional_output("Y_c", "T")
        .attr_optional("activations", tessera::ir::AttrType::kStrings)
        .attr("direction", "forward")
        .attr("input_forget", int64_t{0});
    if (version == 1) s.attr("output_sequence", int64_t{0});
    reg.add(std::move(s.infer([](InferenceContext& ctx) { infer_recurrent(ctx, 4); })));
  }
}
