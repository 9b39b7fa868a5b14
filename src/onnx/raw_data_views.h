// Zero-copy loading of weights stored inline. Protobuf copies every bytes field it parses, so a 1 GB
// model would be copied from the page cache into fresh heap memory. Instead, a quick pass over the
// wire format (three levels: ModelProto > GraphProto > TensorProto) finds the raw_data of the main
// graph's initializers, and the model is parsed from a copy of the file without them; the tensors
// then point straight into the file's memory mapping.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tessera::onnx::detail {

struct StrippedModel {
  std::string bytes;  // the model without the stripped raw_data fields
  // Per initializer of the main graph, in order: where its raw_data lies in the original bytes
  // (length 0: not stripped; its raw_data, if any, is still in `bytes`).
  struct Range {
    size_t offset = 0, length = 0;
  };
  std::vector<Range> initializer_raw;
};

// Strips raw_data fields of at least `min_size` bytes. nullopt when there is nothing worth stripping
// or the bytes are anything but plainly well-formed (the ordinary parser then reports the problem).
std::optional<StrippedModel> strip_initializer_raw_data(std::span<const std::byte> model, size_t min_size);

}  // namespace tessera::onnx::detail
