// Reference kernels of Cast, CastLike and BitCast.
//
// Between the types with a C++ element (numbers, bool) Cast is a templated loop per pair of types.
// Everything else (strings, the float8 and float4 types, the packed 4- and 2-bit integers) goes through
// an intermediate Num per element, which keeps both a double and an exact int64 so that neither a large
// integer nor a float loses anything on the way.
//
// Conversion rules: float -> integer truncates toward zero, NaN gives 0, values beyond int64 clamp to it
// and the result wraps to the target's width (what ONNX Runtime gives for in-range values and for the
// small integer types, int4 and int2 included); float -> float8 follows the saturate attribute (see
// float8_kernel_util.h); number -> string writes "%.8g" for float types ("%.17g" for double), "NaN",
// "INF", "-INF"; string -> number accepts what strtod does (decimal, "INF", "NaN", hex) and fails on
// anything else.
#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "ops/tensor/float8_kernel_util.h"
#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace f8 = tessera::ops::float8;
namespace rt = tessera::rt;
namespace ir = tessera::ir;

using NumTypes = rt::NumericBoolTypes;

template <class T>
inline constexpr bool is_float_v = rt::is_float_v<T>;

// A double beyond int64 clamps; NaN gives 0.
inline int64_t double_to_int64(double d) {
  if (std::isnan(d)) return 0;
  d = std::trunc(d);
  if (d >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (d < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

template <class To>
To float_to_int(double d) {
  if constexpr (std::is_same_v<To, uint64_t>) {
    if (d >= 18446744073709551616.0) return std::numeric_limits<uint64_t>::max();
    if (d >= 9223372036854775808.0) return static_cast<uint64_t>(std::trunc(d));
  }
  return static_cast<To>(double_to_int64(d));  // wraps to narrower types (modular since C++20)
}

template <class From, class To>
To convert(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<rt::compute_t<From>>(x) != 0;
  } else if constexpr (is_float_v<To>) {
    if constexpr (std::is_same_v<From, rt::Float16> || std::is_same_v<From, rt::BFloat16>)
      return To(static_cast<float>(x));
    else if constexpr (std::is_same_v<To, rt::Float16> || std::is_same_v<To, rt::BFloat16>)
      return To(static_cast<float>(x));
    else
      return static_cast<To>(x);
  } else if constexpr (is_float_v<From>) {
    return float_to_int<To>(static_cast<double>(static_cast<rt::compute_t<From>>(x)));
  } else {
    return static_cast<To>(x);
  }
}

// One element on its way between two types that are not both C++ numbers.
struct Num {
  double d = 0;
  int64_t i = 0;
  bool integral = false;  // i is exact (an integer or bool source); else d is
  bool big = false;       // a uint64 beyond int64: the value is i's bits read as uint64
  static Num of_int(int64_t v) { return {static_cast<double>(v), v, true, false}; }
  static Num of_uint(uint64_t v) {
    return {static_cast<double>(v), static_cast<int64_t>(v), true, v > static_cast<uint64_t>(INT64_MAX)};
  }
  static Num of_double(double v) { return {v, double_to_int64(v), false, false}; }
};

Num parse_string(const std::string& s, bool want_int, bool want_bool) {
  if (want_bool) {
    // Besides numbers, bool accepts the words numpy writes for it.
    std::string w;
    for (char c : s) w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (w == "true") return Num::of_int(1);
    if (w == "false") return Num::of_int(0);
  }
  const char* b = s.c_str();
  char* end = nullptr;
  auto rest_blank = [&] {
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') ++end;
    return *end == '\0';
  };
  if (want_int) {
    errno = 0;
    long long v = std::strtoll(b, &end, 10);
    if (end != b && errno == 0 && rest_blank()) return Num::of_int(v);
    errno = 0;
    unsigned long long u = std::strtoull(b, &end, 10);
    if (end != b && errno == 0 && rest_blank() && s.find('-') == std::string::npos) return Num::of_uint(u);
  }
  double v = std::strtod(b, &end);
  if (end == b || !rest_blank())
    throw rt::KernelError(fmt::format("Cast: cannot parse string \"{}\" as a number", s));
  return Num::of_double(v);
}

std::string format_double(double d, bool is_double) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d < 0 ? "-INF" : "INF";
  char buf[64];
  std::snprintf(buf, sizeof(buf), is_double ? "%.17g" : "%.8g", d);
  return buf;
}

// Element i of a tensor of any type, as a Num.
class NumReader {
 public:
  NumReader(const Tensor& t, DataType to)
      : t_(t),
        dt_(t.dtype()),
        want_int_(ir::dtype_is_int(to) || to == DataType::kBool),
        want_bool_(to == DataType::kBool) {
    if (is_packed(dt_)) codes_ = unpack_codes(t);
  }
  Num operator()(int64_t i) const {
    switch (dt_) {
      case DataType::kString:
        return parse_string(t_.data<std::string>()[i], want_int_, want_bool_);
      case DataType::kFloat8E8M0:
        return Num::of_double(f8::e8m0_to_float(byte(i)));
      case DataType::kInt4:
        return Num::of_int(sign_extend(codes_[i], 4));
      case DataType::kInt2:
        return Num::of_int(sign_extend(codes_[i], 2));
      case DataType::kUint4:
      case DataType::kUint2:
        return Num::of_int(codes_[i]);
      case DataType::kUint64:
        return Num::of_uint(t_.data<uint64_t>()[i]);
      default:
        break;
    }
    if (const f8::MiniFloat* f = f8::minifloat_of(dt_)) {
      uint8_t code = is_packed(dt_) ? codes_[i] : byte(i);
      return Num::of_double(f8::decode(*f, code));
    }
    if (ir::dtype_is_float(dt_)) return Num::of_double(t_.to_double(i));
    return Num::of_int(t_.to_int64(i));
  }

 private:
  uint8_t byte(int64_t i) const { return static_cast<const uint8_t*>(t_.raw())[i]; }
  static int64_t sign_extend(uint8_t code, int bits) {
    return (code & (1u << (bits - 1))) ? static_cast<int64_t>(code) - (int64_t{1} << bits) : code;
  }
  const Tensor& t_;
  DataType dt_;
  bool want_int_;
  bool want_bool_;
  std::vector<uint8_t> codes_;
};

struct CastOptions {
  bool saturate = true;
  f8::E8M0Round round = f8::E8M0Round::kUp;
};

// Writes Nums into a tensor of any type (packed types collect codes, stored by finish()).
class NumWriter {
 public:
  NumWriter(Tensor& t, CastOptions opt) : t_(t), dt_(t.dtype()), opt_(opt) {
    if (is_packed(dt_)) codes_.assign(static_cast<size_t>(t.numel()), 0);
  }
  void set(int64_t i, const Num& n) {
    if (is_packed(dt_)) {
      codes_[i] = packed_code(n);
      return;
    }
    if (const f8::MiniFloat* f = f8::minifloat_of(dt_)) {
      byte(i) = f8::encode(*f, n.d, opt_.saturate);
      return;
    }
    if (dt_ == DataType::kFloat8E8M0) {
      byte(i) = f8::float_to_e8m0(static_cast<float>(n.d), opt_.saturate, opt_.round);
      return;
    }
    if (dt_ == DataType::kString) {
      std::string& out = t_.data<std::string>()[i];
      if (n.big)
        out = fmt::format("{}", static_cast<uint64_t>(n.i));
      else
        out = n.integral ? fmt::format("{}", n.i) : format_double(n.d, false);
      return;
    }
    rt::dispatch(NumTypes{}, dt_, "Cast", [&]<class T>() {
      T* out = t_.data<T>();
      if (n.big)
        out[i] = convert<uint64_t, T>(static_cast<uint64_t>(n.i));
      else if (n.integral && !std::is_same_v<T, bool>)
        out[i] = convert<int64_t, T>(n.i);
      else if (n.integral)
        out[i] = n.i != 0;
      else
        out[i] = convert<double, T>(n.d);
    });
  }
  void finish() {
    if (is_packed(dt_)) pack_codes(codes_.data(), t_);
  }

 private:
  uint8_t& byte(int64_t i) { return static_cast<uint8_t*>(t_.raw())[i]; }
  uint8_t packed_code(const Num& n) const {
    if (dt_ == DataType::kFloat4E2M1) return f8::encode(f8::kE2M1, n.d, true);
    // Integers wrap to the width, like the wider integer types.
    int64_t v = n.integral ? n.i : double_to_int64(n.d);
    return static_cast<uint8_t>(static_cast<uint64_t>(v) & 0xFFu);
  }
  Tensor& t_;
  DataType dt_;
  CastOptions opt_;
  std::vector<uint8_t> codes_;
};

bool has_cxx_number(DataType dt) {
  switch (dt) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kBool:
      return true;
    default:
      return false;
  }
}

