// The data files of the ONNX test layout (test_data_set_N/input_K.pb, output_K.pb): a serialized
// TensorProto, or for non-tensor values a SequenceProto, MapProto or OptionalProto (onnx-data.proto).
// Nothing in the file says which: the caller knows from the graph's input or output type.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "ir/type.h"

namespace tessera::onnx {

struct DataValue {
  enum class Kind { kTensor, kSequence, kMap, kOptional };
  Kind kind = Kind::kTensor;
  std::string name;
  ir::Tensor tensor;              // kTensor
  std::vector<DataValue> items;   // kSequence elements; kOptional: zero or one element
  ir::Tensor keys;                // kMap: int64 or string keys
  std::vector<DataValue> values;  // kMap: one sequence value
  int32_t elem_type = 0;          // kSequence/kOptional: 1 tensor, 3 sequence, 4 map, 5 optional
};

// Parses bytes as the message `type` calls for (tensor -> TensorProto, seq -> SequenceProto,
// optional -> OptionalProto, map -> MapProto). Throws LoadError naming `where` when malformed.
DataValue parse_data_value(std::span<const std::byte> bytes, const ir::Type& type, std::string_view where);
DataValue read_data_value(const std::filesystem::path& file, const ir::Type& type);
// A tensor file alone (the type of an input is not always known).
ir::Tensor parse_tensor(std::span<const std::byte> bytes, std::string_view where);

std::string serialize_data_value(const DataValue& v);
// Atomically, like every file Tessera writes.
void write_data_value(const DataValue& v, const std::filesystem::path& file);

}  // namespace tessera::onnx
