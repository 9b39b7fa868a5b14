#include "profiler/roofline.h"

#include <algorithm>
#include <array>

namespace tessera::profiler {

namespace {

// NVIDIA's datasheets, dense (without structured sparsity). Names as cudaGetDeviceProperties gives
// them; the first entry whose every word appears in the name wins, so the more specific come first.
struct DatasheetRow {
  std::array<std::string_view, 2> words;
  std::string_view label;
  double fp16, tf32, fp32, gbps;
};
constexpr DatasheetRow kDatasheet[] = {
    {{"H200", ""}, "NVIDIA H200 SXM", 989.4, 494.7, 66.9, 4800},
    {{"H100", "PCIe"}, "NVIDIA H100 PCIe", 756.5, 378.0, 51.2, 2000},
    {{"H100", "HBM3"}, "NVIDIA H100 SXM5", 989.4, 494.7, 66.9, 3350},
    {{"A100", "80GB"}, "NVIDIA A100 80GB", 312.0, 156.0, 19.5, 2039},
    {{"A100", ""}, "NVIDIA A100 40GB", 312.0, 156.0, 19.5, 1555},
};

}  // namespace

std::optional<Peaks> datasheet_peaks(std::string_view device_name, passes::Precision p) {
  for (const auto& row : kDatasheet) {
    const bool match = std::all_of(row.words.begin(), row.words.end(), [&](std::string_view w) {
      return w.empty() || device_name.find(w) != std::string_view::npos;
    });
    if (!match) continue;
    Peaks peaks;
    peaks.gbps = row.gbps;
    switch (p) {
      case passes::Precision::kFp16:
      case passes::Precision::kBf16:
        peaks.tflops = row.fp16;
        break;
      case passes::Precision::kTf32:
        peaks.tflops = row.tf32;
        break;
      case passes::Precision::kFp32:
        peaks.tflops = row.fp32;
        break;
    }
    peaks.source =
        "datasheet: " + std::string(row.label) + ", dense " + std::string(passes::precision_name(p));
    return peaks;
  }
  return std::nullopt;
}

Roofline layer_roofline(const Work& w, double time_ms, const Peaks& peaks) {
  Roofline r;
  const double flops = w.flops.value_or(0), bytes = w.bytes.value_or(0);
  if (time_ms > 0) {
    r.tflops_per_s = flops / time_ms / 1e9;
    r.gbps = bytes / time_ms / 1e6;
  }
  if (w.flops && w.bytes && bytes > 0) r.intensity = flops / bytes;
  // A bound needs the whole work, both peaks and some work; copies between devices move over the bus,
  // whose bandwidth is not the memory's.
  if (!w.flops || !w.bytes || !peaks.known() || w.device_copy || (flops == 0 && bytes == 0)) return r;
  const double compute_ms = flops / peaks.tflops / 1e9;
  const double memory_ms = bytes / peaks.gbps / 1e6;
  r.bound = compute_ms >= memory_ms ? "compute" : "memory";
  r.bound_ms = std::max(compute_ms, memory_ms);
  if (time_ms > 0) r.percent_of_bound = 100.0 * r.bound_ms / time_ms;
  return r;
}

}  // namespace tessera::profiler
