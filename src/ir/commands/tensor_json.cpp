// Tensors as JSON: values, generated fills, .npy or raw bytes as base64 (see ir_json.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "io/npy.h"
#include "ir/commands/ir_json.h"
#include "ir/commands/json_float.h"
#include "ops/tensor/float8_kernel_util.h"
#include "runtime/half.h"

namespace tessera::ir {

namespace {

// Generated and decoded tensors are held in memory whole; this bounds what one request can ask for.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 30;

template <class F>
bool visit_numeric(DataType t, F&& f) {
  switch (t) {
    case DataType::kFloat:
      f(float{});
      return true;
    case DataType::kDouble:
      f(double{});
      return true;
    case DataType::kInt8:
      f(int8_t{});
      return true;
    case DataType::kInt16:
      f(int16_t{});
      return true;
    case DataType::kInt32:
      f(int32_t{});
      return true;
    case DataType::kInt64:
      f(int64_t{});
      return true;
    case DataType::kUint8:
      f(uint8_t{});
      return true;
    case DataType::kUint16:
      f(uint16_t{});
      return true;
    case DataType::kUint32:
      f(uint32_t{});
      return true;
    case DataType::kUint64:
      f(uint64_t{});
      return true;
    case DataType::kBool:
      f(bool{});
      return true;
    default:
      return false;
  }
}

// Element storage: bools are one byte each, as in ONNX tensors (std::vector<bool> has no data()).
template <class T>
using Storage = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

bool has_json_values(DataType t) {
  return t == DataType::kString || visit_numeric(t, [](auto) {});
}

// Types the tensor editor shows and takes as JSON numbers, though whole tensors of them travel as raw
// bytes (exactly, NaN payloads included): the 16-bit floats and the 4-bit integers.
bool is_half(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kBFloat16;
}
bool is_nibble(DataType t) {
  return t == DataType::kInt4 || t == DataType::kUint4;
}
// The float8 types and float4e2m1 (packed two to a byte like int4): shown and taken as numbers too.
const ops::float8::MiniFloat* minifloat(DataType t) {
  return ops::float8::minifloat_of(t);
}
bool is_packed(DataType t) {
  return dtype_bits(t) == 4;
}
// float8e8m0, an exponent alone (2^(code - 127), 0xFF NaN, no sign, no zero): shown and taken as numbers.
bool is_e8m0(DataType t) {
  return t == DataType::kFloat8E8M0;
}

double float_value(const json& v, const std::string& what) {
  return json_float_value(v, what);
}
json float_json(double x) {
  return json_float(x);
}

template <class T>
Tensor tensor_of(const Tensor& like, const std::vector<T>& values) {
  Tensor t;
  t.name = like.name;
  t.dtype = like.dtype;
  t.dims = like.dims;
  t.data = make_buffer(std::span<const std::byte>(reinterpret_cast<const std::byte*>(values.data()),
                                                  values.size() * sizeof(T)));
  return t;
}

template <class T>
T number_as(const json& v, const std::string& what) {
  if constexpr (std::is_same_v<T, bool>) {
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))
      return v.get<int64_t>() == 1;
    throw JsonError(fmt::format("{} must be true, false, 0 or 1", what));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(float_value(v, what));
  } else {
    if (!v.is_number_integer()) throw JsonError(fmt::format("{} must be an integer", what));
    bool fits = v.is_number_unsigned()
                    ? v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
                    : v.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                          (std::is_unsigned_v<T> ||
                           v.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max()));
    if (!fits) throw JsonError(fmt::format("{} ({}) is out of range for the tensor's type", what, v.dump()));
    return v.is_number_unsigned() ? static_cast<T>(v.get<uint64_t>()) : static_cast<T>(v.get<int64_t>());
  }
}

// `where` is the prefix before the tensor is named ("command 1: ").
void check_size(const Tensor& t, const std::string& where) {
  std::optional<int64_t> n = t.numel();
  std::optional<int64_t> bytes = t.dtype == DataType::kString ? n : t.expected_bytes();
  if (!n || !bytes) {
    throw JsonError(
        fmt::format("{}tensor '{}': dimensions [{}] overflow", where, t.name, fmt::join(t.dims, ", ")));
  }
  if (*bytes > kMaxTensorBytes) {
    throw JsonError(fmt::format("{}tensor '{}' would take {} bytes; the studio accepts at most {}", where,
                                t.name, *bytes, kMaxTensorBytes));
  }
}

