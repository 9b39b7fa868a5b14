// NumPy .npy files <-> tensors: model inputs and outputs of `tessera run`, initializer import in the
// studio. Versions 1.0-3.0 of the format; little-endian numeric types, bool, and C order (Fortran-order
// arrays are refused: transposing them is the caller's choice, not a silent one).
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>

#include "ir/tensor.h"

namespace tessera::io {

class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses .npy bytes; the message of an NpyError says what is wrong ("unsupported dtype '>f4'...").
ir::Tensor parse_npy(std::span<const std::byte> bytes, std::string name = {});
ir::Tensor read_npy(const std::filesystem::path& file, std::string name = {});

// Serializes a numeric or bool tensor (not strings, not sub-byte types).
std::string to_npy(const ir::Tensor& t);
// Writes atomically (temporary file, fsync, rename).
void write_npy(const ir::Tensor& t, const std::filesystem::path& file);

}  // namespace tessera::io
