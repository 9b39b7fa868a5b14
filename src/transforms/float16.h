// Conversion of a float32 model to float16 or bfloat16 (`tessera convert fp16|bf16`).
//
// Everything float32 becomes the target type: initializers, Constant and ConstantOfShape values,
// tensor attributes, Cast targets and the dtype of generator ops, and the value types recorded for
// graph inputs, outputs and value_info, in subgraphs and local functions too. Nodes that stay float32
// (the block lists, and nodes whose operator schema does not accept the target type) read float32
// through Casts and hand float32 on through Casts. Each value gets at most one Cast per direction,
// shared by all its readers, and never a Cast of a Cast: a block of float32 nodes costs one Cast on
// each edge into and out of the block, not one per node.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/commands/history.h"
#include "transforms/tensor_convert.h"
#include "transforms/transform.h"

namespace tessera::transforms {

// Initializers already converted, by their buffer: a caller converting one model many times (convert
// amp tries many block lists) converts each weight once.
// Each entry holds its source buffer: a buffer freed while its address stays a key could be reused by
// another tensor, which would then be given this one's conversion.
struct ConvertedTensors {
  struct Entry {
    ir::BufferPtr source;
    ir::Tensor converted;
    ConversionStats stats;
  };
  std::unordered_map<const void*, Entry> by_buffer;
};

struct FloatConvertOptions {
  ir::DataType to = ir::DataType::kFloat16;  // kFloat16 or kBFloat16
  // Graph inputs and outputs of the main graph stay float32, with one Cast at each boundary.
  bool keep_io_types = false;
  // Operator types ("LayerNormalization", or "com.microsoft:Attention") and node names that stay
  // float32. Every name must name a node of the model (in any graph): a missing one is an error.
  std::vector<std::string> op_block_list;
  std::vector<std::string> node_block_list;
  // Optional: reused between conversions of the same model (same target type).
  std::shared_ptr<ConvertedTensors> cache;
};

// Converts the model `h` edits, as one undo step. Throws TransformError, the model untouched, when a
// block list names a missing node or a node that cannot stay float32 (one with subgraphs, a function
// call), or when the model does not type-check before or after.
Report convert_float(ir::History& h, const FloatConvertOptions& options);

// The same on a copy: the converted model, the original untouched.
ir::Model convert_float_copy(const ir::Model& m, const FloatConvertOptions& options, Report& report);

}  // namespace tessera::transforms