void cast_number_to_string(KernelContext& ctx, const Tensor& x, Tensor& y) {
  std::string* out = y.data<std::string>();
  rt::dispatch(NumTypes{}, x.dtype(), "Cast", [&]<class T>() {
    const T* in = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if constexpr (std::is_same_v<T, bool>)
        out[i].assign(1, in[i] ? '1' : '0');
      else if constexpr (is_float_v<T>)
        out[i] = format_double(static_cast<double>(static_cast<rt::compute_t<T>>(in[i])),
                               std::is_same_v<T, double>);
      else
        out[i] = fmt::format("{}", in[i]);
    }
  });
  (void)ctx;
}

void cast_tensor(KernelContext& ctx, const Tensor& x, DataType to, CastOptions opt) {
  Tensor& y = ctx.output(0, to, x.shape());
  const int64_t n = x.numel();
  if (x.dtype() == to && to != DataType::kString) {
    if (n > 0) std::memcpy(y.raw(), x.raw(), x.nbytes());
    return;
  }
  if (has_cxx_number(x.dtype()) && has_cxx_number(to)) {
    rt::dispatch(NumTypes{}, x.dtype(), "Cast", [&]<class From>() {
      rt::dispatch(NumTypes{}, to, "Cast", [&]<class To>() {
        const From* in = x.data<From>();
        To* out = y.data<To>();
        ctx.threads().parallel_for(n, 16384, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) out[i] = convert<From, To>(in[i]);
        });
      });
    });
    return;
  }
  if (has_cxx_number(x.dtype()) && to == DataType::kString) return cast_number_to_string(ctx, x, y);
  if (x.dtype() == DataType::kString && to == DataType::kString) {
    std::copy(x.data<std::string>(), x.data<std::string>() + n, y.data<std::string>());
    return;
  }
  NumReader read(x, to);
  NumWriter write(y, opt);
  for (int64_t i = 0; i < n; ++i) write.set(i, read(i));
  write.finish();
}

