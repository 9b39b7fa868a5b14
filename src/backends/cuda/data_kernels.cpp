// The CUDA backend's kernels for shape and data movement (Reshape, Transpose, Concat, Slice, Gather, Pad,
// Cast, Where...), and the helpers they share.
#include <fmt/format.h>

#include "backends/cuda/data_util.h"
#include "backends/cuda/elementwise.h"
#include "runtime/broadcast.h"

namespace tessera::cuda {

std::optional<int> storage_bytes(rt::DataType t) {
  if (t == rt::DataType::kString || t == rt::DataType::kUndefined) return std::nullopt;
  switch (ir::dtype_bits(t)) {
    case 8:
      return 1;
    case 16:
      return 2;
    case 32:
      return 4;
    case 64:
      return 8;
    default:
      return std::nullopt;
  }
}

int storage_bytes_of(const rt::KernelContext& ctx, const rt::Tensor& t) {
  auto b = storage_bytes(t.dtype());
  if (!b) ctx.fail(fmt::format("the CUDA kernel does not move {}", ir::dtype_name(t.dtype())));
  return *b;
}

std::optional<ScalarType> scalar_type(rt::DataType t) {
  switch (t) {
    case rt::DataType::kFloat:
      return ScalarType::kFloat;
    case rt::DataType::kFloat16:
      return ScalarType::kHalf;
    case rt::DataType::kBFloat16:
      return ScalarType::kBFloat16;
    case rt::DataType::kDouble:
      return ScalarType::kDouble;
    case rt::DataType::kInt8:
      return ScalarType::kInt8;
    case rt::DataType::kUint8:
      return ScalarType::kUint8;
    case rt::DataType::kInt16:
      return ScalarType::kInt16;
    case rt::DataType::kUint16:
      return ScalarType::kUint16;
    case rt::DataType::kUint32:
      return ScalarType::kUint32;
    case rt::DataType::kUint64:
      return ScalarType::kUint64;
    case rt::DataType::kInt32:
      return ScalarType::kInt32;
    case rt::DataType::kInt64:
      return ScalarType::kInt64;
    case rt::DataType::kBool:
      return ScalarType::kBool;
    default:
      return std::nullopt;
  }
}

bool movable_input(const rt::KernelInfo& info, size_t i) {
  return info.has_input(i) && info.input_type(i).is_tensor() && storage_bytes(info.input_dtype(i));
}

bool index_input(const rt::KernelInfo& info, size_t i) {
  if (!info.has_input(i) || !info.input_type(i).is_tensor()) return false;
  rt::DataType t = info.input_dtype(i);
  return t == rt::DataType::kInt32 || t == rt::DataType::kInt64;
}

Broadcast3 broadcast3(const rt::Shape& out, const std::vector<const rt::Shape*>& ins) {
  if (out.size() > static_cast<size_t>(kMaxRank))
    throw rt::KernelError(
        fmt::format("the CUDA kernel broadcasts up to rank {}, got {}", kMaxRank, out.size()));
  Broadcast3 b;
  b.rank = static_cast<int>(out.size());
  b.flat = true;
  for (const rt::Shape* s : ins) b.flat = b.flat && *s == out;
  for (int d = 0; d < b.rank; ++d) b.dims[d] = out[static_cast<size_t>(d)];
  for (size_t k = 0; k < ins.size() && k < 3; ++k) {
    auto st = rt::broadcast_strides(*ins[k], out);
    for (int d = 0; d < b.rank; ++d) b.s[k][d] = st[static_cast<size_t>(d)];
  }
  return b;
}

std::vector<int64_t> row_strides(const rt::Shape& s) {
  std::vector<int64_t> r(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d)
    r[static_cast<size_t>(d)] = r[static_cast<size_t>(d) + 1] * s[static_cast<size_t>(d) + 1];
  return r;
}

StridedCopy strided(const rt::Shape& dims, const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  if (dims.size() > static_cast<size_t>(kCopyRank))
    throw rt::KernelError(
        fmt::format("the CUDA copy takes up to {} dimensions, got {}", kCopyRank, dims.size()));
  StridedCopy c;
  c.rank = static_cast<int>(dims.size());
  for (int d = 0; d < c.rank; ++d) {
    c.dims[d] = dims[static_cast<size_t>(d)];
    c.src[d] = src[static_cast<size_t>(d)];
    c.dst[d] = dst[static_cast<size_t>(d)];
  }
  return c;
}

int64_t axis_of(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    throw rt::KernelError(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return axis < 0 ? axis + rank : axis;
}

void register_data_kernels(KernelTable& t) {
  register_view_kernels(t);
  register_copy_kernels(t);
  register_index_kernels(t);
  register_typed_kernels(t);
  register_misc_kernels(t);
}

}  // namespace tessera::cuda
