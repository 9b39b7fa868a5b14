// The CUDA backend's indexed kernels: Gather, GatherElements, GatherND, ScatterElements, ScatterND and
// OneHot. Indices stay on the device (int32 or int64), so the kernels cannot report an out-of-range one
// without a synchronisation: a gather gives zeros for it, a scatter skips it.
#include <fmt/format.h>

#include "backends/cuda/data_typed.h"
#include "backends/cuda/data_util.h"
#include "backends/cuda/kernel_util.h"

namespace tessera::cuda {

namespace {

using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

bool is_int64(const KernelContext& ctx, const Tensor& idx) {
  if (idx.dtype() != rt::DataType::kInt64 && idx.dtype() != rt::DataType::kInt32)
    ctx.fail(fmt::format("indices must be int32 or int64, got {}", ir::dtype_name(idx.dtype())));
  return idx.dtype() == rt::DataType::kInt64;
}

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= s[d];
  return p;
}

void copy_device(KernelContext& ctx, const Tensor& from, Tensor& to) {
  if (from.nbytes() == 0) return;
  check(cudaMemcpyAsync(to.raw(), from.raw(), from.nbytes(), cudaMemcpyDeviceToDevice, native(ctx.stream())),
        ctx.info().op_type().c_str());
}

void gather(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  if (data.rank() == 0) ctx.fail("Gather cannot index a scalar");
  const size_t axis = static_cast<size_t>(axis_of(ctx.info().get_int("axis", 0), data.rank()));
  Shape out(data.shape().begin(), data.shape().begin() + static_cast<int64_t>(axis));
  out.insert(out.end(), idx.shape().begin(), idx.shape().end());
  out.insert(out.end(), data.shape().begin() + static_cast<int64_t>(axis) + 1, data.shape().end());
  Tensor& y = ctx.output_uninitialized(0, data.dtype(), out);
  launch_gather(storage_bytes_of(ctx, data), data.raw(), idx.raw(), is_int64(ctx, idx), y.raw(),
                product(data.shape(), 0, axis), data.shape()[axis], idx.numel(),
                product(data.shape(), axis + 1, data.shape().size()), native(ctx.stream()));
  check_launch(ctx);
}

// The layout shared by GatherElements and ScatterElements: the index tensor's shape over the data's.
IndexShape element_layout(const KernelContext& ctx, const Tensor& data, const Tensor& idx) {
  const int64_t rank = data.rank();
  if (rank == 0 || rank > 8) ctx.fail(fmt::format("the CUDA kernel takes data of rank 1 to 8, got {}", rank));
  if (idx.rank() != rank)
    ctx.fail(fmt::format("indices {} must have the rank of data {}", rt::shape_str(idx.shape()),
                         rt::shape_str(data.shape())));
  IndexShape s;
  s.rank = static_cast<int>(rank);
  s.axis = static_cast<int>(axis_of(ctx.info().get_int("axis", 0), rank));
  s.axis_dim = data.shape()[static_cast<size_t>(s.axis)];
  auto strides = row_strides(data.shape());
  for (int d = 0; d < s.rank; ++d) {
    const size_t u = static_cast<size_t>(d);
    if (d != s.axis && idx.shape()[u] > data.shape()[u])
      ctx.fail(fmt::format("indices {} exceed data {} on axis {}", rt::shape_str(idx.shape()),
                           rt::shape_str(data.shape()), d));
    s.dims[d] = idx.shape()[u];
    s.data_strides[d] = strides[u];
  }
  return s;
}

void gather_elements(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  IndexShape s = element_layout(ctx, data, idx);
  Tensor& y = ctx.output_uninitialized(0, data.dtype(), idx.shape());
  launch_gather_elements(storage_bytes_of(ctx, data), data.raw(), idx.raw(), is_int64(ctx, idx), y.raw(), s,
                         idx.numel(), native(ctx.stream()));
  check_launch(ctx);
}

// GatherND / ScatterND: indices [batch..., q..., k] into data [batch..., k dims, slice dims...].
NdShape nd_layout(const KernelContext& ctx, const Tensor& data, const Tensor& idx, int64_t b) {
  const int64_t r = data.rank(), q = idx.rank();
  if (q < 1) ctx.fail("indices must have rank 1 or more");
  if (b < 0 || b >= std::min(r, q))
    ctx.fail(fmt::format("batch_dims {} must be below the ranks of data ({}) and indices ({})", b, r, q));
  const int64_t k = idx.shape().back();
  if (k < 0 || k > 8 || b + k > r)
    ctx.fail(fmt::format("index tuples of {} entries do not fit data {} after {} batch axes", k,
                         rt::shape_str(data.shape()), b));
  for (int64_t d = 0; d < b; ++d)
    if (data.shape()[static_cast<size_t>(d)] != idx.shape()[static_cast<size_t>(d)])
      ctx.fail(fmt::format("batch axis {} differs: data {}, indices {}", d, rt::shape_str(data.shape()),
                           rt::shape_str(idx.shape())));
  NdShape s;
  s.k = static_cast<int>(k);
  s.batch = product(data.shape(), 0, static_cast<size_t>(b));
  s.q = product(idx.shape(), static_cast<size_t>(b), static_cast<size_t>(q - 1));
  s.slice = product(data.shape(), static_cast<size_t>(b + k), static_cast<size_t>(r));
  s.batch_stride = product(data.shape(), static_cast<size_t>(b), static_cast<size_t>(r));
  auto strides = row_strides(data.shape());
  for (int64_t j = 0; j < k; ++j) {
    s.dims[j] = data.shape()[static_cast<size_t>(b + j)];
    s.strides[j] = strides[static_cast<size_t>(b + j)];
  }
  return s;
}

void gather_nd(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  if (idx.dtype() != rt::DataType::kInt64) ctx.fail("indices must be int64");
  const int64_t b = ctx.info().since_version() >= 12 ? ctx.info().get_int("batch_dims", 0) : 0;
  NdShape s = nd_layout(ctx, data, idx, b);
  Shape out(idx.shape().begin(), idx.shape().end() - 1);
  out.insert(out.end(), data.shape().begin() + b + s.k, data.shape().end());
  Tensor& y = ctx.output_uninitialized(0, data.dtype(), out);
  launch_gather_nd(storage_bytes_of(ctx, data), data.raw(), idx.raw(), y.raw(), s, native(ctx.stream()));
  check_launch(ctx);
}

ScatterReduce reduction_of(const rt::KernelInfo& info) {
  const std::string r = info.since_version() >= 16 ? info.get_string("reduction", "none") : "none";
  if (r == "none") return ScatterReduce::kNone;
  if (r == "add") return ScatterReduce::kAdd;
  if (r == "mul") return ScatterReduce::kMul;
  if (r == "max") return ScatterReduce::kMax;
  if (r == "min") return ScatterReduce::kMin;
  throw rt::KernelError(fmt::format("attribute 'reduction' is '{}'; expected none, add, mul, max or min", r));
}

class ScatterElements : public rt::OpKernel {
 public:
  explicit ScatterElements(const rt::KernelInfo& info) : reduce_(reduction_of(info)) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& idx = ctx.input(1);
    const Tensor& upd = ctx.input(2);
    if (upd.shape() != idx.shape() || upd.dtype() != data.dtype())
      ctx.fail(fmt::format("updates {} must have the indices' shape {} and the data's type",
                           rt::shape_str(upd.shape()), rt::shape_str(idx.shape())));
    IndexShape s = element_layout(ctx, data, idx);
    auto t = scalar_type(data.dtype());
    if (!t) ctx.fail(fmt::format("the CUDA ScatterElements does not take {}", ir::dtype_name(data.dtype())));
    Tensor& y = ctx.output_uninitialized(0, data.dtype(), data.shape());
    copy_device(ctx, data, y);
    launch_scatter_elements(*t, storage_bytes_of(ctx, data), reduce_, idx.raw(), is_int64(ctx, idx),
                            upd.raw(), y.raw(), s, idx.numel(), native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  ScatterReduce reduce_;
};

class ScatterND : public rt::OpKernel {
 public:
  explicit ScatterND(const rt::KernelInfo& info) : reduce_(reduction_of(info)) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& idx = ctx.input(1);
    const Tensor& upd = ctx.input(2);
    if (idx.dtype() != rt::DataType::kInt64) ctx.fail("indices must be int64");
    NdShape s = nd_layout(ctx, data, idx, 0);
    Shape want(idx.shape().begin(), idx.shape().end() - 1);
    want.insert(want.end(), data.shape().begin() + s.k, data.shape().end());
    if (upd.shape() != want || upd.dtype() != data.dtype())
      ctx.fail(fmt::format("updates {} must have shape {} and the data's type", rt::shape_str(upd.shape()),
                           rt::shape_str(want)));
    auto t = scalar_type(data.dtype());
    if (!t) ctx.fail(fmt::format("the CUDA ScatterND does not take {}", ir::dtype_name(data.dtype())));
    Tensor& y = ctx.output_uninitialized(0, data.dtype(), data.shape());
    copy_device(ctx, data, y);
    launch_scatter_nd(*t, storage_bytes_of(ctx, data), reduce_, idx.raw(), upd.raw(), y.raw(), s,
                      native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  ScatterReduce reduce_;
};

void one_hot(KernelContext& ctx) {
  const Tensor& idx = ctx.input(0);
  const Tensor& tdepth = ctx.input(1);
  const Tensor& values = ctx.input(2);
  if (tdepth.numel() != 1)
    ctx.fail(fmt::format("input 'depth' must have one element, got shape {}", rt::shape_str(tdepth.shape())));
  if (values.numel() != 2)
    ctx.fail(fmt::format("input 'values' must have two elements, got {}", values.numel()));
  const double dd = tdepth.to_double(0);
  if (!(dd >= 1) || dd > 9.0e18) ctx.fail(fmt::format("input 'depth' is {}; it must be at least 1", dd));
  const int64_t depth = static_cast<int64_t>(dd);
  const size_t axis = static_cast<size_t>(axis_of(ctx.info().get_int("axis", -1), idx.rank() + 1));
  Shape out = idx.shape();
  out.insert(out.begin() + static_cast<int64_t>(axis), depth);
  Tensor& y = ctx.output_uninitialized(0, values.dtype(), out);
  const auto it = scalar_type(idx.dtype());
  if (!it || (*it != ScalarType::kInt32 && *it != ScalarType::kInt64 && *it != ScalarType::kFloat &&
              *it != ScalarType::kDouble))
    ctx.fail(fmt::format("the CUDA OneHot does not take {} indices", ir::dtype_name(idx.dtype())));
  launch_one_hot(*it, idx.raw(), storage_bytes_of(ctx, values), values.raw(), y.raw(),
                 product(idx.shape(), 0, axis), depth, product(idx.shape(), axis, idx.shape().size()),
                 native(ctx.stream()));
  check_launch(ctx);
}

rt::KernelFactory fn(rt::KernelFn f) {
  return [f](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<rt::FnKernel>(f); };
}

template <class K>
rt::KernelFactory make() {
  return [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<K>(i); };
}

// Compress: the condition is read on the host (a host input), so the output shape is known without a
// synchronisation of its own; the kept positions go to the device through a pageable copy, which the
// driver stages before returning (it cannot be captured into a CUDA graph: the session then runs node
// by node, as for any data-dependent shape).
void compress(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  if (cond.dtype() != rt::DataType::kBool) ctx.fail("input 'condition' must be bool");
  if (cond.rank() != 1)
    ctx.fail(fmt::format("input 'condition' must be 1-D, got {}", rt::shape_str(cond.shape())));
  const bool has_axis = ctx.info().has_attr("axis");
  const Shape in_shape = has_axis ? x.shape() : Shape{x.numel()};
  const auto axis = static_cast<size_t>(has_axis ? axis_of(ctx.info().get_int("axis"), x.rank()) : 0);
  const int64_t dim = in_shape[axis];
  std::vector<int64_t> keep;
  const bool* c = cond.data<bool>();
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (!c[i]) continue;
    if (i >= dim) ctx.fail(fmt::format("input 'condition' selects entry {} of an axis of size {}", i, dim));
    keep.push_back(i);
  }
  Shape out = in_shape;
  out[axis] = static_cast<int64_t>(keep.size());
  Tensor& y = ctx.output_uninitialized(0, x.dtype(), out);
  if (y.numel() == 0) return;
  Tensor idx = ctx.scratch_uninitialized(rt::DataType::kInt64, {static_cast<int64_t>(keep.size())});
  check(cudaMemcpyAsync(idx.raw(), keep.data(), keep.size() * sizeof(int64_t), cudaMemcpyHostToDevice,
                        native(ctx.stream())),
        "cudaMemcpyAsync (Compress positions)");
  launch_gather(storage_bytes_of(ctx, x), x.raw(), idx.raw(), true, y.raw(), product(in_shape, 0, axis), dim,
                static_cast<int64_t>(keep.size()), product(in_shape, axis + 1, in_shape.size()),
                native(ctx.stream()));
  check_launch(ctx);
}

bool compress_ok(const rt::KernelInfo& i) {
  return all_tensors(i) && movable_input(i, 0) && i.has_input(1) && i.input_dtype(1) == rt::DataType::kBool;
}

bool gather_ok(const rt::KernelInfo& i) {
  return all_tensors(i) && movable_input(i, 0) && index_input(i, 1);
}

bool nd_ok(const rt::KernelInfo& i) {
  return all_tensors(i) && movable_input(i, 0) && i.input_dtype(1) == rt::DataType::kInt64;
}

// Reductions need an arithmetic type; bool only takes 'none'.
bool reducible(const rt::KernelInfo& i) {
  auto t = scalar_type(i.input_dtype(0));
  if (!t) return false;
  const std::string r = i.since_version() >= 16 ? i.get_string("reduction", "none") : "none";
  return r == "none" || *t != ScalarType::kBool;
}

bool scatter_elements_ok(const rt::KernelInfo& i) {
  return gather_ok(i) && i.has_input(2) && reducible(i);
}

bool scatter_nd_ok(const rt::KernelInfo& i) {
  return nd_ok(i) && i.has_input(2) && reducible(i);
}

bool one_hot_ok(const rt::KernelInfo& i) {
  const rt::DataType t = i.input_dtype(0);
  const bool float_idx = t == rt::DataType::kFloat || t == rt::DataType::kDouble;
  return all_tensors(i) && (index_input(i, 0) || float_idx) && i.has_input(1) && movable_input(i, 2);
}

}  // namespace

void register_index_kernels(KernelTable& t) {
  t.add(cuda_def("Gather", gather_ok, fn(gather)));
  t.add(cuda_def("Compress", compress_ok, fn(compress)), HostIo{{1}, {}});
  t.add(cuda_def("GatherElements", gather_ok, fn(gather_elements)));
  t.add(cuda_def("GatherND", nd_ok, fn(gather_nd)));
  t.add(cuda_def("ScatterElements", scatter_elements_ok, make<ScatterElements>()));
  t.add(
      cuda_def("Scatter", scatter_elements_ok, make<ScatterElements>(), 9, 10));  // ScatterElements' old name
  t.add(cuda_def("ScatterND", scatter_nd_ok, make<ScatterND>()));
  t.add(cuda_def("OneHot", one_hot_ok, fn(one_hot)), HostIo{{1}, {}});
}

}  // namespace tessera::cuda
