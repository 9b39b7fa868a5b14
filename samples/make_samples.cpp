// Writes the bundled sample models into a folder: make_samples OUT_DIR
#include <fmt/format.h>

#include <filesystem>

#include "onnx/onnx_io.h"
#include "samples.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} OUT_DIR\n", argv[0]);
    return 2;
  }
  std::filesystem::path dir = argv[1];
  try {
    std::filesystem::create_directories(dir);
    tessera::onnx::save_model(tessera::samples::make_denoiser(), dir / "denoiser.onnx");
    tessera::onnx::save_model(tessera::samples::make_transformer_block(), dir / "transformer_block.onnx");
  } catch (const std::exception& e) {
    fmt::print(stderr, "make_samples: {}\n", e.what());
    return 1;
  }
  return 0;
}
