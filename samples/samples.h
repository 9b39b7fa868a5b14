// The bundled sample models, built in code so they need no download and no other tool.
#pragma once

#include "ir/model.h"

namespace tessera::samples {

// A small image denoiser CNN (encoder with a strided stage, pixel-shuffle decoder, skip paths and a
// residual output), input "input_image" [batch,3,256,256], output "output_image"; opset 17.
ir::Model make_denoiser();

// One pre-norm transformer encoder block as exporters write it (LayerNormalization, attention with
// Reshape targets computed from Shape, Softmax, erf-based GELU), input "hidden" [batch,seq,256].
ir::Model make_transformer_block();

// `layers` such blocks in a row; without weights the initializers keep their shapes but hold no data
// (for benchmarks of the checker on graphs of tens of thousands of nodes).
ir::Model make_transformer(int layers, bool with_weights);

}  // namespace tessera::samples
