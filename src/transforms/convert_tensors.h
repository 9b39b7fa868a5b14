// `tessera convert tensors`: the batch tensor type conversion. Selected initializers and tensor / list
// attributes get one element type; each change is an ordinary edit command (ReplaceInitializer,
// SetAttribute), so undoing it restores the original types and values exactly.
#pragma once

#include <string>

#include "ir/commands/history.h"
#include "transforms/transform.h"

namespace tessera::transforms {

struct TensorConvertOptions {
  ir::DataType to = ir::DataType::kFloat16;
  ir::DataType from = ir::DataType::kFloat;  // only tensors of this type are converted
  // ECMAScript regular expressions, searched in initializer names and in "NODE.ATTRIBUTE" names of
  // node attributes. With both empty, every initializer of type `from` is converted.
  std::string initializers;
  std::string attributes;
};

// Converts, as one undo step, in every graph (subgraphs and function bodies too). Lossy changes are
// reported as warnings (elements changed, largest change); the model's type-check state afterwards too.
// List attributes hold float32 or int64 only, so they convert between those two (floats round toward
// zero into ints). Throws TransformError for an invalid expression or type, the model untouched.
Report convert_tensors(ir::History& h, const TensorConvertOptions& options);

}  // namespace tessera::transforms
