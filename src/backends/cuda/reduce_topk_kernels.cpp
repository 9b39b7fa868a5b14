// The CUDA backend's TopK: K from the attribute (before opset 10) or the host input; rows along the
// axis of up to kTopKMaxRow elements, whose size inference knows (longer or unknown rows stay on the CPU).
#include <fmt/format.h>

#include "backends/cuda/kernel_util.h"
#include "backends/cuda/reduce_topk.h"
#include "backends/cuda/reduce_util.h"

namespace tessera::cuda {

namespace {

int64_t product(const rt::Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= s[i];
  return n;
}

class TopKKernel : public rt::OpKernel {
 public:
  explicit TopKKernel(const rt::KernelInfo& info)
      : k_from_input_(info.since_version() >= 10),
        k_attr_(k_from_input_ ? 0 : info.get_int("k")),
        largest_(info.since_version() < 11 || info.get_int("largest", 1) != 0),
        axis_(info.get_int("axis", -1)) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Shape& s = x.shape();
    const auto a = static_cast<size_t>(normalized_axis(axis_, x.rank()));
    const int64_t k = read_k(ctx);
    const int64_t n = s[a];
    if (k < 0 || k > n)
      ctx.fail(fmt::format("K = {} is outside [0, {}], the size of axis {} of input 'X' {}", k, n, axis_,
                           rt::shape_str(s)));
    if (n > kTopKMaxRow)
      ctx.fail(fmt::format("the CUDA TopK sorts rows of up to {} elements, got {}", kTopKMaxRow, n));
    rt::Shape out = s;
    out[a] = k;
    rt::Tensor& values = ctx.output_uninitialized(0, x.dtype(), out);
    rt::Tensor& indices = ctx.output_uninitialized(1, rt::DataType::kInt64, out);
    const RowView v{product(s, 0, a), n, product(s, a + 1, s.size())};
    launch_top_k(*num_type(x.dtype()), largest_, x.raw(), values.raw(), static_cast<int64_t*>(indices.raw()),
                 v, k, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  int64_t read_k(const rt::KernelContext& ctx) const {
    if (!k_from_input_) return k_attr_;
    const rt::Tensor& k = ctx.input(1);
    if (k.numel() != 1 || k.rank() > 1)
      ctx.fail(fmt::format("input 'K' must be a 1-D tensor holding one value, got shape {}",
                           rt::shape_str(k.shape())));
    return k.to_int64_vector()[0];
  }

  bool k_from_input_;
  int64_t k_attr_;
  bool largest_;
  int64_t axis_;
};

// The row length must be known and short enough for one block's shared memory.
bool top_k_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !rank_known(info, 0, 1) || !common_num_type(info.input_dtype(0))) return false;
  const ir::Shape& s = *info.input_type(0).shape;
  const auto rank = static_cast<int64_t>(s.size());
  int64_t axis = info.get_int("axis", -1);
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  const ir::Dim& d = s[static_cast<size_t>(axis)];
  return d.is_static() && d.value <= kTopKMaxRow;
}

}  // namespace

void register_top_k_kernels(KernelTable& t) {
  t.add(cuda_def(
            "TopK", top_k_supported,
            [](const rt::KernelInfo& info) -> rt::KernelPtr { return std::make_unique<TopKKernel>(info); }),
        HostIo{{1}, {}});
}

}  // namespace tessera::cuda
