#include "onnx/data_value.h"

#include <fmt/format.h>

#include <climits>
#include <fstream>
#include <iterator>

#include "onnx/convert.h"
#include "util/atomic_file.h"

namespace tessera::onnx {

namespace {

using detail::LoadContext;

DataValue from_tensor(onnx_pb::TensorProto& p, std::string_view where, LoadContext& ctx) {
  DataValue v;
  v.kind = DataValue::Kind::kTensor;
  v.name = p.name();
  v.tensor = detail::tensor_from_proto(p, where, ctx);
  return v;
}

DataValue from_sequence(onnx_pb::SequenceProto& p, std::string_view where, LoadContext& ctx);
DataValue from_map(onnx_pb::MapProto& p, std::string_view where, LoadContext& ctx);

DataValue from_optional(onnx_pb::OptionalProto& p, std::string_view where, LoadContext& ctx) {
  DataValue v;
  v.kind = DataValue::Kind::kOptional;
  v.name = p.name();
  v.elem_type = p.elem_type();
  if (p.has_tensor_value()) v.items.push_back(from_tensor(*p.mutable_tensor_value(), where, ctx));
  if (p.has_sequence_value()) v.items.push_back(from_sequence(*p.mutable_sequence_value(), where, ctx));
  if (p.has_map_value()) v.items.push_back(from_map(*p.mutable_map_value(), where, ctx));
  if (p.has_optional_value()) v.items.push_back(from_optional(*p.mutable_optional_value(), where, ctx));
  if (v.items.size() > 1) throw LoadError(fmt::format("{}: optional holds more than one value", where));
  return v;
}

DataValue from_sequence(onnx_pb::SequenceProto& p, std::string_view where, LoadContext& ctx) {
  DataValue v;
  v.kind = DataValue::Kind::kSequence;
  v.name = p.name();
  v.elem_type = p.elem_type();
  for (auto& t : *p.mutable_tensor_values()) v.items.push_back(from_tensor(t, where, ctx));
  for (auto& s : *p.mutable_sequence_values()) v.items.push_back(from_sequence(s, where, ctx));
  for (auto& m : *p.mutable_map_values()) v.items.push_back(from_map(m, where, ctx));
  for (auto& o : *p.mutable_optional_values()) v.items.push_back(from_optional(o, where, ctx));
  return v;
}

DataValue from_map(onnx_pb::MapProto& p, std::string_view where, LoadContext& ctx) {
  DataValue v;
  v.kind = DataValue::Kind::kMap;
  v.name = p.name();
  if (p.key_type() == static_cast<int32_t>(ir::DataType::kString)) {
    v.keys.dtype = ir::DataType::kString;
    v.keys.strings.assign(p.string_keys().begin(), p.string_keys().end());
    v.keys.dims = {static_cast<int64_t>(v.keys.strings.size())};
  } else {
    std::vector<int64_t> keys(p.keys().begin(), p.keys().end());
    v.keys = ir::make_tensor("keys", ir::DataType::kInt64, {static_cast<int64_t>(keys.size())}, keys);
  }
  v.values.push_back(from_sequence(*p.mutable_values(), where, ctx));
  return v;
}

template <class Msg>
Msg parse_msg(std::span<const std::byte> bytes, std::string_view where, const char* what) {
  Msg m;
  if (bytes.size() > INT_MAX || !m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw LoadError(fmt::format("{}: not a valid {}", where, what));
  return m;
}

void to_tensor_proto(const ir::Tensor& t, onnx_pb::TensorProto* p) {
  p->set_name(t.name);
  p->set_data_type(static_cast<int32_t>(t.dtype));
  for (int64_t d : t.dims) p->add_dims(d);
  if (t.dtype == ir::DataType::kString) {
    for (const auto& s : t.strings) p->add_string_data(s);
    return;
  }
  auto b = t.bytes();
  p->set_raw_data(b.data(), b.size());
}

void to_sequence_proto(const DataValue& v, onnx_pb::SequenceProto* p);
void to_optional_proto(const DataValue& v, onnx_pb::OptionalProto* p);

void to_map_proto(const DataValue& v, onnx_pb::MapProto* p) {
  p->set_name(v.name);
  p->set_key_type(static_cast<int32_t>(v.keys.dtype));
  if (v.keys.dtype == ir::DataType::kString)
    for (const auto& s : v.keys.strings) p->add_string_keys(s);
  else
    for (int64_t k : v.keys.as<int64_t>()) p->add_keys(k);
  if (!v.values.empty()) to_sequence_proto(v.values[0], p->mutable_values());
}

void to_sequence_proto(const DataValue& v, onnx_pb::SequenceProto* p) {
  p->set_name(v.name);
  p->set_elem_type(v.elem_type);
  for (const auto& it : v.items) {
    switch (it.kind) {
      case DataValue::Kind::kTensor:
        to_tensor_proto(it.tensor, p->add_tensor_values());
        break;
      case DataValue::Kind::kSequence:
        to_sequence_proto(it, p->add_sequence_values());
        break;
      case DataValue::Kind::kMap:
        to_map_proto(it, p->add_map_values());
        break;
      case DataValue::Kind::kOptional:
        to_optional_proto(it, p->add_optional_values());
        break;
    }
  }
}

void to_optional_proto(const DataValue& v, onnx_pb::OptionalProto* p) {
  p->set_name(v.name);
  p->set_elem_type(v.elem_type);
  if (v.items.empty()) return;
  const DataValue& it = v.items[0];
  switch (it.kind) {
    case DataValue::Kind::kTensor:
      to_tensor_proto(it.tensor, p->mutable_tensor_value());
      break;
    case DataValue::Kind::kSequence:
      to_sequence_proto(it, p->mutable_sequence_value());
      break;
    case DataValue::Kind::kMap:
      to_map_proto(it, p->mutable_map_value());
      break;
    case DataValue::Kind::kOptional:
      to_optional_proto(it, p->mutable_optional_value());
      break;
  }
}

}  // namespace

DataValue parse_data_value(std::span<const std::byte> bytes, const ir::Type& type, std::string_view where) {
  LoadContext ctx;
  switch (type.kind) {
    case ir::Type::Kind::kSequence: {
      auto m = parse_msg<onnx_pb::SequenceProto>(bytes, where, "SequenceProto");
      return from_sequence(m, where, ctx);
    }
    case ir::Type::Kind::kOptional: {
      auto m = parse_msg<onnx_pb::OptionalProto>(bytes, where, "OptionalProto");
      return from_optional(m, where, ctx);
    }
    case ir::Type::Kind::kMap: {
      auto m = parse_msg<onnx_pb::MapProto>(bytes, where, "MapProto");
      return from_map(m, where, ctx);
    }
    default: {
      auto m = parse_msg<onnx_pb::TensorProto>(bytes, where, "TensorProto");
      return from_tensor(m, where, ctx);
    }
  }
}

ir::Tensor parse_tensor(std::span<const std::byte> bytes, std::string_view where) {
  return parse_data_value(bytes, ir::Type::tensor(ir::DataType::kUndefined), where).tensor;
}

DataValue read_data_value(const std::filesystem::path& file, const ir::Type& type) {
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw LoadError(fmt::format("cannot open '{}'", file.string()));
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  return parse_data_value(std::as_bytes(std::span(bytes)), type, file.string());
}

std::string serialize_data_value(const DataValue& v) {
  switch (v.kind) {
    case DataValue::Kind::kTensor: {
      onnx_pb::TensorProto p;
      to_tensor_proto(v.tensor, &p);
      return p.SerializeAsString();
    }
    case DataValue::Kind::kSequence: {
      onnx_pb::SequenceProto p;
      to_sequence_proto(v, &p);
      return p.SerializeAsString();
    }
    case DataValue::Kind::kMap: {
      onnx_pb::MapProto p;
      to_map_proto(v, &p);
      return p.SerializeAsString();
    }
    case DataValue::Kind::kOptional: {
      onnx_pb::OptionalProto p;
      to_optional_proto(v, &p);
      return p.SerializeAsString();
    }
  }
  return {};
}

void write_data_value(const DataValue& v, const std::filesystem::path& file) {
  std::string bytes = serialize_data_value(v);
  try {
    util::write_file_atomically(file, std::as_bytes(std::span(bytes)));
  } catch (const std::system_error& e) {
    throw SaveError(fmt::format("cannot write {}: {}", file.string(), e.what()));
  }
}

}  // namespace tessera::onnx
