// Element types of tensors, numbered as in the ONNX IR so values pass through files unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera::ir {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};

inline constexpr int32_t kMaxDataType = 26;

// True for the values above; anything else read from a file is an unknown type.
bool is_valid_dtype(int32_t v);

// The name used in ONNX type strings: "float", "int64", "float16", "bfloat16", "float8e4m3fn"...
std::string_view dtype_name(DataType t);
std::optional<DataType> dtype_from_name(std::string_view name);

// Storage width of one element in bits (4 and 2 for the packed sub-byte types, 0 for strings and
// undefined).
int dtype_bits(DataType t);

bool dtype_is_float(DataType t);  // any floating point type, including the 8- and 4-bit ones
bool dtype_is_signed_int(DataType t);
bool dtype_is_unsigned_int(DataType t);
inline bool dtype_is_int(DataType t) {
  return dtype_is_signed_int(t) || dtype_is_unsigned_int(t);
}

}  // namespace tessera::ir
