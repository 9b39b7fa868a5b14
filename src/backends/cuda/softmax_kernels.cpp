// The CUDA backend's Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to 2-D at
// `axis` (each row of [prod(dims before axis), prod(dims from axis)] is one distribution); from opset 13
// the distribution runs along the single axis.
#include <fmt/format.h>

#include "backends/cuda/kernel_util.h"
#include "backends/cuda/reduce_util.h"
#include "backends/cuda/softmax_ops.h"

namespace tessera::cuda {

namespace {

int64_t product(const rt::Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= s[i];
  return n;
}

class SoftmaxKernel : public rt::OpKernel {
 public:
  SoftmaxKernel(const rt::KernelInfo& info, SoftmaxKind kind)
      : kind_(kind),
        coerce_2d_(info.since_version() < 13),
        axis_(info.get_int("axis", coerce_2d_ ? 1 : -1)) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Shape& s = x.shape();
    const auto rank = static_cast<int64_t>(s.size());
    RowView v;
    if (coerce_2d_) {
      if (axis_ < -rank || axis_ > rank)
        ctx.fail(fmt::format("attribute 'axis' is {}, outside [{}, {}] for an input of rank {}", axis_, -rank,
                             rank, rank));
      const auto a = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
      v = {product(s, 0, a), product(s, a, s.size()), 1};
    } else {
      const auto a = static_cast<size_t>(normalized_axis(axis_, rank));
      v = {product(s, 0, a), s[a], product(s, a + 1, s.size())};
    }
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), s);
    launch_softmax(kind_, *elem_type(x.dtype()), x.raw(), y.raw(), v, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  SoftmaxKind kind_;
  bool coerce_2d_;
  int64_t axis_;
};

bool softmax_supported(const rt::KernelInfo& info) {
  return all_tensors(info) && same_float_inputs(info, 1) && rank_fits(info, 0, 1);
}

}  // namespace

void register_softmax_kernels(KernelTable& t) {
  for (auto [name, kind] :
       {std::pair{"Softmax", SoftmaxKind::kSoftmax}, std::pair{"LogSoftmax", SoftmaxKind::kLogSoftmax},
        std::pair{"Hardmax", SoftmaxKind::kHardmax}}) {
    t.add(cuda_def(name, softmax_supported, [kind](const rt::KernelInfo& info) -> rt::KernelPtr {
      return std::make_unique<SoftmaxKernel>(info, kind);
    }));
  }
}

}  // namespace tessera::cuda
