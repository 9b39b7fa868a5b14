// `tessera set-shapes`: explicit sizes or dimension variables on graph inputs (the seed's "Write Tensor
// Sizes"), then shape inference stores the type of every intermediate value of the main graph in
// value_info and refines the graph outputs' types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/commands/history.h"
#include "transforms/transform.h"

namespace tessera::transforms {

struct InputShape {
  std::string input;
  ir::Shape dims;  // static sizes or symbols
};
struct InputDimParam {
  std::string input;
  int64_t axis = 0;  // negative counts from the end
  std::string name;  // the dimension variable ("batch")
};

struct SetShapesOptions {
  std::vector<InputShape> shapes;
  std::vector<InputDimParam> dim_params;  // applied after `shapes`
};

// As one undo step. Throws TransformError, the model untouched, for an input the model does not have,
// an axis out of range, or shapes with which the model no longer type-checks.
Report set_shapes(ir::History& h, const SetShapesOptions& options);
ir::Model set_shapes_copy(const ir::Model& m, const SetShapesOptions& options, Report& report);

// "1x3x224x224", "batchx3x224x224" or "batch,3,max_len" (a token that is not a number is a dimension
// variable; with commas, symbols may contain an 'x'); "" or "scalar" for rank 0. nullopt when a token is
// empty or a negative number.
std::optional<ir::Shape> parse_shape(const std::string& s);

}  // namespace tessera::transforms
