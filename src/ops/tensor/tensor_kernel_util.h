// Helpers shared by the reference kernels of src/ops/tensor.
//
// Most of these operators only move elements around, so they work on *storage* types rather than
// element types: any 1-byte type (int8, uint8, bool, the float8 types) moves as uint8_t, any 2-byte one
// as uint16_t and so on; strings move as std::string. The packed sub-byte types (int4, uint4,
// float4e2m1, int2, uint2) are unpacked to one code per byte around the kernel by ElemSrc / ElemDst, so
// each kernel is written once, as a template over the storage type.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace tessera::ops::tensor_kernels {

using rt::DataType;
using rt::KernelContext;
using rt::KernelError;
using rt::Shape;
using rt::Tensor;

inline bool is_packed(DataType dt) {
  int bits = ir::dtype_bits(dt);
  return bits > 0 && bits < 8;
}

// Calls f.template operator()<S>() with S the storage type that moves elements of `dt`.
template <class F>
void dispatch_storage(DataType dt, std::string_view what, F&& f) {
  if (dt == DataType::kString) return f.template operator()<std::string>();
  switch (ir::dtype_bits(dt)) {
    case 2:
    case 4:
    case 8:
      return f.template operator()<uint8_t>();
    case 16:
      return f.template operator()<uint16_t>();
    case 32:
      return f.template operator()<uint32_t>();
    case 64:
      return f.template operator()<uint64_t>();
    default:
      rt::throw_unsupported_dtype(what, dt);
  }
}

// Unpacks the codes of a packed sub-byte tensor, one per byte (low bits first, as ONNX packs them).
inline std::vector<uint8_t> unpack_codes(const Tensor& t) {
  const int bits = ir::dtype_bits(t.dtype());
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  const uint8_t* p = static_cast<const uint8_t*>(t.raw());
  std::vector<uint8_t> codes(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    codes[static_cast<size_t>(i)] = static_cast<uint8_t>((p[i / per_byte] >> ((i % per_byte) * bits)) & mask);
  return codes;
}

// Packs one code per byte into the packed tensor `t` (unused high bits of the last byte stay zero).
inline void pack_codes(const uint8_t* codes, Tensor& t) {
  const int bits = ir::dtype_bits(t.dtype());
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  uint8_t* p = static_cast<uint8_t*>(t.raw());
  std::fill(p, p + t.nbytes(), uint8_t{0});
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i / per_byte] |= static_cast<uint8_t>((codes[i] & mask) << ((i % per_byte) * bits));
}

// Read access to a tensor's elements as storage type S (unpacking sub-byte types).
template <class S>
class ElemSrc {
 public:
  explicit ElemSrc(const Tensor& t) {
    if constexpr (std::is_same_v<S, uint8_t>) {
      if (is_packed(t.dtype())) {
        codes_ = unpack_codes(t);
        p_ = codes_.data();
        return;
      }
    }
    p_ = t.data<S>();
  }
  const S* data() const { return p_; }
  const S& operator[](int64_t i) const { return p_[i]; }

 private:
  std::vector<uint8_t> codes_;
  const S* p_ = nullptr;
};

// Write access to an output tensor as storage type S; call commit() once written (it packs
// sub-byte types; a no-op otherwise).
template <class S>
class ElemDst {
 public:
  explicit ElemDst(Tensor& t) : t_(&t) {
    if constexpr (std::is_same_v<S, uint8_t>) {
      if (is_packed(t.dtype())) {
        codes_.assign(static_cast<size_t>(t.numel()), 0);
        p_ = codes_.data();
        return;
      }
    }
    p_ = t.data<S>();
  }
  S* data() { return p_; }
  S& operator[](int64_t i) { return p_[i]; }
  void commit() {
    if constexpr (std::is_same_v<S, uint8_t>) {
      if (is_packed(t_->dtype())) pack_codes(codes_.data(), *t_);
    }
  }

 private:
  Tensor* t_;
  std::vector<uint8_t> codes_;
  S* p_ = nullptr;
};

// Row-major element strides of a shape.
inline std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

// Product of shape[begin, end).
inline int64_t prod(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t k = begin; k < end && k < shape.size(); ++k) n *= shape[k];
  return n;
}

// An axis attribute or input normalised against `rank`; KernelError naming it when out of range.
inline int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view what = "axis") {
  if (axis < -rank || axis >= rank)
    throw KernelError(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return axis < 0 ? axis + rank : axis;
}

// Normalises a list of axes, rejecting out-of-range and repeated ones.
inline std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                           std::string_view what = "axes") {
  std::vector<int64_t> r;
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t a : axes) {
    int64_t n = normalize_axis(a, rank, what);
    if (seen[n]) throw KernelError(fmt::format("{} has axis {} more than once", what, a));
    seen[n] = true;
    r.push_back(n);
  }
  return r;
}

// An index along a dimension of size n (negative counts from the back); KernelError when outside.
inline int64_t normalize_index(int64_t i, int64_t n, std::string_view what) {
  if (i < -n || i >= n) throw KernelError(fmt::format("{} {} is out of range [{}, {})", what, i, -n, n));
  return i < 0 ? i + n : i;
}

