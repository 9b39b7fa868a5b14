#include "backends/cuda/reduce_util.h"

#include <fmt/format.h>

#include "backends/cuda/kernel_util.h"

namespace tessera::cuda {

std::optional<NumType> num_type(rt::DataType t) {
  switch (t) {
    case rt::DataType::kFloat:
      return NumType::kFloat;
    case rt::DataType::kFloat16:
      return NumType::kHalf;
    case rt::DataType::kBFloat16:
      return NumType::kBFloat16;
    case rt::DataType::kInt32:
      return NumType::kInt32;
    case rt::DataType::kInt64:
      return NumType::kInt64;
    case rt::DataType::kDouble:
      return NumType::kDouble;
    case rt::DataType::kBool:
      return NumType::kBool;
    default:
      return std::nullopt;
  }
}

bool common_num_type(rt::DataType t) {
  auto n = num_type(t);
  return n && *n != NumType::kDouble && *n != NumType::kBool;
}

int input_rank(const rt::KernelInfo& info, size_t i) {
  const ir::Type& t = info.input_type(i);
  if (!t.is_tensor() || !t.has_shape()) return -1;
  return static_cast<int>(t.shape->size());
}

bool rank_known(const rt::KernelInfo& info, size_t i, int min_rank) {
  const int r = input_rank(info, i);
  return r >= min_rank && r <= kMaxRank;
}

bool rank_fits(const rt::KernelInfo& info, size_t i, int min_rank) {
  return input_rank(info, i) == -1 || rank_known(info, i, min_rank);
}

bool float_like_input0(const rt::KernelInfo& info, size_t first, size_t last) {
  const rt::DataType t = info.input_dtype(0);
  if (!elem_type(t)) return false;
  for (size_t i = first; i <= last; ++i)
    if (info.has_input(i) && info.input_dtype(i) != t) return false;
  return true;
}

int64_t normalized_axis(int64_t axis, int64_t rank, std::string_view what) {
  if (axis < -rank || axis >= rank)
    throw rt::KernelError(fmt::format("{} {} is out of range for an input of rank {} (valid: [{}, {}])", what,
                                      axis, rank, -rank, rank - 1));
  return axis < 0 ? axis + rank : axis;
}

}  // namespace tessera::cuda
