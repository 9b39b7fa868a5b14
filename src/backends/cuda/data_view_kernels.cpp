// The CUDA backend's shape kernels that move no data: Reshape, Flatten, Squeeze, Unsqueeze and Identity
// give the input's device storage under another shape (a view), Shape and Size make host tensors from
// the input's metadata, so no value goes through the GPU to tell a Reshape its target.
#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

#include "backends/cuda/data_util.h"
#include "backends/cuda/kernel_util.h"
#include "ops/tensor/reshape_shape.h"

namespace tessera::cuda {

namespace {

// A 1-D (or scalar) integer host input as int64 values.
std::vector<int64_t> host_ints(const rt::KernelContext& ctx, size_t i, const char* name) {
  const rt::Tensor& t = ctx.input(i);
  if (!ir::dtype_is_int(t.dtype()))
    throw rt::KernelError(
        fmt::format("input '{}' must be an integer tensor, got {}", name, ir::dtype_name(t.dtype())));
  if (t.rank() > 1)
    throw rt::KernelError(fmt::format("input '{}' must be 1-D, got {}", name, rt::shape_str(t.shape())));
  return t.to_int64_vector();
}

void reshape(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  std::vector<int64_t> target;
  bool allowzero = false;
  if (ctx.info().since_version() < 5) {
    target = ctx.info().get_ints("shape");
  } else {
    target = host_ints(ctx, 1, "shape");
    allowzero = ctx.info().since_version() >= 14 && ctx.info().get_int("allowzero", 0) != 0;
  }
  ctx.set_output(0, x.reshaped(ops::resolve_reshape(x.shape(), target, allowzero)));
}

void flatten(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t axis = ctx.info().get_int("axis", 1);
  if (axis < -rank || axis > rank) ctx.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= x.shape()[static_cast<size_t>(d)];
  ctx.set_output(0, x.reshaped({outer, inner}));
}

std::vector<int64_t> axes_of(rt::KernelContext& ctx, int input_from) {
  if (ctx.info().since_version() < input_from) return ctx.info().get_ints("axes", {});
  if (!ctx.has_input(1)) return {};
  return host_ints(ctx, 1, "axes");
}

void squeeze(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  std::vector<bool> drop(static_cast<size_t>(rank), false);
  std::vector<int64_t> axes = axes_of(ctx, 13);
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) drop[static_cast<size_t>(d)] = x.shape()[static_cast<size_t>(d)] == 1;
  for (int64_t a : axes) {
    int64_t d = axis_of(a, rank, "Squeeze axis");
    if (x.shape()[static_cast<size_t>(d)] != 1)
      ctx.fail(
          fmt::format("cannot squeeze axis {} of shape {}: its size is not 1", a, rt::shape_str(x.shape())));
    drop[static_cast<size_t>(d)] = true;
  }
  rt::Shape out;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[static_cast<size_t>(d)]) out.push_back(x.shape()[static_cast<size_t>(d)]);
  ctx.set_output(0, x.reshaped(std::move(out)));
}

void unsqueeze(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  std::vector<int64_t> axes = axes_of(ctx, 13);
  const int64_t rank = x.rank() + static_cast<int64_t>(axes.size());
  std::vector<bool> insert(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    int64_t d = axis_of(a, rank, "Unsqueeze axis");
    if (insert[static_cast<size_t>(d)]) ctx.fail(fmt::format("Unsqueeze axes name axis {} twice", a));
    insert[static_cast<size_t>(d)] = true;
  }
  rt::Shape out;
  size_t k = 0;
  for (int64_t d = 0; d < rank; ++d) out.push_back(insert[static_cast<size_t>(d)] ? 1 : x.shape()[k++]);
  ctx.set_output(0, x.reshaped(std::move(out)));
}

void identity(rt::KernelContext& ctx) {
  ctx.set_output(0, ctx.input(0));
}

