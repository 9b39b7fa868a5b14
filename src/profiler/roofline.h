// The roofline of a layer: its work (profiler/work.h) against the device's peaks. A layer cannot run
// faster than its FLOPs at the peak FLOP rate, nor than its bytes at the peak memory bandwidth; the
// larger of the two is its bound, "compute" or "memory", and the profile says what fraction of that
// bound the layer achieved (100%: it runs at the roofline).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "passes/target.h"
#include "profiler/work.h"

namespace tessera::profiler {

// The device's peaks: FLOP rate in the session's precision (TFLOP/s) and memory bandwidth (GB/s).
// 0: not known, and then no layer gets a bound.
struct Peaks {
  double tflops = 0, gbps = 0;
  std::string source;  // "given" (--peak-tflops/--peak-gbps), "datasheet: ...", or empty
  bool known() const { return tflops > 0 && gbps > 0; }
};

// The datasheet's dense peaks of a GPU named as CUDA names it ("NVIDIA H100 80GB HBM3") computing in
// `p` (float16/bfloat16 and TF32 on the tensor cores, float32 on the CUDA cores); nullopt for a device
// the table does not know. A measured peak is better: a GEMM reaches ~75% of an H100's datasheet rate.
std::optional<Peaks> datasheet_peaks(std::string_view device_name, passes::Precision p);

// One layer against the roofline, per run.
struct Roofline {
  double tflops_per_s = 0, gbps = 0;  // achieved: the work over the layer's time
  double intensity = 0;               // FLOPs per byte (0 when either is unknown or no bytes)
  std::string bound;                  // "compute", "memory", or empty: no peaks, no work, uncounted FLOPs
  double bound_ms = 0;                // max(FLOPs / peak rate, bytes / bandwidth)
  double percent_of_bound = 0;        // 100 * bound_ms / time_ms
};
// `w` is the layer's work per run (every call), `time_ms` its time per run.
Roofline layer_roofline(const Work& w, double time_ms, const Peaks& peaks);

}  // namespace tessera::profiler
