// Float computations of integer values: exporters compute some shape values in float (a Cast from an
// integer, arithmetic, a Cast back to an integer: floor division, scaled sizes). In float16 those round
// or overflow (100 x 1000 = inf, and Cast(inf) to int64 is no size), so the float16 conversion keeps
// them float32. Only nodes whose float results reach nothing but integer Casts count: the attention
// scale 1 / sqrt(Cast(head size)) flows into the data and converts as before.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_set>

#include "ir/graph.h"
#include "ir/type.h"

namespace tessera::transforms {

// The ids of g's nodes that compute integer values in float: Casts from an integer type to float, the
// nodes computing from them (and from constants) only, and the Casts back to an integer or bool type,
// when every float result of the island is read only inside it. `type_of`: the types of g's values.
std::unordered_set<ir::NodeId> float_shape_arithmetic(
    const ir::Graph& g, const std::function<std::optional<ir::Type>(const std::string&)>& type_of);

}  // namespace tessera::transforms