// float16 / bfloat16 from numbers (rounded to nearest even); a finite value beyond float16's range is
// refused rather than made infinite.
Tensor half_from_values(const Tensor& like, const json& values, const std::string& where) {
  bool bf16 = like.dtype == DataType::kBFloat16;
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    std::string what = fmt::format("{}'values'[{}]", where, i);
    double x = float_value(values[i], what);
    float f = static_cast<float>(x);
    bits[i] = bf16 ? rt::float_to_bf16_bits(f) : rt::float_to_half_bits(f);
    float back = bf16 ? rt::bf16_bits_to_float(bits[i]) : rt::half_bits_to_float(bits[i]);
    if (std::isfinite(x) && !std::isfinite(back)) {
      throw JsonError(fmt::format("{} ({}) is out of range for {} (largest finite {})", what, x,
                                  dtype_name(like.dtype), bf16 ? "3.39e38" : "65504"));
    }
  }
  return tensor_of(like, bits);
}

// int4 / uint4 from integers in [-8, 7] / [0, 15], packed two to a byte, low nibble first.
Tensor nibbles_from_values(const Tensor& like, const json& values, const std::string& where) {
  bool is_signed = like.dtype == DataType::kInt4;
  int64_t lo = is_signed ? -8 : 0, hi = is_signed ? 7 : 15;
  std::vector<uint8_t> packed((values.size() + 1) / 2, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    const json& v = values[i];
    std::string what = fmt::format("{}'values'[{}]", where, i);
    if (!v.is_number_integer()) throw JsonError(fmt::format("{} must be an integer", what));
    bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(hi)
                                       : v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    if (!fits) {
      throw JsonError(fmt::format("{} ({}) is out of range for {} [{}, {}]", what, v.dump(),
                                  dtype_name(like.dtype), lo, hi));
    }
    auto nib = static_cast<uint8_t>(v.get<int64_t>() & 0x0f);
    packed[i / 2] |= static_cast<uint8_t>(i % 2 ? nib << 4 : nib);
  }
  return tensor_of(like, packed);
}

// The code of `x` in a float8 type or float4e2m1, as the ONNX Cast with saturate=1 (its default) gives it:
// rounded to nearest even, finite values beyond the largest finite one saturated to it. Where the type
// has an infinity (float8e5m2) an infinity stays one, so that a value read from the tensor writes back
// the same; elsewhere it saturates too. A NaN becomes the type's NaN; float4e2m1 has none, so it is
// refused.
uint8_t minifloat_code(DataType t, const ops::float8::MiniFloat& f, double x, const std::string& what) {
  if (std::isnan(x) && !f.has_nan)
    throw JsonError(fmt::format("{} is NaN; {} has no NaN", what, dtype_name(t)));
  if (std::isinf(x) && f.has_inf) return ops::float8::encode(f, x, /*saturate=*/false);
  return ops::float8::encode(f, x, /*saturate=*/true);
}

Tensor minifloats_from_values(const Tensor& like, const json& values, const std::string& where) {
  const ops::float8::MiniFloat& f = *minifloat(like.dtype);
  bool packed = is_packed(like.dtype);
  std::vector<uint8_t> codes(packed ? (values.size() + 1) / 2 : values.size(), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    std::string what = fmt::format("{}'values'[{}]", where, i);
    uint8_t c = minifloat_code(like.dtype, f, float_value(values[i], what), what);
    if (packed) {
      codes[i / 2] |= static_cast<uint8_t>(i % 2 ? c << 4 : c);
    } else {
      codes[i] = c;
    }
  }
  return tensor_of(like, codes);
}

// The float8e8m0 code of a typed `x`, as Cast to it gives it with its defaults (round_mode "up": a value
// between two powers of two becomes the larger; saturate=1: beyond 2^127, infinity included, 2^127, and
// below 2^-127 the smallest value, 2^-127). Rounded from the exact value (a double), so 2^-127 itself,
// a float subnormal, stays code 0 and every value read from a tensor writes back as its code. NaN is
// 0xFF. The type has no sign and no zero: a negative value or zero is refused rather than stored as
// something else.
uint8_t e8m0_code(double x, const std::string& what) {
  if (std::isnan(x)) return 0xFF;
  if (std::signbit(x)) {
    throw JsonError(
        fmt::format("{} ({}) is negative; float8e8m0 has no sign (its values are the powers of "
                    "two 2^-127 to 2^127)",
                    what, x));
  }
  if (x == 0) {
    throw JsonError(
        fmt::format("{} is 0; float8e8m0 has no zero (its smallest value is 2^-127, about 5.9e-39)", what));
  }
  if (std::isinf(x)) return 0xFE;
  int e2 = 0;
  double m = std::frexp(x, &e2);  // x = m * 2^e2, m in [0.5, 1)
  int e = e2 - 1;                 // floor(log2(x))
  if (m != 0.5) ++e;              // not a power of two: up to the next one
  if (e < -127) return 0;
  if (e > 127) return 0xFE;
  return static_cast<uint8_t>(e + 127);
}

