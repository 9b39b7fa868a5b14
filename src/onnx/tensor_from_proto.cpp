// TensorProto -> ir::Tensor: whichever field holds the data, the result is dense little-endian bytes
// in one Buffer (sub-byte types packed), checked against the shape.
#include <fmt/format.h>

#include <bit>
#include <cstring>

#include "onnx/convert.h"
#include "onnx/external_data.h"

namespace tessera::onnx::detail {

static_assert(
    std::endian::native == std::endian::little,
    "tensor bytes are stored little-endian, as in ONNX raw_data; a big-endian host needs swaps here");

using ir::DataType;

std::string tensor_label(std::string_view name, std::string_view where) {
  if (where.empty()) return fmt::format("tensor '{}'", name);
  return fmt::format("tensor '{}' ({})", name, where);
}

std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

namespace {

enum class Field { kNone, kRaw, kFloat, kInt32, kString, kInt64, kDouble, kUint64 };

std::string_view field_name(Field f) {
  switch (f) {
    case Field::kRaw:
      return "raw_data";
    case Field::kFloat:
      return "float_data";
    case Field::kInt32:
      return "int32_data";
    case Field::kString:
      return "string_data";
    case Field::kInt64:
      return "int64_data";
    case Field::kDouble:
      return "double_data";
    case Field::kUint64:
      return "uint64_data";
    case Field::kNone:
      break;
  }
  return "no field";
}

// The one data field in use; more than one is refused since which one wins would be a guess.
Field data_field(const onnx_pb::TensorProto& p, const std::string& label, bool stripped_raw = false) {
  Field found = stripped_raw ? Field::kRaw : Field::kNone;
  auto see = [&](bool present, Field f) {
    if (!present) return;
    if (found != Field::kNone) {
      throw LoadError(fmt::format("{} has data in both {} and {}", label, field_name(found), field_name(f)));
    }
    found = f;
  };
  see(p.has_raw_data(), Field::kRaw);
  see(p.float_data_size() > 0, Field::kFloat);
  see(p.int32_data_size() > 0, Field::kInt32);
  see(p.string_data_size() > 0, Field::kString);
  see(p.int64_data_size() > 0, Field::kInt64);
  see(p.double_data_size() > 0, Field::kDouble);
  see(p.uint64_data_size() > 0, Field::kUint64);
  return found;
}

// Entries the typed field must hold for `n` elements (0 when the field cannot hold this type): the
// spec stores complex numbers as two entries and sub-byte types one packed byte per int32 entry.
int64_t entries_needed(Field f, const ir::Tensor& t, int64_t n) {
  DataType d = t.dtype;
  switch (f) {
    case Field::kFloat:
      if (d == DataType::kFloat) return n;
      return d == DataType::kComplex64 ? 2 * n : 0;
    case Field::kDouble:
      if (d == DataType::kDouble) return n;
      return d == DataType::kComplex128 ? 2 * n : 0;
    case Field::kInt64:
      return d == DataType::kInt64 ? n : 0;
    case Field::kUint64:
      return d == DataType::kUint32 || d == DataType::kUint64 ? n : 0;
    case Field::kString:
      return d == DataType::kString ? n : 0;
    case Field::kInt32:
      if (d == DataType::kString || d == DataType::kInt64 || d == DataType::kUint32 ||
          d == DataType::kUint64 || d == DataType::kFloat || d == DataType::kDouble ||
          d == DataType::kComplex64 || d == DataType::kComplex128) {
        return 0;
      }
      return ir::dtype_bits(d) < 8 ? *t.expected_bytes() : n;
    default:
      return 0;
  }
}

template <class T>
std::string bytes_of(const T* data, size_t count) {
  return std::string(reinterpret_cast<const char*>(data), count * sizeof(T));
}

// Each int32 entry holds one element (or one packed byte) in its low bits.
template <class Narrow>
std::string narrow_int32(const google::protobuf::RepeatedField<int32_t>& v, bool to_bool = false) {
  std::string out(v.size() * sizeof(Narrow), '\0');
  char* dst = out.data();
  for (int32_t x : v) {
    Narrow n = static_cast<Narrow>(to_bool ? x != 0 : x);
    std::memcpy(dst, &n, sizeof n);
    dst += sizeof n;
  }
  return out;
}

std::string typed_bytes(Field f, onnx_pb::TensorProto& p, DataType d) {
  switch (f) {
    case Field::kFloat:
      return bytes_of(p.float_data().data(), p.float_data_size());
    case Field::kDouble:
      return bytes_of(p.double_data().data(), p.double_data_size());
    case Field::kInt64:
      return bytes_of(p.int64_data().data(), p.int64_data_size());
    case Field::kUint64: {
      if (d == DataType::kUint64) return bytes_of(p.uint64_data().data(), p.uint64_data_size());
      std::string out(p.uint64_data_size() * sizeof(uint32_t), '\0');
      char* dst = out.data();
      for (uint64_t x : p.uint64_data()) {
        auto n = static_cast<uint32_t>(x);
        std::memcpy(dst, &n, sizeof n);
        dst += sizeof n;
      }
      return out;
    }
    case Field::kInt32: {
      if (d == DataType::kInt32) return bytes_of(p.int32_data().data(), p.int32_data_size());
      if (d == DataType::kBool) return narrow_int32<uint8_t>(p.int32_data(), true);
      if (ir::dtype_bits(d) == 16) return narrow_int32<uint16_t>(p.int32_data());
      return narrow_int32<uint8_t>(p.int32_data());  // 8-bit types and packed sub-byte bytes
    }
    default:
      return {};
  }
}

void check_shape(ir::Tensor& t, const std::string& label) {
  for (int64_t d : t.dims) {
    if (d < 0)
      throw LoadError(fmt::format("{} has a negative dimension in shape {}", label, dims_string(t.dims)));
  }
  bool overflow = !t.numel() || (t.dtype != DataType::kString && !t.expected_bytes());
  if (overflow)
    throw LoadError(fmt::format("dimensions of {} overflow int64: {}", label, dims_string(t.dims)));
}

void load_inline(onnx_pb::TensorProto& p, ir::Tensor& t, const std::string& label, ir::BufferPtr raw) {
  Field f = data_field(p, label, raw != nullptr);
  int64_t n = *t.numel();
  auto type = [&] { return fmt::format("shape {} of {}", dims_string(t.dims), ir::dtype_name(t.dtype)); };
  if (f == Field::kNone) {
    if (n == 0) return;
    throw LoadError(fmt::format("{} has no data but {} needs {} elements", label, type(), n));
  }
  if (f == Field::kRaw) {
    if (t.dtype == DataType::kString)
      throw LoadError(fmt::format("{}: string tensors cannot use raw_data", label));
    int64_t need = *t.expected_bytes();
    size_t have = raw ? raw->bytes().size() : p.raw_data().size();
    if (static_cast<int64_t>(have) != need) {
      throw LoadError(fmt::format("{}: raw_data has {} bytes but {} needs {}", label, have, type(), need));
    }
    // Moving the string hands its heap block over: the weights are not copied again.
    t.data = raw ? std::move(raw) : ir::make_buffer(std::move(*p.mutable_raw_data()));
    return;
  }
  int64_t need = entries_needed(f, t, n);
  if (need == 0 && n > 0) {
    throw LoadError(
        fmt::format("{}: {} cannot hold {} values", label, field_name(f), ir::dtype_name(t.dtype)));
  }
  int64_t have = 0;
  switch (f) {
    case Field::kFloat:
      have = p.float_data_size();
      break;
    case Field::kInt32:
      have = p.int32_data_size();
      break;
    case Field::kString:
      have = p.string_data_size();
      break;
    case Field::kInt64:
      have = p.int64_data_size();
      break;
    case Field::kDouble:
      have = p.double_data_size();
      break;
    case Field::kUint64:
      have = p.uint64_data_size();
      break;
    default:
      break;
  }
  if (have != need) {
    throw LoadError(
        fmt::format("{}: {} has {} values but {} needs {}", label, field_name(f), have, type(), need));
  }
  if (f == Field::kString) {
    t.strings.reserve(p.string_data_size());
    for (std::string& s : *p.mutable_string_data()) t.strings.push_back(std::move(s));
    return;
  }
  t.data = ir::make_buffer(typed_bytes(f, p, t.dtype));
}

void load_external(onnx_pb::TensorProto& p, ir::Tensor& t, const std::string& label, LoadContext& ctx,
                   bool stripped_raw) {
  Field f = data_field(p, label, stripped_raw);
  if (f != Field::kNone) {
    throw LoadError(fmt::format("{} is stored as external data but also has {}", label, field_name(f)));
  }
  if (t.dtype == DataType::kString) {
    throw LoadError(fmt::format("{}: string tensors cannot be stored as external data", label));
  }
  t.external = parse_external_data(p, label);
  int64_t need = *t.expected_bytes();
  if (t.external->length >= 0 && t.external->length != need) {
    throw LoadError(fmt::format("{}: external data in '{}' has length {} but shape {} of {} needs {} bytes",
                                label, t.external->location, t.external->length, dims_string(t.dims),
                                ir::dtype_name(t.dtype), need));
  }
  if (!ctx.options.load_external_data) {
    if (ctx.options.external_data_problems && ctx.external) {
      std::string problem = ctx.external->problem(label, *t.external, need);
      if (!problem.empty()) ctx.options.external_data_problems->push_back(std::move(problem));
    }
    return;
  }
  if (!ctx.external) {
    throw LoadError(fmt::format(
        "{} is stored in external file '{}', but the model was loaded from memory without a base folder",
        label, t.external->location));
  }
  t.data = ctx.external->read(label, *t.external, need);
}

}  // namespace

ir::Tensor tensor_from_proto(onnx_pb::TensorProto& p, std::string_view where, LoadContext& ctx,
                             ir::BufferPtr raw) {
  ir::Tensor t;
  t.name = p.name();
  const std::string label = tensor_label(t.name, where);
  if (!ir::is_valid_dtype(p.data_type())) {
    throw LoadError(fmt::format("{} has unknown data_type {}", label, p.data_type()));
  }
  t.dtype = static_cast<DataType>(p.data_type());
  if (t.dtype == DataType::kUndefined) throw LoadError(fmt::format("{} has no data_type", label));
  t.dims.assign(p.dims().begin(), p.dims().end());
  check_shape(t, label);
  t.doc_string = p.doc_string();
  for (const auto& e : p.metadata_props()) t.metadata_props.emplace_back(e.key(), e.value());
  if (p.has_segment()) t.segment = std::make_pair(p.segment().begin(), p.segment().end());
  t.unknown_fields = p.unknown_fields();

  // data_location is an int32 in our schema: 0 DEFAULT, 1 EXTERNAL.
  if (p.data_location() == 1) {
    load_external(p, t, label, ctx, raw != nullptr);
  } else if (p.data_location() != 0) {
    throw LoadError(fmt::format("{} has unknown data_location {}", label, p.data_location()));
  } else if (p.external_data_size() > 0) {
    throw LoadError(fmt::format("{} has external_data keys but its data_location is not EXTERNAL", label));
  } else {
    load_inline(p, t, label, std::move(raw));
  }
  return t;
}

}  // namespace tessera::onnx::detail
