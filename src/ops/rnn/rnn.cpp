// RNN: the plain (Elman) recurrent layer, H_t = f(X_t W^T + H_{t-1} R^T + b).
#include "ops/registry.h"
#include "ops/rnn/rnn_util.h"

using namespace tessera::ops;

TESSERA_REGISTER_OPS(rnn_rnn) {
  const char* doc =
      "Elman recurrent layer: each step computes H = f(X W^T + H_prev R^T + Wb + Rb) with f = Tanh by "
      "default, forward, reverse or in both directions.";
  for (int version : {1, 7, 14, 22}) {
    OpSchema s("RNN", version);
    add_recurrent_common(s, version);
    s.doc(doc)
        .optional_output("Y", "T")
        .optional_output("Y_h", "T")
        .attr("activations", std::vector<std::string>{"Tanh", "Tanh"})
        .attr("direction", "forward");
    if (version == 1) s.attr("output_sequence", int64_t{0});
    reg.add(std::move(s.infer([](InferenceContext& ctx) { infer_recurrent(ctx, 1); })));
  }
}
