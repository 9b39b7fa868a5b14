#include "backends/cuda/kernel_util.h"

namespace tessera::cuda {

std::optional<ElemType> elem_type(rt::DataType t) {
  switch (t) {
    case rt::DataType::kFloat:
      return ElemType::kFloat;
    case rt::DataType::kFloat16:
      return ElemType::kHalf;
    case rt::DataType::kBFloat16:
      return ElemType::kBFloat16;
    default:
      return std::nullopt;
  }
}

bool same_float_inputs(const rt::KernelInfo& info, size_t count) {
  if (info.input_count() != count) return false;
  rt::DataType t = info.input_dtype(0);
  if (!elem_type(t)) return false;
  for (size_t i = 0; i < count; ++i)
    if (!info.has_input(i) || info.input_dtype(i) != t) return false;
  return true;
}

bool all_tensors(const rt::KernelInfo& info) {
  for (size_t i = 0; i < info.input_count(); ++i)
    if (info.has_input(i) && !info.input_type(i).is_tensor()) return false;
  for (size_t i = 0; i < info.output_count(); ++i)
    if (info.has_output(i) && !info.output_type(i).is_tensor()) return false;
  return true;
}

void check_launch(rt::KernelContext& ctx) {
  check(cudaGetLastError(), ctx.info().op_type().c_str());
}

rt::KernelDef cuda_def(const char* op, std::function<bool(const rt::KernelInfo&)> supports,
                       rt::KernelFactory create, int since_min, int since_max) {
  rt::KernelDef d;
  d.op_type = op;
  d.since_min = since_min;
  d.since_max = since_max;
  d.name = "cuda";
  d.priority = 10;
  d.supports = std::move(supports);
  d.create = std::move(create);
  return d;
}

}  // namespace tessera::cuda
