#include "ir/dtype.h"

#include <array>

namespace tessera::ir {
namespace {

struct DtypeInfo {
  std::string_view name;
  int bits;
};

// Indexed by the enum value.
constexpr std::array<DtypeInfo, kMaxDataType + 1> kInfo = {{
    {"undefined", 0},      {"float", 32},    {"uint8", 8},        {"int8", 8},           {"uint16", 16},
    {"int16", 16},         {"int32", 32},    {"int64", 64},       {"string", 0},         {"bool", 8},
    {"float16", 16},       {"double", 64},   {"uint32", 32},      {"uint64", 64},        {"complex64", 64},
    {"complex128", 128},   {"bfloat16", 16}, {"float8e4m3fn", 8}, {"float8e4m3fnuz", 8}, {"float8e5m2", 8},
    {"float8e5m2fnuz", 8}, {"uint4", 4},     {"int4", 4},         {"float4e2m1", 4},     {"float8e8m0", 8},
    {"uint2", 2},          {"int2", 2},
}};

}  // namespace

bool is_valid_dtype(int32_t v) {
  return v >= 0 && v <= kMaxDataType;
}

std::string_view dtype_name(DataType t) {
  auto i = static_cast<int32_t>(t);
  return is_valid_dtype(i) ? kInfo[i].name : std::string_view("unknown");
}

std::optional<DataType> dtype_from_name(std::string_view name) {
  for (int32_t i = 1; i <= kMaxDataType; ++i) {
    if (kInfo[i].name == name) return static_cast<DataType>(i);
  }
  return std::nullopt;
}

int dtype_bits(DataType t) {
  auto i = static_cast<int32_t>(t);
  return is_valid_dtype(i) ? kInfo[i].bits : 0;
}

bool dtype_is_float(DataType t) {
  switch (t) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat4E2M1:
    case DataType::kFloat8E8M0:
      return true;
    default:
      return false;
  }
}

bool dtype_is_signed_int(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kInt4:
    case DataType::kInt2:
      return true;
    default:
      return false;
  }
}

bool dtype_is_unsigned_int(DataType t) {
  switch (t) {
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kUint4:
    case DataType::kUint2:
      return true;
    default:
      return false;
  }
}

}  // namespace tessera::ir