Tensor e8m0_from_values(const Tensor& like, const json& values, const std::string& where) {
  std::vector<uint8_t> codes(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    std::string what = fmt::format("{}'values'[{}]", where, i);
    codes[i] = e8m0_code(float_value(values[i], what), what);
  }
  return tensor_of(like, codes);
}

Tensor from_values(const Tensor& like, const json& values, const std::string& where) {
  if (!values.is_array()) throw JsonError(fmt::format("{}'values' must be an array", where));
  int64_t n = *like.numel();
  if (static_cast<int64_t>(values.size()) != n) {
    throw JsonError(fmt::format("{}'values' has {} elements; shape [{}] needs {}", where, values.size(),
                                fmt::join(like.dims, ", "), n));
  }
  if (like.dtype == DataType::kString) {
    Tensor t = like;
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].is_string()) throw JsonError(fmt::format("{}'values'[{}] must be a string", where, i));
      t.strings.push_back(values[i].get<std::string>());
    }
    return t;
  }
  if (is_half(like.dtype)) return half_from_values(like, values, where);
  if (is_nibble(like.dtype)) return nibbles_from_values(like, values, where);
  if (minifloat(like.dtype)) return minifloats_from_values(like, values, where);
  if (is_e8m0(like.dtype)) return e8m0_from_values(like, values, where);
  Tensor out;
  bool ok = visit_numeric(like.dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<Storage<T>> v(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      v[i] = number_as<T>(values[i], fmt::format("{}'values'[{}]", where, i));
    out = tensor_of(like, v);
  });
  if (!ok) {
    throw JsonError(
        fmt::format("{}'values' cannot give a tensor of type {}; use 'npy_base64' or 'raw_base64'", where,
                    dtype_name(like.dtype)));
  }
  return out;
}

Tensor from_fill(const Tensor& like, const json& fill, const std::string& where);

// A float16 / bfloat16 fill: the float32 fill of the same seed, rounded to nearest even.
Tensor half_fill(const Tensor& like, const json& fill, const std::string& where) {
  Tensor as_float = like;
  as_float.dtype = DataType::kFloat;
  Tensor f = from_fill(as_float, fill, where);
  std::span<const std::byte> b = f.bytes();
  std::vector<uint16_t> bits(b.size() / 4);
  bool bf16 = like.dtype == DataType::kBFloat16;
  for (size_t i = 0; i < bits.size(); ++i) {
    float x;
    std::memcpy(&x, b.data() + 4 * i, 4);
    bits[i] = bf16 ? rt::float_to_bf16_bits(x) : rt::float_to_half_bits(x);
  }
  return tensor_of(like, bits);
}

// The one-byte float8 types and the 4-bit types: zeros only, as the seed allows (standard normal values
// need a floating point type of two bytes or more, random integers an integer type of a byte or more).
// Zero is code 0 in every one of them.
Tensor small_type_fill(const Tensor& like, const std::string& kind, const std::string& w) {
  if (kind != "zeros") {
    throw JsonError(
        fmt::format("{}'{}' cannot fill a tensor of type {} (it stores {} bits an element): only "
                    "'zeros' can",
                    w, kind, dtype_name(like.dtype), dtype_bits(like.dtype)));
  }
  std::vector<uint8_t> zeros(static_cast<size_t>(*like.expected_bytes()), 0);
  return tensor_of(like, zeros);
}

