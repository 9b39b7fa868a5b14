// The proto without the deferred bytes is serialized by protobuf once (the skeleton: the graph, names,
// small tensors). Protobuf writes a message as its fields in number order, each a tag and, for a message
// or bytes field, a length and the content; the k-th record of a repeated message field is its k-th
// element. So the file is the skeleton copied record by record, except that a record holding deferred
// bytes beneath it gets a larger length and is walked into, and a deferred tensor gets its raw_data
// record (field 9) in its place in the order. Only the message kinds that can hold a tensor are
// walked; everything else is copied as protobuf wrote it.
#include "onnx/save_stream.h"

#include <fmt/format.h>

#include "onnx/onnx_io.h"

namespace tessera::onnx::detail {

using google::protobuf::MessageLite;
using Kind = StreamedModel::Kind;

namespace {

constexpr int kRawDataField = 9;  // TensorProto.raw_data
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

size_t varint_size(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

// The bytes a length-delimited field adds to its parent: tag, length, content.
size_t field_size(int number, size_t content) {
  return varint_size(static_cast<uint64_t>(number) << 3) + varint_size(content) + content;
}

struct Child {
  const MessageLite* message = nullptr;  // null: the field holds no tensor
  Kind kind = Kind::kTensor;
};

template <typename T>
Child at(const google::protobuf::RepeatedPtrField<T>& r, int k, Kind kind) {
  return k < r.size() ? Child{&r.Get(k), kind} : Child{};
}

// The message the k-th record of field `number` of `m` encodes, for the fields that can hold a tensor
// (ModelProto.training_info and other opaque bytes fields hold none that we write).
Child child(const MessageLite& m, Kind kind, int number, int k) {
  switch (kind) {
    case Kind::kModel: {
      const auto& p = static_cast<const onnx_pb::ModelProto&>(m);
      if (number == 7 && k == 0) return {&p.graph(), Kind::kGraph};
      if (number == 25) return at(p.functions(), k, Kind::kFunction);
      return {};
    }
    case Kind::kGraph: {
      const auto& p = static_cast<const onnx_pb::GraphProto&>(m);
      if (number == 1) return at(p.node(), k, Kind::kNode);
      if (number == 5) return at(p.initializer(), k, Kind::kTensor);
      if (number == 15) return at(p.sparse_initializer(), k, Kind::kSparse);
      return {};
    }
    case Kind::kNode:
      if (number == 5) return at(static_cast<const onnx_pb::NodeProto&>(m).attribute(), k, Kind::kAttribute);
      return {};
    case Kind::kAttribute: {
      const auto& p = static_cast<const onnx_pb::AttributeProto&>(m);
      if (number == 5 && k == 0) return {&p.t(), Kind::kTensor};
      if (number == 6 && k == 0) return {&p.g(), Kind::kGraph};
      if (number == 22 && k == 0) return {&p.sparse_tensor(), Kind::kSparse};
      if (number == 10) return at(p.tensors(), k, Kind::kTensor);
      if (number == 11) return at(p.graphs(), k, Kind::kGraph);
      if (number == 23) return at(p.sparse_tensors(), k, Kind::kSparse);
      return {};
    }
    case Kind::kFunction: {
      const auto& p = static_cast<const onnx_pb::FunctionProto&>(m);
      if (number == 7) return at(p.node(), k, Kind::kNode);
      if (number == 11) return at(p.attribute_proto(), k, Kind::kAttribute);
      return {};
    }
    case Kind::kSparse: {
      const auto& p = static_cast<const onnx_pb::SparseTensorProto&>(m);
      if (number == 1 && k == 0) return {&p.values(), Kind::kTensor};
      if (number == 2 && k == 0) return {&p.indices(), Kind::kTensor};
      return {};
    }
    case Kind::kTensor:
      return {};
  }
  return {};
}

// The (field number, element count) pairs of the fields of `m` that can hold a tensor, for the scan.
template <typename F>
void for_each_child(const MessageLite& m, Kind kind, F&& f) {
  auto all = [&](int number, int n) {
    for (int k = n - 1; k >= 0; --k) f(child(m, kind, number, k));
  };
  switch (kind) {
    case Kind::kModel: {
      const auto& p = static_cast<const onnx_pb::ModelProto&>(m);
      all(25, p.functions_size());
      if (p.has_graph()) all(7, 1);
      return;
    }
    case Kind::kGraph: {
      const auto& p = static_cast<const onnx_pb::GraphProto&>(m);
      // Initializers first: once every deferred tensor is found the walk stops, before the many nodes.
      all(5, p.initializer_size());
      all(15, p.sparse_initializer_size());
      all(1, p.node_size());
      return;
    }
    case Kind::kNode:
      all(5, static_cast<const onnx_pb::NodeProto&>(m).attribute_size());
      return;
    case Kind::kAttribute: {
      const auto& p = static_cast<const onnx_pb::AttributeProto&>(m);
      all(5, p.has_t() ? 1 : 0);
      all(6, p.has_g() ? 1 : 0);
      all(22, p.has_sparse_tensor() ? 1 : 0);
      all(10, p.tensors_size());
      all(11, p.graphs_size());
      all(23, p.sparse_tensors_size());
      return;
    }
    case Kind::kFunction: {
      const auto& p = static_cast<const onnx_pb::FunctionProto&>(m);
      all(11, p.attribute_proto_size());
      all(7, p.node_size());
      return;
    }
    case Kind::kSparse: {
      const auto& p = static_cast<const onnx_pb::SparseTensorProto&>(m);
      all(1, p.has_values() ? 1 : 0);
      all(2, p.has_indices() ? 1 : 0);
      return;
    }
    case Kind::kTensor:
      return;
  }
}

// One record of a message's wire bytes.
struct Record {
  int number = 0;
  int wire_type = 0;
  size_t begin = 0, content = 0, end = 0;  // the record, its content (length-delimited), its end
};

uint64_t read_varint(std::string_view w, size_t& pos) {
  uint64_t v = 0;
  for (int shift = 0; pos < w.size() && shift < 64; shift += 7) {
    auto b = static_cast<uint8_t>(w[pos++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw SaveError("internal error: malformed varint in the serialized model");
}

Record read_record(std::string_view w, size_t pos) {
  Record r;
  r.begin = pos;
  uint64_t tag = read_varint(w, pos);
  r.number = static_cast<int>(tag >> 3);
  r.wire_type = static_cast<int>(tag & 7);
  switch (r.wire_type) {
    case kVarint:
      read_varint(w, pos);
      break;
    case kFixed64:
      pos += 8;
      break;
    case kLengthDelimited: {
      uint64_t len = read_varint(w, pos);
      r.content = pos;
      pos += len;
      break;
    }
    case kFixed32:
      pos += 4;
      break;
    default:
      throw SaveError(fmt::format("internal error: wire type {} in the serialized model", r.wire_type));
  }
  if (pos > w.size()) throw SaveError("internal error: a record runs past its message");
  r.end = pos;
  return r;
}

}  // namespace

// Gathers small pieces into blocks; passes large spans on as they are.
class BlockWriter {
 public:
  BlockWriter(const ByteSink& sink, size_t block) : sink_(sink), block_(block) { buf_.reserve(block + 64); }

  void varint(uint64_t v) {
    for (; v >= 0x80; v >>= 7) buf_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    buf_.push_back(static_cast<char>(v));
  }
  void tag(int number, int wire_type) { varint((static_cast<uint64_t>(number) << 3) | wire_type); }
  void bytes(std::span<const std::byte> b) {
    if (b.size() < block_ / 8) {
      buf_.append(reinterpret_cast<const char*>(b.data()), b.size());
      if (buf_.size() >= block_) flush();
      return;
    }
    flush();
    written_ += b.size();
    sink_(b);
  }
  void bytes(std::string_view s) { bytes(std::as_bytes(std::span(s.data(), s.size()))); }
  void flush() {
    if (buf_.empty()) return;
    written_ += buf_.size();
    sink_(std::as_bytes(std::span(buf_.data(), buf_.size())));
    buf_.clear();
  }
  // Bytes handed on so far; the buffer counts once flushed.
  size_t written() const { return written_; }

 private:
  const ByteSink& sink_;
  size_t block_;
  std::string buf_;
  size_t written_ = 0;
};

StreamedModel::StreamedModel(const onnx_pb::ModelProto& proto, const DeferredBytes& deferred)
    : proto_(proto), deferred_(deferred) {
  if (!proto_.SerializeToString(&skeleton_)) throw SaveError("cannot serialize the model");
  // SerializeToString cached every sub-message's size, which the scan reads.
  if (!deferred_.empty()) scan(proto_, Kind::kModel);
  if (found_ != deferred_.size()) {
    throw SaveError(fmt::format("internal error: {} of {} deferred tensors are not in the model",
                                deferred_.size() - found_, deferred_.size()));
  }
}

// Finds the deferred tensors beneath `m`; returns (and records) the bytes they add to its size.
size_t StreamedModel::scan(const MessageLite& m, Kind kind) {
  size_t extra = 0;
  if (kind == Kind::kTensor) {
    auto it = deferred_.find(static_cast<const onnx_pb::TensorProto*>(&m));
    if (it != deferred_.end()) {
      ++found_;
      extra = field_size(kRawDataField, it->second.size());
    }
  }
  for_each_child(m, kind, [&](const Child& c) {
    if (!c.message || found_ == deferred_.size()) return;
    size_t e = scan(*c.message, c.kind);
    if (e == 0) return;
    auto base = static_cast<size_t>(c.message->GetCachedSize());
    extra += e + varint_size(base + e) - varint_size(base);
  });
  if (extra) extra_[&m] = extra;
  return extra;
}

void StreamedModel::write_message(std::string_view wire, const MessageLite& m, Kind kind,
                                  BlockWriter& out) const {
  std::span<const std::byte> raw;
  bool raw_pending = false;
  if (kind == Kind::kTensor) {
    auto it = deferred_.find(static_cast<const onnx_pb::TensorProto*>(&m));
    if (it != deferred_.end()) raw = it->second, raw_pending = true;
  }
  auto put_raw = [&] {
    out.tag(kRawDataField, kLengthDelimited);
    out.varint(raw.size());
    out.bytes(raw);
    raw_pending = false;
  };
  std::unordered_map<int, int> seen;  // field number -> records of it so far
  size_t copy_from = 0;               // start of the records still to copy as they are
  for (size_t pos = 0; pos < wire.size();) {
    Record r = read_record(wire, pos);
    pos = r.end;
    // Protobuf writes known fields in number order and unknown ones after them; every number up to 9
    // is a known TensorProto field, so raw_data goes before the first record numbered above it.
    if (raw_pending && r.number > kRawDataField) {
      out.bytes(wire.substr(copy_from, r.begin - copy_from));
      copy_from = r.begin;
      put_raw();
    }
    if (r.wire_type != kLengthDelimited) continue;
    Child c = child(m, kind, r.number, seen[r.number]++);
    if (!c.message) continue;
    size_t extra = extra_of(c.message);
    if (extra == 0) continue;
    out.bytes(wire.substr(copy_from, r.begin - copy_from));
    out.tag(r.number, kLengthDelimited);
    out.varint(r.end - r.content + extra);
    write_message(wire.substr(r.content, r.end - r.content), *c.message, c.kind, out);
    copy_from = r.end;
  }
  out.bytes(wire.substr(copy_from));
  if (raw_pending) put_raw();
}

void StreamedModel::write(const ByteSink& sink, size_t block) const {
  BlockWriter out(sink, block);
  if (extra_.empty()) {
    out.bytes(skeleton_);
  } else {
    write_message(skeleton_, proto_, Kind::kModel, out);
  }
  out.flush();
  if (out.written() != size()) {
    throw SaveError(fmt::format("internal error: wrote {} bytes of a {}-byte model", out.written(), size()));
  }
}

}  // namespace tessera::onnx::detail
