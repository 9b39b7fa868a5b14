// Shared pieces of the QuantizeLinear / DequantizeLinear reference kernels: reading and writing the
// quantized element types (8/16/32-bit integers, packed int4/uint4/int2/uint2, the float8 types,
// float4e2m1 and float8e8m0, through ops/tensor/float8_kernel_util.h), and the mapping from an element
// of x to its scale / zero point (per tensor, per axis, or per block along the axis).
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "ops/reduce/reduce_kernel_util.h"
#include "ops/tensor/float8_kernel_util.h"

namespace tessera::ops::kernels {

// How a quantized element type is stored and what range it has.
struct QuantType {
  rt::DataType dt = rt::DataType::kUndefined;
  int bits = 8;                             // storage bits per element (4 and 2 are packed)
  bool is_int = true;                       // integer (else a small float)
  int64_t lo = 0, hi = 0;                   // integer range
  const float8::MiniFloat* mini = nullptr;  // float8 / float4e2m1
  bool e8m0 = false;                        // float8e8m0
};

inline QuantType quant_type(rt::DataType dt, std::string_view what) {
  QuantType q;
  q.dt = dt;
  switch (dt) {
    case rt::DataType::kInt8:
      q.lo = -128, q.hi = 127;
      break;
    case rt::DataType::kUint8:
      q.lo = 0, q.hi = 255;
      break;
    case rt::DataType::kInt16:
      q.bits = 16, q.lo = -32768, q.hi = 32767;
      break;
    case rt::DataType::kUint16:
      q.bits = 16, q.lo = 0, q.hi = 65535;
      break;
    case rt::DataType::kInt32:
      q.bits = 32, q.lo = INT32_MIN, q.hi = INT32_MAX;
      break;
    case rt::DataType::kInt4:
      q.bits = 4, q.lo = -8, q.hi = 7;
      break;
    case rt::DataType::kUint4:
      q.bits = 4, q.lo = 0, q.hi = 15;
      break;
    case rt::DataType::kInt2:
      q.bits = 2, q.lo = -2, q.hi = 1;
      break;
    case rt::DataType::kUint2:
      q.bits = 2, q.lo = 0, q.hi = 3;
      break;
    case rt::DataType::kFloat8E8M0:
      q.is_int = false, q.e8m0 = true;
      break;
    default:
      q.mini = float8::minifloat_of(dt);
      if (!q.mini)
        throw rt::KernelError(
            fmt::format("{}: element type {} is not a quantized type", what, ir::dtype_name(dt)));
      q.is_int = false;
      if (dt == rt::DataType::kFloat4E2M1) q.bits = 4;
  }
  return q;
}

// The raw storage code of element i (sign-extended for the signed packed integer types).
inline int64_t quant_code(const rt::Tensor& t, const QuantType& q, int64_t i) {
  const auto* bytes = static_cast<const uint8_t*>(t.raw());
  if (q.bits < 8) {
    const int64_t bit = i * q.bits;
    const uint32_t mask = (1u << q.bits) - 1;
    auto v = static_cast<int64_t>((bytes[bit / 8] >> (bit % 8)) & mask);
    if (q.is_int && q.lo < 0 && v > q.hi) v -= int64_t{1} << q.bits;
    return v;
  }
  switch (q.dt) {
    case rt::DataType::kInt8:
      return t.data<int8_t>()[i];
    case rt::DataType::kInt16:
      return t.data<int16_t>()[i];
    case rt::DataType::kUint16:
      return t.data<uint16_t>()[i];
    case rt::DataType::kInt32:
      return t.data<int32_t>()[i];
    default:
      return bytes[i];  // uint8 and the 8-bit floats
  }
}

// Element i as a number: the integer, or the small float's value.
inline float quant_value(const rt::Tensor& t, const QuantType& q, int64_t i) {
  const int64_t c = quant_code(t, q, i);
  if (q.is_int) return static_cast<float>(c);
  if (q.e8m0) return float8::e8m0_to_float(static_cast<uint8_t>(c));
  return float8::decode(*q.mini, static_cast<uint8_t>(c));
}

// Stores code c (already in range) into element i. Packed outputs must start zeroed.
inline void store_code(rt::Tensor& t, const QuantType& q, int64_t i, int64_t c) {
  auto* bytes = static_cast<uint8_t*>(t.raw());
  if (q.bits < 8) {
    const int64_t bit = i * q.bits;
    const uint32_t mask = (1u << q.bits) - 1;
    bytes[bit / 8] = static_cast<uint8_t>(bytes[bit / 8] | ((static_cast<uint32_t>(c) & mask) << (bit % 8)));
    return;
  }
  switch (q.dt) {
    case rt::DataType::kInt8:
      t.data<int8_t>()[i] = static_cast<int8_t>(c);
      return;
    case rt::DataType::kInt16:
      t.data<int16_t>()[i] = static_cast<int16_t>(c);
      return;
    case rt::DataType::kUint16:
      t.data<uint16_t>()[i] = static_cast<uint16_t>(c);
      return;
    case rt::DataType::kInt32:
      t.data<int32_t>()[i] = static_cast<int32_t>(c);
      return;
    default:
      bytes[i] = static_cast<uint8_t>(c);
  }
}

// Where the scale and zero point of each element of x come from.
struct QuantLayout {
  enum Mode { kTensor, kAxis, kBlocked } mode = kTensor;
  int64_t inner = 1, dim = 1, blocks = 1, block = 0;

