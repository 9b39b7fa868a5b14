// Reading and writing ONNX model files.
//
// Loading never trusts the file: sizes, nesting and external-data locations are checked, and every
// problem is reported as a LoadError whose message says what is wrong and where (which tensor, which
// key, which file). Nothing outside the model's folder is ever read or written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/model.h"

namespace tessera::onnx {

class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SaveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LoadOptions {
  // Read external tensor data (memory-mapped) while loading; when false, tensors keep only their
  // ExternalData reference and an empty buffer.
  bool load_external_data = true;
  // With load_external_data false: when set, every external location is still checked as a load
  // would check it (the file opened safely, not a link, the byte range inside it) without mapping or
  // reading it, and each refusal is appended here with the message the load would throw.
  std::vector<std::string>* external_data_problems = nullptr;
  // Deepest nesting of subgraphs (If inside Loop inside If...) accepted before refusing the file.
  int max_subgraph_depth = 64;
};

// Large initializers (and all external data) are not copied: their tensors are views of the files'
// memory mappings, read on first use. Replacing those files by rename, as save_model does, is safe
// while the model lives; rewriting them in place is not.
ir::Model load_model(const std::filesystem::path& file, const LoadOptions& options = {});
// `base_dir` is where external data would be looked up; empty: external data is refused.
ir::Model load_model_from_memory(std::span<const std::byte> bytes, const std::filesystem::path& base_dir = {},
                                 const LoadOptions& options = {});

struct SaveOptions {
  enum class ExternalData {
    kKeep,      // tensors loaded from external data stay external (rewritten into external_file)
    kInline,    // everything inside the .onnx file (fails past protobuf's 2 GiB limit)
    kExternal,  // tensors of at least external_threshold bytes go to external_file
  };
  ExternalData external_data = ExternalData::kKeep;
  // Relative to the model's folder; default: "<model file name>.data".
  std::string external_file;
  int64_t external_threshold = 1024;
  // Offsets of external tensors are aligned to this many bytes (so they can be memory-mapped).
  int64_t alignment = 64;
};

// Writes atomically: a temporary file beside the target, fsync, rename; on any failure the previous
// file is left as it was.
void save_model(const ir::Model& model, const std::filesystem::path& file, const SaveOptions& options = {});
// The model as protobuf bytes, every tensor inline.
std::string serialize_model(const ir::Model& model);

}  // namespace tessera::onnx
