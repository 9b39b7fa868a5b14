// The CUDA backend's typed data kernels: Cast, CastLike, the comparisons (bool outputs), And/Or/Xor/Not,
// IsNaN/IsInf, CumSum and integer arithmetic (Add/Sub/Mul/Div/Mod/Max/Min, BitShift, Bitwise*), which
// the shape computations of exported models run on int64.
#include <fmt/format.h>

#include <array>
#include <optional>

#include "backends/cuda/data_cast.h"
#include "backends/cuda/data_typed.h"
#include "backends/cuda/data_util.h"
#include "backends/cuda/kernel_util.h"
#include "ops/tensor/float8_kernel_util.h"
#include "runtime/broadcast.h"

namespace tessera::cuda {

namespace {

using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

ScalarType type_of(const KernelContext& ctx, rt::DataType t) {
  auto s = scalar_type(t);
  if (!s) ctx.fail(fmt::format("the CUDA kernel does not take {}", ir::dtype_name(t)));
  return *s;
}

// The layout of a float8 type (not the packed float4e2m1); nullopt for the others.
std::optional<MiniFloatLayout> float8_layout(rt::DataType t) {
  if (t == rt::DataType::kFloat4E2M1) return std::nullopt;
  const ops::float8::MiniFloat* m = ops::float8::minifloat_of(t);
  if (!m) return std::nullopt;
  return MiniFloatLayout{m->exp_bits, m->mant_bits, m->bias, m->has_inf,
                         m->uz,       m->has_nan,   m->max,  m->nan_code};
}

bool float_or_double(rt::DataType t) {
  return t == rt::DataType::kFloat || t == rt::DataType::kFloat16 || t == rt::DataType::kBFloat16 ||
         t == rt::DataType::kDouble;
}

// One side of a cast that is not a float8 <-> float pair the direct kernels take: a number type or one
// of the small types (float8, float4e2m1, float8e8m0, the packed 4- and 2-bit integers); nullopt for
// strings and complex types.
std::optional<CastSide> cast_side(rt::DataType t) {
  CastSide s;
  if (auto k = scalar_type(t)) {
    s.scalar = *k;
    return s;
  }
  if (auto m = ops::float8::minifloat_of(t)) {
    s.kind = CastSide::Kind::kMiniFloat;
    s.mini = MiniFloatLayout{m->exp_bits, m->mant_bits, m->bias, m->has_inf,
                             m->uz,       m->has_nan,   m->max,  m->nan_code};
    s.bits = ir::dtype_bits(t);
    return s;
  }
  switch (t) {
    case rt::DataType::kFloat8E8M0:
      s.kind = CastSide::Kind::kE8M0;
      return s;
    case rt::DataType::kInt4:
    case rt::DataType::kInt2:
      s.kind = CastSide::Kind::kInt;
      s.bits = ir::dtype_bits(t);
      return s;
    case rt::DataType::kUint4:
    case rt::DataType::kUint2:
      s.kind = CastSide::Kind::kUint;
      s.bits = ir::dtype_bits(t);
      return s;
    default:
      return std::nullopt;
  }
}

std::optional<E8M0Rounding> e8m0_rounding(const std::string& mode) {
  if (mode == "up") return E8M0Rounding::kUp;
  if (mode == "down") return E8M0Rounding::kDown;
  if (mode == "nearest") return E8M0Rounding::kNearest;
  return std::nullopt;
}

// Cast and CastLike between the scalar types, between the float types and float8 (saturate from 19),
// and between any number type and the small types (through launch_cast_small).
class Cast : public rt::OpKernel {
 public:
  explicit Cast(const rt::KernelInfo& info)
      : to_(target(info)),
        saturate_(info.get_int("saturate", 1) != 0),
        round_(e8m0_rounding(info.get_string("round_mode", "up")).value_or(E8M0Rounding::kUp)) {}
  // Cast's 'to'; CastLike's second input's type.
  static rt::DataType target(const rt::KernelInfo& info) {
    if (info.op_type() == "CastLike") return info.input_dtype(1);
    return static_cast<rt::DataType>(info.get_int("to", 0));
  }
  static bool supports(const rt::KernelInfo& info) {
    if (!all_tensors(info) || !info.has_input(0)) return false;
    if (info.op_type() == "CastLike" && !info.has_input(1)) return false;
    if (!e8m0_rounding(info.get_string("round_mode", "up"))) return false;  // the CPU names the bad mode
    const rt::DataType from = info.input_dtype(0), to = target(info);
    return cast_side(from) && cast_side(to);
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output_uninitialized(0, to_, x.shape());
    const auto f8_to = float8_layout(to_), f8_from = float8_layout(x.dtype());
    if (x.dtype() == to_) {  // the bits as they are (a float8 NaN keeps its code)
      if (x.nbytes() > 0)
        check(cudaMemcpyAsync(y.raw(), x.raw(), x.nbytes(), cudaMemcpyDeviceToDevice, native(ctx.stream())),
              "cudaMemcpyAsync");
    } else if (f8_to && float_or_double(x.dtype())) {
      launch_cast_to_float8(type_of(ctx, x.dtype()), x.raw(), static_cast<uint8_t*>(y.raw()), x.numel(),
                            *f8_to, saturate_, native(ctx.stream()));
    } else if (f8_from && float_or_double(to_)) {
      launch_cast_from_float8(static_cast<const uint8_t*>(x.raw()), type_of(ctx, to_), y.raw(), x.numel(),
                              *f8_from, native(ctx.stream()));
    } else if (scalar_type(x.dtype()) && scalar_type(to_)) {
      launch_cast(type_of(ctx, x.dtype()), type_of(ctx, to_), x.raw(), y.raw(), x.numel(),
                  native(ctx.stream()));
    } else {
      auto from = cast_side(x.dtype()), to = cast_side(to_);
      if (!from || !to)
        ctx.fail(fmt::format("the CUDA Cast does not take {} to {}", ir::dtype_name(x.dtype()),
                             ir::dtype_name(to_)));
      launch_cast_small(*from, *to, x.raw(), y.raw(), x.numel(), saturate_, round_, native(ctx.stream()));
    }
    check_launch(ctx);
  }

