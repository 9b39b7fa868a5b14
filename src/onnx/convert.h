// Internal to src/onnx: conversion between the generated protobuf classes and the IR.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "onnx.pb.h"
#include "onnx/onnx_io.h"

namespace tessera::onnx::detail {

class ExternalFiles;

struct LoadContext {
  LoadOptions options;
  // Where external data is read from; null when the model came from memory without a base folder.
  ExternalFiles* external = nullptr;
  // raw_data of the main graph's initializers, by index, when it was stripped from the bytes parsed
  // and left in the file's mapping (see raw_data_views.h); null entries: not stripped.
  std::vector<ir::BufferPtr> initializer_raw;
};

// Proto -> IR. The messages are taken by mutable reference so bulky strings (raw_data above all) are
// moved out rather than copied. Throws LoadError.
ir::Model model_from_proto(onnx_pb::ModelProto& p, LoadContext& ctx);
// `where` says where the tensor sits when its name alone may not ("attribute 'value' of node 'c1'").
// `raw`, when set, is the tensor's raw_data, taken out of the message before parsing.
ir::Tensor tensor_from_proto(onnx_pb::TensorProto& p, std::string_view where, LoadContext& ctx,
                             ir::BufferPtr raw = nullptr);

// Decides where each numeric tensor's bytes go when saving: inline raw_data or an external file.
class TensorPlacer {
 public:
  virtual ~TensorPlacer() = default;
  // Fills the data fields of `p` (raw_data, or data_location + external_data) for tensor `t`.
  virtual void place(const ir::Tensor& t, onnx_pb::TensorProto* p) = 0;
};

// IR -> proto. Throws SaveError.
void model_to_proto(const ir::Model& m, onnx_pb::ModelProto* p, TensorPlacer& placer);

// "tensor 'w'" or "tensor 'w' (attribute 'value' of node 'c1')", the prefix of every tensor message.
std::string tensor_label(std::string_view name, std::string_view where);
// "[2,3]"
std::string dims_string(const std::vector<int64_t>& dims);

}  // namespace tessera::onnx::detail
