// Element copies between tensors of any element type, and the slice/stack operations that Loop, Scan,
// SplitToSequence and ConcatFromSequence build on. A tensor is seen as [outer, axis, inner] around one
// axis; slicing and stacking then move runs of `inner` contiguous elements.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace tessera::ops::kernels {

// Copies n elements from src (starting at element src_off) to dst (at dst_off). Strings are copied as
// objects; sub-byte types (int4, float4e2m1...) element by element through their packed bits.
inline void copy_elements(const rt::Tensor& src, int64_t src_off, rt::Tensor& dst, int64_t dst_off,
                          int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == ir::DataType::kString) {
    const std::string* s = src.data<std::string>() + src_off;
    std::string* d = dst.data<std::string>() + dst_off;
    for (int64_t i = 0; i < n; ++i) d[i] = s[i];
    return;
  }
  const int bits = ir::dtype_bits(src.dtype());
  if (bits % 8 == 0) {
    const size_t bytes = static_cast<size_t>(bits / 8);
    std::memcpy(static_cast<char*>(dst.raw()) + static_cast<size_t>(dst_off) * bytes,
                static_cast<const char*>(src.raw()) + static_cast<size_t>(src_off) * bytes,
                static_cast<size_t>(n) * bytes);
    return;
  }
  // Packed: element i lives in byte i*bits/8 at bit (i*bits)%8, low bits first.
  const auto* s = static_cast<const uint8_t*>(src.raw());
  auto* d = static_cast<uint8_t*>(dst.raw());
  const auto mask = static_cast<uint8_t>((1u << bits) - 1u);
  for (int64_t i = 0; i < n; ++i) {
    int64_t sb = (src_off + i) * bits, db = (dst_off + i) * bits;
    auto v = static_cast<uint8_t>((s[sb / 8] >> (sb % 8)) & mask);
    uint8_t& out = d[db / 8];
    out = static_cast<uint8_t>((out & ~(mask << (db % 8))) | (v << (db % 8)));
  }
}

// Product of dims [from, to).
inline int64_t dims_product(const rt::Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

// Normalises an axis in [-rank, rank); KernelError naming `what` otherwise.
inline int64_t normalize_axis_or_throw(int64_t axis, int64_t rank, std::string_view what) {
  if (axis < -rank || axis >= rank)
    throw rt::KernelError(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return axis < 0 ? axis + rank : axis;
}

// Copies the sub-tensor [start, start + len) along `axis` of src into dst (whose shape is src's with
// dimension `axis` = len), at position dst_start along dst's same axis.
inline void copy_axis_range(const rt::Tensor& src, size_t axis, int64_t start, int64_t len, rt::Tensor& dst,
                            int64_t dst_start) {
  const rt::Shape& ss = src.shape();
  const rt::Shape& ds = dst.shape();
  int64_t outer = dims_product(ss, 0, axis);
  int64_t inner = dims_product(ss, axis + 1, ss.size());
  int64_t src_axis = ss[axis], dst_axis = ds[axis];
  for (int64_t o = 0; o < outer; ++o)
    copy_elements(src, (o * src_axis + start) * inner, dst, (o * dst_axis + dst_start) * inner, len * inner);
}

// Index `index` along `axis` of t, with that axis removed (a fresh tensor).
inline rt::Tensor take_slice(const rt::Tensor& t, size_t axis, int64_t index) {
  rt::Shape s = t.shape();
  s[axis] = 1;
  rt::Tensor out = rt::Tensor::zeros(t.dtype(), s);
  copy_axis_range(t, axis, index, 1, out, 0);
  s.erase(s.begin() + static_cast<ptrdiff_t>(axis));
  return out.reshaped(s);
}

// Writes slice (of dst's shape without `axis`) at position index along dst's `axis`.
inline void put_slice(const rt::Tensor& slice, rt::Tensor& dst, size_t axis, int64_t index) {
  rt::Shape s = dst.shape();
  s[axis] = 1;
  rt::Tensor view = slice.reshaped(s);
  copy_axis_range(view, axis, 0, 1, dst, index);
}

}  // namespace tessera::ops::kernels