Tensor from_fill(const Tensor& like, const json& fill, const std::string& where) {
  std::string w = where + "'fill': ";
  std::string kind = string_field(fill, "kind", w);
  uint64_t seed = fill.contains("seed") ? index_field(fill, "seed", w) : 0;
  std::mt19937_64 rng(seed);
  int64_t n = *like.numel();
  if (like.dtype == DataType::kString) throw JsonError(fmt::format("{}string tensors cannot be filled", w));
  if (is_nibble(like.dtype) || minifloat(like.dtype)) return small_type_fill(like, kind, w);
  if (is_e8m0(like.dtype)) {
    throw JsonError(
        fmt::format("{}float8e8m0 has no zero and no generator: type its values (powers of two, "
                    "2^-127 to 2^127)",
                    w));
  }
  if (kind.starts_with("uniform_int_") && is_half(like.dtype)) {
    throw JsonError(fmt::format("{}'{}' needs an integer type of a byte or more, not {}", w, kind,
                                dtype_name(like.dtype)));
  }
  if (is_half(like.dtype)) return half_fill(like, fill, where);
  Tensor out;
  bool ok = visit_numeric(like.dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<Storage<T>> v(static_cast<size_t>(n), Storage<T>{});
    if (kind == "zeros") {
    } else if (kind == "normal") {
      if constexpr (!std::is_floating_point_v<T>) {
        throw JsonError(
            fmt::format("{}'normal' needs a floating point type, not {}", w, dtype_name(like.dtype)));
      } else {
        std::normal_distribution<double> d(0.0, 1.0);
        for (auto& x : v) x = static_cast<T>(d(rng));
      }
    } else if (kind == "uniform_int_pos" || kind == "uniform_int_neg") {
      bool neg = kind == "uniform_int_neg";
      if constexpr (std::is_same_v<T, bool> || std::is_floating_point_v<T>) {
        throw JsonError(fmt::format("{}'{}' needs an integer type of a byte or more, not {}", w, kind,
                                    dtype_name(like.dtype)));
      } else {
        if (neg && std::is_unsigned_v<T>) {
          throw JsonError(
              fmt::format("{}'uniform_int_neg' needs a signed type, not {}", w, dtype_name(like.dtype)));
        }
        // Every positive (negative) value of the type alike, zero excluded, as the seed says; the
        // 64-bit types up to 2^53 - 1, what the browser's numbers hold exactly (the tensor editor
        // reads and writes them as JSON numbers).
        constexpr auto kExact = int64_t{1} << 53;
        auto hi = static_cast<int64_t>(std::min<uint64_t>(std::numeric_limits<T>::max(), kExact - 1));
        auto lo = static_cast<int64_t>(std::max<int64_t>(std::numeric_limits<T>::min(), 1 - kExact));
        std::uniform_int_distribution<int64_t> d(neg ? lo : 1, neg ? -1 : hi);
        for (auto& x : v) x = static_cast<T>(d(rng));
      }
    } else {
      throw JsonError(fmt::format(
          "{}'kind' '{}' is not one of zeros, normal, uniform_int_pos, uniform_int_neg", w, kind));
    }
    out = tensor_of(like, v);
  });
  if (!ok) throw JsonError(fmt::format("{}a tensor of type {} cannot be filled", w, dtype_name(like.dtype)));
  return out;
}

Tensor from_npy(Tensor like, bool have_dtype, bool have_shape, const json& text, const std::string& where) {
  if (!text.is_string()) throw JsonError(fmt::format("{}'npy_base64' must be a string", where));
  std::string bytes = base64_decode(text.get<std::string>(), where + "'npy_base64': ");
  Tensor t;
  try {
    t = io::parse_npy(std::as_bytes(std::span(bytes.data(), bytes.size())), like.name);
  } catch (const io::NpyError& e) {
    throw JsonError(fmt::format("{}'npy_base64': {}", where, e.what()));
  }
  if (have_dtype && t.dtype != like.dtype) {
    throw JsonError(
        fmt::format("{}the .npy data is {}, not {}", where, dtype_name(t.dtype), dtype_name(like.dtype)));
  }
  if (have_shape && t.dims != like.dims) {
    throw JsonError(fmt::format("{}the .npy data has shape [{}], not [{}]", where, fmt::join(t.dims, ", "),
                                fmt::join(like.dims, ", ")));
  }
  return t;
}

Tensor from_raw(const Tensor& like, const json& text, const std::string& where) {
  if (!text.is_string()) throw JsonError(fmt::format("{}'raw_base64' must be a string", where));
  if (like.dtype == DataType::kString)
    throw JsonError(fmt::format("{}string tensors have no raw bytes", where));
  std::string bytes = base64_decode(text.get<std::string>(), where + "'raw_base64': ");
  if (static_cast<int64_t>(bytes.size()) != *like.expected_bytes()) {
    throw JsonError(fmt::format("{}'raw_base64' holds {} bytes; the tensor needs {}", where, bytes.size(),
                                *like.expected_bytes()));
  }
  Tensor t = like;
  t.data = make_buffer(std::move(bytes));
  return t;
}

}  // namespace

