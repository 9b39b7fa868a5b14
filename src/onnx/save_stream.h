// Writing a ModelProto whose large tensors are not in it: each TensorProto listed in `deferred` gets its
// raw_data from a span (the tensor's own buffer or mapping) at write time, so saving never copies the
// weights into the proto. The bytes written are exactly those protobuf would write for the proto with
// each raw_data filled in (fields in number order, the same length prefixes), so the two can be
// compared, and any protobuf reader reads the result.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>

#include "onnx.pb.h"

namespace tessera::onnx::detail {

// TensorProto -> the raw_data it is written with (the proto itself holds none).
using DeferredBytes = std::unordered_map<const onnx_pb::TensorProto*, std::span<const std::byte>>;

// Receives the file's bytes in order; a span passed on is only valid during the call.
using ByteSink = std::function<void(std::span<const std::byte>)>;

class BlockWriter;

class StreamedModel {
 public:
  // The kinds of message a tensor can sit beneath.
  enum class Kind { kModel, kGraph, kNode, kAttribute, kFunction, kSparse, kTensor };

  // Serializes the proto (without the deferred bytes) and computes the sizes. `proto` and the spans
  // must stay unchanged until write() returns. Throws SaveError when a deferred tensor is not in it.
  StreamedModel(const onnx_pb::ModelProto& proto, const DeferredBytes& deferred);

  // The size of the serialized model, raw data included.
  size_t size() const { return skeleton_.size() + extra_of(&proto_); }
  // Writes the model: small pieces gathered into blocks of about `block` bytes, each deferred tensor's
  // bytes passed on straight from its span. Throws SaveError if the bytes do not add up to size().
  void write(const ByteSink& sink, size_t block = size_t{4} << 20) const;

 private:
  size_t scan(const google::protobuf::MessageLite& m, Kind kind);
  size_t extra_of(const google::protobuf::MessageLite* m) const {
    auto it = extra_.find(m);
    return it == extra_.end() ? 0 : it->second;
  }
  void write_message(std::string_view wire, const google::protobuf::MessageLite& m, Kind kind,
                     BlockWriter& out) const;

  const onnx_pb::ModelProto& proto_;
  const DeferredBytes& deferred_;
  std::string skeleton_;  // the proto as protobuf serializes it, without the deferred bytes
  size_t found_ = 0;
  // Messages with deferred bytes beneath them -> the bytes those add to their serialized size.
  std::unordered_map<const google::protobuf::MessageLite*, size_t> extra_;
};

}  // namespace tessera::onnx::detail
