// libFuzzer target: arbitrary bytes through load and check. A LoadError is the expected answer to
// garbage; a crash, a sanitizer report, a hang or an unexpected exception type is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "check/checker.h"
#include "onnx/onnx_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::ir::Model model;
  try {
    model = tessera::onnx::load_model_from_memory(std::span(reinterpret_cast<const std::byte*>(data), size));
  } catch (const tessera::onnx::LoadError&) {
    return 0;
  }
  tessera::check::CheckOptions options;
  options.max_diagnostics = 100;
  (void)tessera::check::check_model(model, options);
  // What loads must also save and load back.
  std::string bytes = tessera::onnx::serialize_model(model);
  (void)tessera::onnx::load_model_from_memory(
      std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()));
  return 0;
}