CastOptions read_options(const rt::KernelInfo& info) {
  CastOptions o;
  o.saturate = info.get_int("saturate", 1) != 0;
  std::string mode = info.get_string("round_mode", "up");
  bool ok = false;
  o.round = f8::e8m0_round_mode(mode, &ok);
  if (!ok)
    throw rt::KernelError(
        fmt::format("attribute 'round_mode' is '{}'; expected 'up', 'down' or 'nearest'", mode));
  return o;
}

DataType target_of(const rt::KernelInfo& info) {
  if (info.since_version() < 6) {
    std::string name = info.get_string("to");
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (auto t = ir::dtype_from_name(name)) return *t;
    throw rt::KernelError(
        fmt::format("attribute 'to' is '{}', not a known data type", info.get_string("to")));
  }
  int64_t to = info.get_int("to");
  if (to <= 0 || !ir::is_valid_dtype(static_cast<int32_t>(to)))
    throw rt::KernelError(fmt::format("attribute 'to' is {}, not a known data type", to));
  return static_cast<DataType>(to);
}

void check_castable(DataType dt, std::string_view what) {
  if (dt == DataType::kComplex64 || dt == DataType::kComplex128 || dt == DataType::kUndefined)
    throw rt::KernelError(fmt::format("Cast does not support {} type {}", what, ir::dtype_name(dt)));
}

class Cast : public rt::OpKernel {
 public:
  explicit Cast(const rt::KernelInfo& info) : to_(target_of(info)), opt_(read_options(info)) {
    check_castable(to_, "target");
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check_castable(x.dtype(), "input");
    cast_tensor(ctx, x, to_, opt_);
  }

 private:
  DataType to_;
  CastOptions opt_;
};

class CastLike : public rt::OpKernel {
 public:
  explicit CastLike(const rt::KernelInfo& info) : opt_(read_options(info)) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    DataType to = ctx.input(1).dtype();
    check_castable(x.dtype(), "input");
    check_castable(to, "target");
    cast_tensor(ctx, x, to, opt_);
  }

 private:
  CastOptions opt_;
};

class BitCast : public rt::OpKernel {
 public:
  explicit BitCast(const rt::KernelInfo& info) : to_(target_of(info)) {
    if (to_ == DataType::kString) throw rt::KernelError("BitCast: attribute 'to' cannot be string");
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() == DataType::kString) ctx.fail("BitCast: input cannot be a string tensor");
    int a = ir::dtype_bits(x.dtype()), b = ir::dtype_bits(to_);
    if (a != b)
      ctx.fail(fmt::format("BitCast: cannot reinterpret {} ({} bits) as {} ({} bits)",
                           ir::dtype_name(x.dtype()), a, ir::dtype_name(to_), b));
    if (to_ != DataType::kBool) {
      // Same bits, another type: share the storage.
      ctx.set_output(0, Tensor(to_, x.shape(), x.storage(), x.device()));
      return;
    }
    // A bool must be 0 or 1 to be read safely: any non-zero byte becomes true.
    Tensor& y = ctx.output(0, to_, x.shape());
    const uint8_t* in = static_cast<const uint8_t*>(x.raw());
    bool* out = y.data<bool>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] != 0;
  }

 private:
  DataType to_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_cast) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<Cast>("Cast"));
  reg.add(KernelDef::of<CastLike>("CastLike"));
  reg.add(KernelDef::of<BitCast>("BitCast"));
}
