// External tensor data: the location/offset/length/checksum keys of TensorProto.external_data, and
// reading the bytes they point at from files beside the model, safely (see util/safe_open.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "ir/tensor.h"
#include "onnx.pb.h"
#include "util/mapped_file.h"
#include "util/unique_fd.h"

namespace tessera::onnx::detail {

// A whole memory-mapped file as a Buffer, for tensors to hold views of.
ir::BufferPtr mapping_buffer(std::shared_ptr<const util::MappedFile> m);

// Parses the keys; refuses unknown, duplicate and malformed ones and checks the location's syntax.
// `label` starts every message. Throws LoadError.
ir::ExternalData parse_external_data(const onnx_pb::TensorProto& p, const std::string& label);

// The external files of one model folder, each opened and memory-mapped once and shared by the
// tensors stored in it.
class ExternalFiles {
 public:
  explicit ExternalFiles(std::filesystem::path base_dir) : base_dir_(std::move(base_dir)) {}

  // The `nbytes` bytes `ext` points at, as a view into the file's mapping. Throws LoadError naming
  // `label`, the location and the problem.
  ir::BufferPtr read(const std::string& label, const ir::ExternalData& ext, int64_t nbytes);
  // The same checks as read() (the file opened safely beneath the folder, a regular file with one
  // link, the bytes inside it) without mapping it: empty when read() would succeed, else the message
  // of the LoadError read() would throw. For `tessera info`, which lists external data unread.
  std::string problem(const std::string& label, const ir::ExternalData& ext, int64_t nbytes);

 private:
  struct File {
    util::UniqueFd fd;      // open until mapped
    ir::BufferPtr mapping;  // null until read() needs the bytes
    int64_t size = 0;
  };
  File& open(const std::string& label, const std::string& location);
  // The file of `ext` after every check of the location and the byte range; throws LoadError.
  File& checked(const std::string& label, const ir::ExternalData& ext, int64_t nbytes);

  std::filesystem::path base_dir_;
  util::UniqueFd dir_;
  std::map<std::string, File> files_;  // by location with "." parts dropped
};

}  // namespace tessera::onnx::detail