double json_float_value(const json& v, const std::string& what) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "nan" || s == "+nan" || s == "-nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf" || s == "+inf" || s == "infinity") return std::numeric_limits<double>::infinity();
    if (s == "-inf" || s == "-infinity") return -std::numeric_limits<double>::infinity();
  }
  throw JsonError(fmt::format("{} must be a number, \"nan\", \"inf\" or \"-inf\"", what));
}

json json_float(double x) {
  if (std::isfinite(x)) return x;
  return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
}

json tensor_values_json(const Tensor& t, size_t limit, size_t offset) {
  json out = json::array();
  if (t.dtype == DataType::kString) {
    for (size_t i = offset; i < t.strings.size() && i - offset < limit; ++i) out.push_back(t.strings[i]);
    return out;
  }
  std::span<const std::byte> b = t.bytes();
  if (is_half(t.dtype)) {
    bool bf16 = t.dtype == DataType::kBFloat16;
    size_t count = b.size() / 2;
    for (size_t i = offset; i < count && i - offset < limit; ++i) {
      uint16_t bits;
      std::memcpy(&bits, b.data() + 2 * i, 2);
      out.push_back(float_json(bf16 ? rt::bf16_bits_to_float(bits) : rt::half_bits_to_float(bits)));
    }
    return out;
  }
  if (is_nibble(t.dtype)) {
    size_t count = static_cast<size_t>(t.numel().value_or(0));
    if (b.size() * 2 < count) return out;  // bytes not loaded
    for (size_t i = offset; i < count && i - offset < limit; ++i) {
      int v = (static_cast<uint8_t>(b[i / 2]) >> (i % 2 ? 4 : 0)) & 0x0f;
      out.push_back(t.dtype == DataType::kInt4 && v >= 8 ? v - 16 : v);
    }
    return out;
  }
  if (const ops::float8::MiniFloat* f = minifloat(t.dtype)) {
    bool packed = is_packed(t.dtype);
    size_t count = static_cast<size_t>(t.numel().value_or(0));
    if ((packed ? b.size() * 2 : b.size()) < count) return out;  // bytes not loaded
    for (size_t i = offset; i < count && i - offset < limit; ++i) {
      auto byte = static_cast<uint8_t>(b[packed ? i / 2 : i]);
      uint8_t code = packed ? (byte >> (i % 2 ? 4 : 0)) & 0x0f : byte;
      out.push_back(float_json(ops::float8::decode(*f, code)));
    }
    return out;
  }
  if (is_e8m0(t.dtype)) {
    size_t count = std::min(b.size(), static_cast<size_t>(t.numel().value_or(0)));
    for (size_t i = offset; i < count && i - offset < limit; ++i)
      out.push_back(float_json(ops::float8::e8m0_to_float(static_cast<uint8_t>(b[i]))));
    return out;
  }
  visit_numeric(t.dtype, [&](auto zero) {
    using T = decltype(zero);
    using S = Storage<T>;
    size_t count = b.size() / sizeof(S);
    size_t n = offset >= count ? offset : offset + std::min(limit, count - offset);
    for (size_t i = offset; i < n; ++i) {
      S raw;
      std::memcpy(&raw, b.data() + i * sizeof(S), sizeof(S));
      T x = static_cast<T>(raw);
      if constexpr (std::is_floating_point_v<T>) {
        out.push_back(float_json(x));
      } else {
        out.push_back(x);
      }
    }
  });
  return out;
}

