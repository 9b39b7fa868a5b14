// From a run-time DataType to the C++ element type a templated kernel is instantiated with:
//
//   dispatch(kFloatTypes, x.dtype(), "Relu", [&]<class T>() { relu<T>(x, y); });
//
// An element type outside the list throws KernelError naming the op and the type.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/half.h"
#include "runtime/kernel.h"

namespace tessera::rt {

template <class T>
struct dtype_of_t;
#define TESSERA_DTYPE_OF(T, D)                     \
  template <>                                      \
  struct dtype_of_t<T> {                           \
    static constexpr DataType value = DataType::D; \
  }
TESSERA_DTYPE_OF(float, kFloat);
TESSERA_DTYPE_OF(double, kDouble);
TESSERA_DTYPE_OF(Float16, kFloat16);
TESSERA_DTYPE_OF(BFloat16, kBFloat16);
TESSERA_DTYPE_OF(int8_t, kInt8);
TESSERA_DTYPE_OF(int16_t, kInt16);
TESSERA_DTYPE_OF(int32_t, kInt32);
TESSERA_DTYPE_OF(int64_t, kInt64);
TESSERA_DTYPE_OF(uint8_t, kUint8);
TESSERA_DTYPE_OF(uint16_t, kUint16);
TESSERA_DTYPE_OF(uint32_t, kUint32);
TESSERA_DTYPE_OF(uint64_t, kUint64);
TESSERA_DTYPE_OF(bool, kBool);
TESSERA_DTYPE_OF(std::string, kString);
#undef TESSERA_DTYPE_OF
template <class T>
inline constexpr DataType dtype_of = dtype_of_t<T>::value;

template <class... Ts>
struct TypeList {};

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using NumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                              uint16_t, uint32_t, uint64_t>;
using NumericBoolTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                                  uint8_t, uint16_t, uint32_t, uint64_t, bool>;
// Every type with a C++ element; sub-byte and float8 types are handled byte-wise where needed.
using AllTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                          uint16_t, uint32_t, uint64_t, bool, std::string>;

[[noreturn]] void throw_unsupported_dtype(std::string_view what, DataType dt);

template <class... Ts, class F>
void dispatch(TypeList<Ts...>, DataType dt, std::string_view what, F&& f) {
  bool done = ((dt == dtype_of<Ts> ? (f.template operator()<Ts>(), true) : false) || ...);
  if (!done) throw_unsupported_dtype(what, dt);
}

}  // namespace tessera::rt
