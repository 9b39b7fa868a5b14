// Reference kernels of BitwiseAnd/Or/Xor/Not and BitShift. Shifts by a negative amount or by the
// element width or more are defined as the spec's tests do: a left shift gives 0, a right shift the
// sign fill (0, or -1 for a negative signed element). Left shifts of signed values wrap.
#include <type_traits>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::rt::IntTypes;
using tessera::rt::KernelInfo;
using tessera::rt::OpKernel;

void bitwise_and(KernelContext& ctx) {
  binary_map<IntTypes>(ctx, [](auto a, auto b) { return a & b; });
}
void bitwise_or(KernelContext& ctx) {
  binary_map<IntTypes>(ctx, [](auto a, auto b) { return a | b; });
}
void bitwise_xor(KernelContext& ctx) {
  binary_map<IntTypes>(ctx, [](auto a, auto b) { return a ^ b; });
}
void bitwise_not(KernelContext& ctx) {
  unary_map<IntTypes>(ctx, [](auto x) { return static_cast<decltype(x)>(~x); });
}

// x < 0 without a comparison that -Wtype-limits flags for unsigned types.
template <class T>
bool negative(T x) {
  if constexpr (std::is_signed_v<T>)
    return x < 0;
  else
    return false;
}

template <class T>
T shift_left(T x, T by) {
  constexpr uint64_t kBits = sizeof(T) * 8;
  if (negative(by) || static_cast<uint64_t>(by) >= kBits) return T(0);
  using U = wrap_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(x) << static_cast<int>(by)));
}

template <class T>
T shift_right(T x, T by) {
  constexpr uint64_t kBits = sizeof(T) * 8;
  if (negative(by) || static_cast<uint64_t>(by) >= kBits) return negative(x) ? T(-1) : T(0);
  return static_cast<T>(x >> static_cast<int>(by));  // arithmetic for signed types (C++20)
}

class BitShift : public OpKernel {
 public:
  explicit BitShift(const KernelInfo& info) {
    std::string direction = info.get_string("direction");
    if (direction != "LEFT" && direction != "RIGHT")
      throw tessera::rt::KernelError("BitShift: attribute 'direction' is '" + direction +
                                     "'; it must be 'LEFT' or 'RIGHT'");
    left_ = direction == "LEFT";
  }
  void compute(KernelContext& ctx) const override {
    binary_map<IntTypes>(ctx,
                         [this](auto x, auto by) { return left_ ? shift_left(x, by) : shift_right(x, by); });
  }

 private:
  bool left_ = true;
};

}  // namespace

TESSERA_REGISTER_KERNELS(math_bitwise) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("BitwiseAnd", bitwise_and));
  reg.add(KernelDef::fn("BitwiseOr", bitwise_or));
  reg.add(KernelDef::fn("BitwiseXor", bitwise_xor));
  reg.add(KernelDef::fn("BitwiseNot", bitwise_not));
  reg.add(KernelDef::of<BitShift>("BitShift"));
}
