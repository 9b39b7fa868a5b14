// Reference kernel of ReverseSequence: for each batch entry b, the first sequence_lens[b] elements along
// the time axis in reverse order, the rest as they are. Lengths must lie in [0, time size].
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void reverse_sequence(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail(fmt::format("input must have rank >= 2, got {}", rt::shape_str(x.shape())));
  const int64_t batch_axis = ctx.info().get_int("batch_axis", 1);
  const int64_t time_axis = ctx.info().get_int("time_axis", 0);
  if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) || batch_axis == time_axis)
    ctx.fail(
        fmt::format("batch_axis {} and time_axis {} must be 0 and 1 in some order", batch_axis, time_axis));
  const int64_t batch = x.dim(static_cast<int>(batch_axis)), steps = x.dim(static_cast<int>(time_axis));
  std::vector<int64_t> lens = int_input(ctx, 1, "sequence_lens");
  if (static_cast<int64_t>(lens.size()) != batch)
    ctx.fail(fmt::format("input 'sequence_lens' has {} entries for a batch of {}", lens.size(), batch));
  for (int64_t l : lens)
    if (l < 0 || l > steps) ctx.fail(fmt::format("sequence length {} is outside [0, {}]", l, steps));
  const int64_t inner = prod(x.shape(), 2, x.shape().size());
  const std::vector<int64_t> strides = strides_of(x.shape());
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  dispatch_storage(x.dtype(), "ReverseSequence", [&]<class S>() {
    ElemSrc<S> src(x);
    ElemDst<S> dst(y);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t from_t = t < lens[b] ? lens[b] - 1 - t : t;
        const int64_t to = b * strides[batch_axis] + t * strides[time_axis];
        const int64_t from = b * strides[batch_axis] + from_t * strides[time_axis];
        std::copy(src.data() + from, src.data() + from + inner, dst.data() + to);
      }
    dst.commit();
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_reverse_sequence) {
  reg.add(tessera::rt::KernelDef::fn("ReverseSequence", reverse_sequence));
}