// Shape-15's start/end clamp to [0, rank] after negative values count from the back.
int64_t clamp_axis(int64_t i, int64_t rank) {
  if (i < 0) i += rank;
  return std::clamp<int64_t>(i, 0, rank);
}

void shape(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t start = 0, end = rank;
  if (ctx.info().since_version() >= 15) {
    start = clamp_axis(ctx.info().get_int("start", 0), rank);
    if (ctx.info().has_attr("end")) end = clamp_axis(ctx.info().get_int("end"), rank);
  }
  end = std::max(start, end);
  rt::Tensor y = rt::Tensor::zeros(rt::DataType::kInt64, {end - start});
  std::copy(x.shape().begin() + start, x.shape().begin() + end, y.data<int64_t>());
  ctx.set_output(0, std::move(y));
}

void size(rt::KernelContext& ctx) {
  ctx.set_output(0, rt::Tensor::scalar<int64_t>(rt::DataType::kInt64, ctx.input(0).numel()));
}

// Constant's value, built once; dense numeric values only (sparse and string ones stay with the CPU).
rt::Tensor constant_value(const rt::KernelInfo& info) {
  if (const ir::Tensor* t = info.get_tensor("value")) return rt::Tensor::from_ir(*t);
  auto vec = [](rt::DataType dt, const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    return rt::Tensor::from_vector<T>(dt, {static_cast<int64_t>(v.size())}, v);
  };
  if (info.has_attr("value_float"))
    return rt::Tensor::scalar<float>(rt::DataType::kFloat, info.get_float("value_float"));
  if (info.has_attr("value_floats")) return vec(rt::DataType::kFloat, info.get_floats("value_floats"));
  if (info.has_attr("value_int"))
    return rt::Tensor::scalar<int64_t>(rt::DataType::kInt64, info.get_int("value_int"));
  return vec(rt::DataType::kInt64, info.get_ints("value_ints"));
}

bool constant_ok(const rt::KernelInfo& i) {
  const ir::Node& n = i.node();
  int given = 0;
  for (const char* name : {"value", "sparse_value", "value_float", "value_floats", "value_int", "value_ints",
                           "value_string", "value_strings"})
    given += n.attr(name) != nullptr;
  if (given != 1) return false;
  if (const ir::Tensor* t = i.get_tensor("value")) return t->dtype != rt::DataType::kString;
  return n.attr("value_float") || n.attr("value_floats") || n.attr("value_int") || n.attr("value_ints");
}

// Constant on the host (like Shape's output): a shape constant feeds a Reshape without a copy, and a
// device reader gets it copied once per run, as from the CPU.
class Constant : public rt::OpKernel {
 public:
  explicit Constant(const rt::KernelInfo& info) : value_(constant_value(info)) {}
  void compute(rt::KernelContext& ctx) const override { ctx.set_output(0, value_); }

 private:
  rt::Tensor value_;
};

rt::KernelFactory fn(rt::KernelFn f) {
  return [f](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<rt::FnKernel>(f); };
}

bool tensor_input(const rt::KernelInfo& i) {
  return all_tensors(i) && i.has_input(0);
}

}  // namespace

void register_view_kernels(KernelTable& t) {
  t.add(cuda_def("Reshape", tensor_input, fn(reshape)), HostIo{{1}, {}});
  t.add(cuda_def("Flatten", tensor_input, fn(flatten)));
  t.add(cuda_def("Squeeze", tensor_input, fn(squeeze)), HostIo{{1}, {}});
  t.add(cuda_def("Unsqueeze", tensor_input, fn(unsqueeze)), HostIo{{1}, {}});
  t.add(cuda_def("Identity", tensor_input, fn(identity)));
  t.add(cuda_def("Shape", tensor_input, fn(shape)), HostIo{{}, {0}});
  t.add(cuda_def("Size", tensor_input, fn(size)), HostIo{{}, {0}});
  t.add(cuda_def("Constant", constant_ok,
                 [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Constant>(i); }),
        HostIo{{}, {0}});
}

}  // namespace tessera::cuda
