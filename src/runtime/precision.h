// The compute precision of a device session: float16 (or bfloat16) with float32 accumulation is the
// GPU's default, as NvNeural's FP16 default was. The session lowers the optimised model's float32
// values to the narrow type with the same conversion as `tessera convert fp16 --keep-io-types`
// (transforms/float16.h), so graph inputs and outputs stay float32 behind one Cast each, and keeps
// float32 every node the device has no narrow kernel for (it then runs where it would have run
// anyway, in the precision its kernel has), so a lowering never moves work off the device.
#pragma once

#include <string>
#include <vector>

#include "ir/model.h"
#include "passes/target.h"

namespace tessera::rt {

class Backend;

struct PrecisionResult {
  passes::Precision precision = passes::Precision::kFp32;  // what the session computes in
  size_t lowered = 0;                                      // nodes computing in the narrow type
  std::vector<std::string> kept;  // nodes left in float32 (no narrow kernel on the device)
  size_t casts = 0;               // Cast nodes the lowering added
  std::string note;               // why the lowering was not made, when it was asked for and not made
};

// Lowers `model` in place for `device` when `p` is kFp16 or kBf16 (otherwise leaves it alone).
PrecisionResult lower_precision(ir::Model& model, passes::Precision p, const Backend& device);

}  // namespace tessera::rt
