// The output shape of Reshape, shared by every backend's kernel: a 0 in the target copies the input's
// dimension (unless allowzero, from opset 14, makes it a real 0) and one -1 is inferred. Throws
// rt::KernelError naming what does not fit.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/tensor.h"

namespace tessera::ops {

rt::Shape resolve_reshape(const rt::Shape& in, const std::vector<int64_t>& target, bool allowzero);

}  // namespace tessera::ops
