// The schema of a com.tessera pooling op over an activation layout (BlockedMaxPool, NhwcAveragePool...):
// MaxPool's window attributes (no Indices output, no storage_order) over X of the layout, giving Y of
// the same layout. The AveragePools add count_include_pad.
#pragma once

#include <string>
#include <vector>

#include "ops/schema.h"

namespace tessera::ops::layout {

OpSchema pool_schema(const char* name, const char* doc, std::vector<std::string> types, InferFn infer);

}  // namespace tessera::ops::layout