// A 1-D (or scalar) integer input as int64 values; KernelError when it is not integer.
inline std::vector<int64_t> int_input(const KernelContext& ctx, size_t i, std::string_view name) {
  const Tensor& t = ctx.input(i);
  if (!ir::dtype_is_int(t.dtype()))
    throw KernelError(
        fmt::format("input '{}' must be an integer tensor, got {}", name, ir::dtype_name(t.dtype())));
  return t.to_int64_vector();
}

// dst[i] = src[base + sum_d idx_d * strides[d]] for every index of `shape` (row-major into dst): the
// loop under Transpose, Slice, Expand, DepthToSpace... Runs over rows of the last axis, in parallel.
template <class S>
void copy_strided(rt::ThreadPool* pool, const S* src, int64_t base, const std::vector<int64_t>& strides,
                  S* dst, const Shape& shape) {
  const int64_t total = rt::shape_numel(shape);
  if (total == 0) return;
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) {
    dst[0] = src[base];
    return;
  }
  const int64_t inner = shape[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  const int64_t rows = total / inner;
  auto body = [&](int64_t rb, int64_t re) {
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    int64_t r = rb;
    for (int d = rank - 2; d >= 0; --d) {
      idx[d] = r % shape[d];
      r /= shape[d];
    }
    for (int64_t row = rb; row < re; ++row) {
      int64_t off = base;
      for (int d = 0; d < rank - 1; ++d) off += idx[d] * strides[d];
      S* out = dst + row * inner;
      if (inner_stride == 1) {
        std::copy(src + off, src + off + inner, out);
      } else {
        for (int64_t j = 0; j < inner; ++j) out[j] = src[off + j * inner_stride];
      }
      for (int d = rank - 2; d >= 0; --d) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
  };
  constexpr int64_t kGrain = 16384;
  if (pool && total > kGrain)
    pool->parallel_for(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(inner, 1)), body);
  else
    body(0, rows);
}

// Allocates output `out` of x's dtype and `shape` and fills it with the strided view of x.
inline void strided_output(KernelContext& ctx, size_t out, const Tensor& x, int64_t base,
                           const std::vector<int64_t>& strides, const Shape& shape) {
  Tensor& y = ctx.output(out, x.dtype(), shape);
  dispatch_storage(x.dtype(), ctx.info().op_type(), [&]<class S>() {
    ElemSrc<S> src(x);
    ElemDst<S> dst(y);
    copy_strided<S>(&ctx.threads(), src.data(), base, strides, dst.data(), shape);
    dst.commit();
  });
}

// The index maps copy_axis_maps reads: maps[d][o] = source(d, o) for each output axis d. Build them
// only once the output exists: its allocation checks the size, and an axis length taken from an
// input's values (Tile's repeats, Pad's pads) must not allocate a map before that check.
template <class Source>
std::vector<std::vector<int64_t>> axis_maps(const Shape& out, Source source) {
  std::vector<std::vector<int64_t>> maps(out.size());
  for (size_t d = 0; d < out.size(); ++d) {
    maps[d].resize(static_cast<size_t>(out[d]));
    for (int64_t o = 0; o < out[d]; ++o) maps[d][o] = source(d, o);
  }
  return maps;
}

// dst[o] = src[sum_d maps[d][o_d] * in_strides[d]] over the output shape given by the maps' lengths, or
// `fill` where an entry of some map is -1: the loop under Pad, Tile, CenterCropPad. Runs over rows of
// the last axis, in parallel.
template <class S>
void copy_axis_maps(rt::ThreadPool* pool, const S* src, const Shape& in_shape,
                    const std::vector<std::vector<int64_t>>& maps, S* dst, const S& fill) {
  const int rank = static_cast<int>(maps.size());
  Shape shape;
  for (const auto& m : maps) shape.push_back(static_cast<int64_t>(m.size()));
  const int64_t total = rt::shape_numel(shape);
  if (total == 0) return;
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  const std::vector<int64_t> strides = strides_of(in_shape);
  const int64_t inner = shape[rank - 1];
  const int64_t rows = total / inner;
  const std::vector<int64_t>& last = maps[rank - 1];
  auto body = [&](int64_t rb, int64_t re) {
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    int64_t r = rb;
    for (int d = rank - 2; d >= 0; --d) {
      idx[d] = r % shape[d];
      r /= shape[d];
    }
    for (int64_t row = rb; row < re; ++row) {
      int64_t off = 0;
      bool filled = false;
      for (int d = 0; d < rank - 1; ++d) {
        int64_t m = maps[d][idx[d]];
        if (m < 0) filled = true;
        off += m * strides[d];
      }
      S* out = dst + row * inner;
      for (int64_t j = 0; j < inner; ++j) out[j] = filled || last[j] < 0 ? fill : src[off + last[j]];
      for (int d = rank - 2; d >= 0; --d) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
  };
  constexpr int64_t kGrain = 16384;
  if (pool && total > kGrain)
    pool->parallel_for(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(inner, 1)), body);
  else
    body(0, rows);
}

}  // namespace tessera::ops::tensor_kernels
