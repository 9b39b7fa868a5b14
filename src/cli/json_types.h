// JSON spellings of IR values shared by the --json outputs.
#pragma once

#include <nlohmann/json.hpp>

#include "ir/graph.h"
#include "runtime/session.h"

namespace tessera::cli {

nlohmann::json dims_json(const ir::Shape& s);       // [1, "batch", null]
nlohmann::json value_json(const ir::ValueInfo& v);  // {name, type, shape}

}  // namespace tessera::cli