json tensor_to_json(const Tensor& t, size_t max_values) {
  json j{{"name", t.name}, {"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.dims}};
  std::optional<int64_t> n = t.numel();
  std::optional<int64_t> bytes = t.expected_bytes();
  if (bytes) j["bytes"] = *bytes;
  // Bytes still in their external file: the reference, not the values (they are not loaded).
  if (t.external && !t.data) {
    j["external"] = {{"location", t.external->location}, {"offset", t.external->offset}};
    if (t.external->length >= 0) j["external"]["length"] = t.external->length;
    return j;
  }
  if (!n) return j;
  // Previews (a limit given) also write the 16-bit floats, the 4-bit integers, the float8 types (e8m0
  // too) and float4e2m1 as numbers, which the tensor editor takes back; whole tensors of them travel as
  // raw bytes, exactly. Values with a NaN or an infinity (strings in JSON) are left out of the graph
  // answer.
  bool preview = max_values != SIZE_MAX &&
                 (is_half(t.dtype) || is_nibble(t.dtype) || minifloat(t.dtype) || is_e8m0(t.dtype));
  if (static_cast<uint64_t>(*n) <= max_values && (has_json_values(t.dtype) || preview)) {
    json v = tensor_values_json(t, static_cast<size_t>(*n));
    bool finite = t.dtype == DataType::kString ||
                  std::none_of(v.begin(), v.end(), [](const json& x) { return x.is_string(); });
    if (finite) {
      j["values"] = std::move(v);
      return j;
    }
  }
  if (max_values != SIZE_MAX || t.dtype == DataType::kString) return j;
  std::span<const std::byte> b = t.bytes();
  j["raw_base64"] = base64_encode(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
  return j;
}

// {"location": "weights.bin", "offset"?: 0, "length"?: N}: the bytes stay in a file beside the model
// (the studio checks the file and the range against the saved model's folder before the command runs;
// saving copies them). length, when given, must be what the shape needs.
namespace {
Tensor from_external(Tensor like, const json& e, const std::string& w) {
  if (!e.is_object())
    throw JsonError(fmt::format("{}'external' must be an object {{location, offset, length}}", w));
  ExternalData ext;
  ext.location = string_field(e, "location", w + "'external': ");
  if (ext.location.empty()) throw JsonError(fmt::format("{}'external': 'location' is empty", w));
  for (const char* key : {"offset", "length"}) {
    if (!e.contains(key)) continue;
    if (!e[key].is_number_integer() || e[key].get<int64_t>() < 0)
      throw JsonError(fmt::format("{}'external': '{}' must be a non-negative integer", w, key));
  }
  ext.offset = e.value("offset", int64_t{0});
  ext.length = e.value("length", int64_t{-1});
  std::optional<int64_t> need = like.expected_bytes();
  if (like.dtype == DataType::kString) throw JsonError(fmt::format("{}string tensors cannot be external", w));
  if (ext.length >= 0 && need && ext.length != *need) {
    throw JsonError(fmt::format("{}'external': 'length' is {} bytes; {}{} needs {}", w, ext.length,
                                dtype_name(like.dtype), fmt::format("[{}]", fmt::join(like.dims, ", ")),
                                *need));
  }
  like.external = std::move(ext);
  return like;
}
}  // namespace

Tensor tensor_from_json(const json& j, const std::string& where) {
  Tensor like;
  like.name = string_field(j, "name", where);
  std::string w = fmt::format("{}tensor '{}': ", where, like.name);
  bool have_dtype = j.contains("dtype"), have_shape = j.contains("shape");
  if (have_dtype) {
    std::string name = string_field(j, "dtype", w);
    std::optional<DataType> dt = dtype_from_name(name);
    if (!dt || *dt == DataType::kUndefined)
      throw JsonError(fmt::format("{}'dtype' '{}' is not a data type", w, name));
    like.dtype = *dt;
  }
  if (have_shape) {
    const json& s = j["shape"];
    if (!s.is_array()) throw JsonError(fmt::format("{}'shape' must be an array of non-negative integers", w));
    for (size_t i = 0; i < s.size(); ++i) {
      if (!s[i].is_number_integer() || (!s[i].is_number_unsigned() && s[i].get<int64_t>() < 0) ||
          (s[i].is_number_unsigned() && s[i].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
        throw JsonError(fmt::format("{}'shape'[{}] must be a non-negative integer", w, i));
      }
      like.dims.push_back(s[i].get<int64_t>());
    }
  }
  if (j.contains("npy_base64")) return from_npy(like, have_dtype, have_shape, j["npy_base64"], w);
  if (!have_dtype) throw JsonError(fmt::format("{}'dtype' is missing", w));
  if (!have_shape) throw JsonError(fmt::format("{}'shape' is missing", w));
  check_size(like, where);
  if (j.contains("external")) return from_external(like, j["external"], w);
  if (j.contains("values")) return from_values(like, j["values"], w);
  if (j.contains("raw_base64")) return from_raw(like, j["raw_base64"], w);
  if (j.contains("fill")) return from_fill(like, j["fill"], w);
  return from_fill(like, json{{"kind", "zeros"}}, w);
}

}  // namespace tessera::ir