  int64_t param_index(int64_t i) const {
    if (mode == kTensor) return 0;
    const int64_t a = (i / inner) % dim;
    if (mode == kAxis) return a;
    const int64_t o = i / (inner * dim);
    return (o * blocks + a / block) * inner + i % inner;
  }
};

// Checks scale (input 1) and zero point (input 2) against x and picks the layout. `per_axis` and
// `blocked` say what the node's opset allows.
inline QuantLayout quant_layout(const rt::KernelContext& ctx, bool per_axis, bool blocked) {
  const rt::Tensor& x = ctx.input(0);
  const rt::Tensor& scale = ctx.input(1);
  if (const rt::Tensor* zp = ctx.optional_input(2)) {
    const bool both_single = zp->numel() == 1 && scale.numel() == 1 && zp->rank() <= 1 && scale.rank() <= 1;
    if (!both_single && zp->shape() != scale.shape())
      ctx.fail(fmt::format("zero point shape {} differs from scale shape {}; they must match",
                           rt::shape_str(zp->shape()), rt::shape_str(scale.shape())));
  }
  QuantLayout l;
  const int64_t block = blocked ? ctx.info().get_int("block_size", 0) : 0;
  if (block < 0) ctx.fail(fmt::format("attribute 'block_size' must not be negative, got {}", block));
  if (block == 0 && scale.numel() == 1 && scale.rank() <= 1) return l;
  if (!per_axis)
    ctx.fail(fmt::format("scale must be a scalar in this opset (per-axis needs opset 13), got {}",
                         rt::shape_str(scale.shape())));
  if (x.rank() == 0)
    ctx.fail(
        fmt::format("a scale of shape {} needs an input of rank 1 or more", rt::shape_str(scale.shape())));
  const int64_t axis = checked_axis(ctx.info().get_int("axis", 1), x.rank());
  l.dim = x.dim(static_cast<int>(axis));
  l.inner = dims_product(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  if (block == 0) {
    if (scale.rank() != 1 || scale.dim(0) != l.dim)
      ctx.fail(fmt::format("per-axis scale must be 1-D with {} values (dimension {} of x {}), got {}", l.dim,
                           axis, rt::shape_str(x.shape()), rt::shape_str(scale.shape())));
    l.mode = QuantLayout::kAxis;
    return l;
  }
  l.mode = QuantLayout::kBlocked;
  l.block = block;
  l.blocks = (l.dim + block - 1) / block;
  bool ok = scale.rank() == x.rank();
  for (int k = 0; ok && k < x.rank(); ++k) ok = scale.dim(k) == (k == axis ? l.blocks : x.dim(k));
  if (!ok) {
    rt::Shape want = x.shape();
    want[static_cast<size_t>(axis)] = l.blocks;
    ctx.fail(fmt::format("blocked scale must be {} (x {} in blocks of {} along axis {}), got {}",
                         rt::shape_str(want), rt::shape_str(x.shape()), block, axis,
                         rt::shape_str(scale.shape())));
  }
  return l;
}

// A tensor of the given dtype and shape with every byte zero (packed stores OR into it).
inline rt::Tensor& zeroed_output(rt::KernelContext& ctx, size_t i, rt::DataType dt, const rt::Shape& shape) {
  rt::Tensor& t = ctx.output(i, dt, shape);
  std::memset(t.raw(), 0, t.nbytes());
  return t;
}

}  // namespace tessera::ops::kernels