 private:
  rt::DataType to_;
  bool saturate_;
  E8M0Rounding round_;
};

// Two inputs of one type broadcast to the output's shape.
struct Binary {
  Shape out;
  Broadcast3 layout;
};

Binary binary_layout(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    ctx.fail(fmt::format("inputs A ({}) and B ({}) must have one element type", ir::dtype_name(a.dtype()),
                         ir::dtype_name(b.dtype())));
  Binary r;
  r.out = rt::broadcast_shapes(a.shape(), b.shape());
  r.layout = broadcast3(r.out, {&a.shape(), &b.shape()});
  return r;
}

class Compare : public rt::OpKernel {
 public:
  explicit Compare(CompareOp op) : op_(op) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Binary l = binary_layout(ctx, a, b);
    Tensor& y = ctx.output_uninitialized(0, rt::DataType::kBool, l.out);
    launch_compare(op_, type_of(ctx, a.dtype()), a.raw(), b.raw(), static_cast<bool*>(y.raw()), y.numel(),
                   l.layout, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  CompareOp op_;
};

void logical_not(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output_uninitialized(0, rt::DataType::kBool, x.shape());
  launch_not(static_cast<const bool*>(x.raw()), static_cast<bool*>(y.raw()), x.numel(), native(ctx.stream()));
  check_launch(ctx);
}

class IsSpecial : public rt::OpKernel {
 public:
  explicit IsSpecial(const rt::KernelInfo& info)
      : nan_(info.op_type() == "IsNaN"),
        pos_(info.get_int("detect_positive", 1) != 0),
        neg_(info.get_int("detect_negative", 1) != 0) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output_uninitialized(0, rt::DataType::kBool, x.shape());
    launch_is_special(type_of(ctx, x.dtype()), nan_, pos_, neg_, x.raw(), static_cast<bool*>(y.raw()),
                      x.numel(), native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  bool nan_, pos_, neg_;
};

class CumSum : public rt::OpKernel {
 public:
  explicit CumSum(const rt::KernelInfo& info)
      : exclusive_(info.get_int("exclusive", 0) != 0),
        reverse_(info.get_int("reverse", 0) != 0),
        product_(info.op_type() == "CumProd") {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& a = ctx.input(1);
    if (a.numel() != 1 || !ir::dtype_is_int(a.dtype())) ctx.fail("input 'axis' must be one integer");
    if (x.rank() == 0) ctx.fail("CumSum needs an input of rank 1 or more");
    const size_t axis = static_cast<size_t>(axis_of(a.to_int64(0), x.rank()));
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < x.shape().size(); ++d) {
      if (d < axis) outer *= x.shape()[d];
      if (d > axis) inner *= x.shape()[d];
    }
    Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
    launch_cumsum(type_of(ctx, x.dtype()), x.raw(), y.raw(), outer, x.shape()[axis], inner, exclusive_,
                  reverse_, product_, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  bool exclusive_, reverse_, product_;
};

class IntBinary : public rt::OpKernel {
 public:
  explicit IntBinary(IntOp op) : op_(op) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Binary l = binary_layout(ctx, a, b);
    Tensor& y = ctx.output_uninitialized(0, a.dtype(), l.out);
    launch_int_binary(op_, type_of(ctx, a.dtype()), a.raw(), b.raw(), y.raw(), y.numel(), l.layout,
                      native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  IntOp op_;
};

void bit_not(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
  launch_bit_not(type_of(ctx, x.dtype()), x.raw(), y.raw(), x.numel(), native(ctx.stream()));
  check_launch(ctx);
}

// Pow whose base is not a float of the exponent's type (those are the elementwise kernel's).
class PowMixed : public rt::OpKernel {
 public:
  static bool supports(const rt::KernelInfo& i) {
    if (!all_tensors(i) || i.input_count() != 2 || !i.has_input(1)) return false;
    const rt::DataType x = i.input_dtype(0), e = i.input_dtype(1);
    const bool base_ok = x == rt::DataType::kFloat || x == rt::DataType::kDouble ||
                         x == rt::DataType::kFloat16 || x == rt::DataType::kBFloat16 ||
                         x == rt::DataType::kInt32 || x == rt::DataType::kInt64;
    return base_ok && scalar_type(e) && e != rt::DataType::kBool;
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Shape out = rt::broadcast_shapes(a.shape(), b.shape());
    if (out != a.shape())
      ctx.fail(fmt::format("exponent {} does not broadcast to the base {}", rt::shape_str(b.shape()),
                           rt::shape_str(a.shape())));
    Broadcast3 l = broadcast3(out, {&a.shape(), &b.shape()});
    Tensor& y = ctx.output_uninitialized(0, a.dtype(), out);
    launch_pow_mixed(type_of(ctx, a.dtype()), type_of(ctx, b.dtype()), a.raw(), b.raw(), y.raw(), y.numel(),
                     l, native(ctx.stream()));
    check_launch(ctx);
  }
};

class DoubleBinary : public rt::OpKernel {
 public:
  explicit DoubleBinary(DoubleOp op) : op_(op) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Binary l = binary_layout(ctx, a, b);
    Tensor& y = ctx.output_uninitialized(0, a.dtype(), l.out);
    launch_double_binary(op_, static_cast<const double*>(a.raw()), static_cast<const double*>(b.raw()),
                         static_cast<double*>(y.raw()), y.numel(), l.layout, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  DoubleOp op_;
};

bool is_int(rt::DataType t) {
  auto s = scalar_type(t);
  return s && t != rt::DataType::kBool && ir::dtype_is_int(t);
}

// `count` inputs of one known element type accepted by `ok`.
bool same_inputs(const rt::KernelInfo& i, size_t count, bool (*ok)(rt::DataType)) {
  if (!all_tensors(i) || i.input_count() != count) return false;
  for (size_t k = 0; k < count; ++k)
    if (!i.has_input(k) || i.input_dtype(k) != i.input_dtype(0)) return false;
  return ok(i.input_dtype(0));
}

bool any_scalar(rt::DataType t) {
  return scalar_type(t).has_value();
}
bool is_bool(rt::DataType t) {
  return t == rt::DataType::kBool;
}
bool is_float(rt::DataType t) {
  return t == rt::DataType::kFloat || t == rt::DataType::kFloat16 || t == rt::DataType::kBFloat16 ||
         t == rt::DataType::kDouble;
}
bool numeric(rt::DataType t) {
  return scalar_type(t).has_value() && t != rt::DataType::kBool;
}

template <class K>
rt::KernelFactory make() {
  return [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<K>(i); };
}

rt::KernelFactory fn(rt::KernelFn f) {
  return [f](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<rt::FnKernel>(f); };
}

void register_compare(KernelTable& t) {
  struct Op {
    const char* name;
    CompareOp op;
    int since;
    bool (*ok)(rt::DataType);
  };
  const std::array<Op, 8> ops{{{"Equal", CompareOp::kEqual, 7, any_scalar},
                               {"Less", CompareOp::kLess, 7, numeric},
                               {"LessOrEqual", CompareOp::kLessOrEqual, 12, numeric},
                               {"Greater", CompareOp::kGreater, 7, numeric},
                               {"GreaterOrEqual", CompareOp::kGreaterOrEqual, 12, numeric},
                               {"And", CompareOp::kAnd, 7, is_bool},
                               {"Or", CompareOp::kOr, 7, is_bool},
                               {"Xor", CompareOp::kXor, 7, is_bool}}};
  for (const Op& o : ops) {
    auto ok = o.ok;
    CompareOp op = o.op;
    t.add(cuda_def(
        o.name, [ok](const rt::KernelInfo& i) { return same_inputs(i, 2, ok); },
        [op](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<Compare>(op); }, o.since));
  }
}

void register_int_arithmetic(KernelTable& t) {
  struct Op {
    const char* name;
    IntOp op;
    int since;
    bool (*ok)(rt::DataType);
  };
  const std::array<Op, 10> ops{{{"Add", IntOp::kAdd, 7, is_int},
                                {"Sub", IntOp::kSub, 7, is_int},
                                {"Mul", IntOp::kMul, 7, is_int},
                                {"Div", IntOp::kDiv, 7, is_int},
                                {"Max", IntOp::kMax, 12, is_int},
                                {"Min", IntOp::kMin, 12, is_int},
                                {"BitwiseAnd", IntOp::kBitAnd, 18, is_int},
                                {"BitwiseOr", IntOp::kBitOr, 18, is_int},
                                {"BitwiseXor", IntOp::kBitXor, 18, is_int},
                                {"BitShift", IntOp::kShl, 11, is_int}}};
  for (const Op& o : ops) {
    auto ok = o.ok;
    IntOp op = o.op;
    const bool shift = op == IntOp::kShl;
    t.add(cuda_def(
        o.name, [ok](const rt::KernelInfo& i) { return same_inputs(i, 2, ok); },
        [op, shift](const rt::KernelInfo& i) -> rt::KernelPtr {
          if (shift)
            return std::make_unique<IntBinary>(i.get_string("direction") == "LEFT" ? IntOp::kShl
                                                                                   : IntOp::kShr);
          return std::make_unique<IntBinary>(op);
        },
        o.since));
  }
  // Mod on integers: Python's sign (of the divisor) unless fmod=1.
  t.add(cuda_def(
      "Mod", [](const rt::KernelInfo& i) { return same_inputs(i, 2, is_int); },
      [](const rt::KernelInfo& i) -> rt::KernelPtr {
        return std::make_unique<IntBinary>(i.get_int("fmod", 0) == 1 ? IntOp::kFmod : IntOp::kMod);
      },
      10));
  t.add(cuda_def(
      "BitwiseNot", [](const rt::KernelInfo& i) { return same_inputs(i, 1, is_int); }, fn(bit_not), 18));
}

}  // namespace

void register_typed_kernels(KernelTable& t) {
  t.add(cuda_def("Cast", Cast::supports, make<Cast>(), 6));
  t.add(cuda_def("CastLike", Cast::supports, make<Cast>(), 15));
  register_compare(t);
  t.add(cuda_def(
      "Not", [](const rt::KernelInfo& i) { return same_inputs(i, 1, is_bool); }, fn(logical_not)));
  t.add(cuda_def(
      "IsNaN", [](const rt::KernelInfo& i) { return same_inputs(i, 1, is_float); }, make<IsSpecial>(), 9));
  t.add(cuda_def(
      "IsInf", [](const rt::KernelInfo& i) { return same_inputs(i, 1, is_float); }, make<IsSpecial>(), 10));
  auto cumulative_ok = [](const rt::KernelInfo& i) {
    return all_tensors(i) && i.has_input(0) && numeric(i.input_dtype(0)) && i.has_input(1);
  };
  t.add(cuda_def("CumSum", cumulative_ok, make<CumSum>(), 11), HostIo{{1}, {}});
  t.add(cuda_def("CumProd", cumulative_ok, make<CumSum>(), 26), HostIo{{1}, {}});
  register_int_arithmetic(t);
  auto two_doubles = [](const rt::KernelInfo& i) {
    return same_inputs(i, 2, [](rt::DataType d) { return d == rt::DataType::kDouble; });
  };
  for (auto [name, op] : {std::pair{"Add", DoubleOp::kAdd}, std::pair{"Sub", DoubleOp::kSub},
                          std::pair{"Mul", DoubleOp::kMul}, std::pair{"Div", DoubleOp::kDiv}}) {
    const DoubleOp d = op;
    t.add(cuda_def(
        name, two_doubles,
        [d](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<DoubleBinary>(d); }, 7));
  }
  t.add(cuda_def(
      "Max", two_doubles,
      [](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<DoubleBinary>(DoubleOp::kMax); },
      8));
  t.add(cuda_def(
      "Min", two_doubles,
      [](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<DoubleBinary>(DoubleOp::kMin); },
      8));
  t.add(cuda_def(
      "Mod", two_doubles,
      [](const rt::KernelInfo& i) -> rt::KernelPtr {
        return std::make_unique<DoubleBinary>(i.get_int("fmod", 0) == 1 ? DoubleOp::kFmod : DoubleOp::kMod);
      },
      10));
  t.add(cuda_def(
      "Pow", PowMixed::supports,
      [](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<PowMixed>(); }, 12));
}

}  // namespace tessera::cuda
