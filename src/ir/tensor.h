// Constant tensors: initializers, Constant values and tensor attributes.
//
// Numeric data is held as dense little-endian bytes (sub-byte types packed, low nibble first), whatever
// field of the file it came from; the bytes live in a shared, immutable Buffer so that copies of a
// model, undo snapshots and memory-mapped files cost no copy of the weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/dtype.h"

namespace tessera::ir {

using StringPair = std::pair<std::string, std::string>;

class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual std::span<const std::byte> bytes() const = 0;
};
using BufferPtr = std::shared_ptr<const Buffer>;

// A buffer that owns its bytes in a std::string (moved in from the parser without a copy).
BufferPtr make_buffer(std::string bytes);
BufferPtr make_buffer(std::span<const std::byte> bytes);
// A window into another buffer (a memory-mapped file, say) that keeps it alive.
BufferPtr make_buffer_view(BufferPtr parent, size_t offset, size_t length);

// Where a tensor's bytes live when they are stored outside the model file.
struct ExternalData {
  std::string location;  // relative to the model's folder, '/'-separated
  int64_t offset = 0;
  int64_t length = -1;   // -1: up to what the tensor's shape needs
  std::string checksum;  // SHA-1 hex as written by some exporters; kept, not verified
};

struct Tensor {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;
  std::string doc_string;
  std::vector<StringPair> metadata_props;

  BufferPtr data;                                      // numeric types; null for an empty tensor or strings
  std::vector<std::string> strings;                    // kString only
  std::optional<ExternalData> external;                // set when the bytes stay in an external file
  std::optional<std::pair<int64_t, int64_t>> segment;  // deprecated TensorProto.segment, kept as is
  std::string unknown_fields;                          // fields of a newer IR, written back untouched

  // Element count; nullopt if a dimension is negative or the product overflows int64.
  std::optional<int64_t> numel() const;
  // Bytes the dense data takes (sub-byte types rounded up); nullopt on overflow.
  std::optional<int64_t> expected_bytes() const;
  std::span<const std::byte> bytes() const;

  // Typed access for host code; the caller checks dtype first.
  template <class T>
  std::span<const T> as() const {
    auto b = bytes();
    return {reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T)};
  }

  // Deep equality of what the tensor means (values, shape, type, names), used by round-trip tests.
  bool operator==(const Tensor& o) const;
};

// Builds a dense tensor from host values.
template <class T>
Tensor make_tensor(std::string name, DataType dtype, std::vector<int64_t> dims,
                   const std::vector<T>& values) {
  Tensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.data = make_buffer(std::span<const std::byte>(reinterpret_cast<const std::byte*>(values.data()),
                                                  values.size() * sizeof(T)));
  return t;
}

struct SparseTensor {
  Tensor values;
  Tensor indices;
  std::vector<int64_t> dims;
  bool operator==(const SparseTensor& o) const = default;
};

}  // namespace tessera::ir
