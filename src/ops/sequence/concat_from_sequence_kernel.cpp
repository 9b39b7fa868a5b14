// Reference kernel of ConcatFromSequence: concatenates the tensors of a sequence along `axis`, or stacks
// them along a new axis at `axis` when new_axis=1 (then axis may also be the rank, to stack last).
#include <fmt/format.h>

#include "ops/control/tensor_slices.h"
#include "ops/sequence/sequence_util_kernel.h"
#include "runtime/kernel.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::rt::KernelContext;
using tessera::rt::Shape;
using tessera::rt::Tensor;

void concat_from_sequence(KernelContext& ctx) {
  const tessera::rt::Sequence& seq = sequence_input(ctx, 0, "input_sequence");
  if (seq.items.empty()) ctx.fail("input 'input_sequence' is empty; there is nothing to concatenate");
  bool new_axis = ctx.info().get_int("new_axis", 0) != 0;
  std::vector<Tensor> parts;
  for (size_t i = 0; i < seq.items.size(); ++i) {
    if (!seq.items[i].is_tensor()) ctx.fail(fmt::format("sequence element {} is not a tensor", i));
    Tensor t = seq.items[i].tensor();
    parts.push_back(t);
  }
  const Tensor first = parts[0];  // a copy: parts[0] itself is reshaped below when stacking
  const int rank = first.rank();
  int64_t axis_attr = ctx.info().get_int("axis");
  auto axis =
      static_cast<size_t>(normalize_axis_or_throw(axis_attr, new_axis ? rank + 1 : rank, "attribute 'axis'"));
  int64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    Tensor& t = parts[i];
    if (t.dtype() != first.dtype())
      ctx.fail(fmt::format("sequence element {} is {} but element 0 is {}", i,
                           tessera::ir::dtype_name(t.dtype()), tessera::ir::dtype_name(first.dtype())));
    bool same = t.rank() == rank;
    for (int d = 0; same && d < rank; ++d)
      same = new_axis || static_cast<size_t>(d) == axis || t.dim(d) == first.dim(d);
    if (new_axis) same = same && t.shape() == first.shape();
    if (!same)
      ctx.fail(fmt::format("sequence element {} has shape {}, which does not match element 0's {}{}", i,
                           tessera::rt::shape_str(t.shape()), tessera::rt::shape_str(first.shape()),
                           new_axis ? "" : " outside the axis"));
    if (new_axis) {
      Shape s = t.shape();
      s.insert(s.begin() + static_cast<ptrdiff_t>(axis), 1);
      t = t.reshaped(s);
    }
    total += t.shape()[axis];
  }
  Shape out_shape = parts[0].shape();
  out_shape[axis] = total;
  tessera::rt::shape_numel(out_shape);
  Tensor& y = ctx.output(0, first.dtype(), out_shape);
  int64_t at = 0;
  for (const Tensor& t : parts) {
    copy_axis_range(t, axis, 0, t.shape()[axis], y, at);
    at += t.shape()[axis];
  }
}

}  // namespace

TESSERA_REGISTER_KERNELS(sequence_concat_from_sequence) {
  reg.add(tessera::rt::KernelDef::fn("ConcatFromSequence", concat_from_sequence));
}
