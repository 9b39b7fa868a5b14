// Reference kernels of the basic sequence operators: SequenceConstruct, SequenceEmpty, SequenceInsert,
// SequenceErase, SequenceAt and SequenceLength. Sequences are immutable and share their tensors, so
// every operator builds a new item list that refers to the same tensors.
#include <fmt/format.h>

#include "ops/sequence/sequence_util_kernel.h"
#include "runtime/kernel.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::ir::DataType;
using tessera::ir::Type;
using tessera::rt::KernelContext;
using tessera::rt::Sequence;
using tessera::rt::Value;

// Fails unless `t` may be an element of sequence `s` (same element type when the sequence knows it).
void check_element(const KernelContext& ctx, const Sequence& s, const tessera::rt::Tensor& t) {
  DataType want = s.elem_type.is_tensor() ? s.elem_type.elem : DataType::kUndefined;
  if (want == DataType::kUndefined && !s.items.empty() && s.items[0].is_tensor())
    want = s.items[0].tensor().dtype();
  if (want != DataType::kUndefined && want != t.dtype())
    ctx.fail(fmt::format("input 'tensor' is {} but the sequence holds {} tensors",
                         tessera::ir::dtype_name(t.dtype()), tessera::ir::dtype_name(want)));
}

Type element_type_of(const Sequence& s, DataType fallback) {
  if (s.elem_type.is_tensor() && s.elem_type.elem != DataType::kUndefined)
    return Type::tensor(s.elem_type.elem);
  return Type::tensor(fallback);
}

void sequence_construct(KernelContext& ctx) {
  Sequence s;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const tessera::rt::Tensor& t = ctx.input(i);
    if (i > 0 && t.dtype() != s.items[0].tensor().dtype())
      ctx.fail(fmt::format("input {} is {} but input 0 is {}; a sequence holds one element type", i,
                           tessera::ir::dtype_name(t.dtype()),
                           tessera::ir::dtype_name(s.items[0].tensor().dtype())));
    s.items.emplace_back(t);
  }
  if (s.items.empty()) ctx.fail("SequenceConstruct needs at least one input");
  s.elem_type = Type::tensor(s.items[0].tensor().dtype());
  ctx.set_output(0, Value::sequence(std::move(s)));
}

void sequence_empty(KernelContext& ctx) {
  int64_t dt = ctx.info().get_int("dtype", static_cast<int64_t>(DataType::kFloat));
  if (dt > INT32_MAX || dt < 0 || !tessera::ir::is_valid_dtype(static_cast<int32_t>(dt)) ||
      dt == static_cast<int64_t>(DataType::kUndefined))
    ctx.fail(fmt::format("attribute 'dtype' is {}, which is not a tensor element type", dt));
  ctx.set_output(0, Value::sequence(Sequence{Type::tensor(static_cast<DataType>(dt)), {}}));
}

void sequence_insert(KernelContext& ctx) {
  const Sequence& in = sequence_input(ctx, 0, "input_sequence");
  const tessera::rt::Tensor& t = ctx.input(1);
  check_element(ctx, in, t);
  size_t at = ctx.has_input(2) ? resolve_position(ctx, position_input(ctx, 2), in.items.size(), true)
                               : in.items.size();
  Sequence out{element_type_of(in, t.dtype()), in.items};
  out.items.insert(out.items.begin() + static_cast<ptrdiff_t>(at), Value(t));
  ctx.set_output(0, Value::sequence(std::move(out)));
}

void sequence_erase(KernelContext& ctx) {
  const Sequence& in = sequence_input(ctx, 0, "input_sequence");
  if (in.items.empty()) ctx.fail("input 'input_sequence' is empty; there is nothing to erase");
  int64_t pos = ctx.has_input(1) ? position_input(ctx, 1) : -1;
  size_t at = resolve_position(ctx, pos, in.items.size(), false);
  Sequence out{in.elem_type, in.items};
  out.items.erase(out.items.begin() + static_cast<ptrdiff_t>(at));
  ctx.set_output(0, Value::sequence(std::move(out)));
}

void sequence_at(KernelContext& ctx) {
  const Sequence& in = sequence_input(ctx, 0, "input_sequence");
  size_t at = resolve_position(ctx, position_input(ctx, 1), in.items.size(), false);
  ctx.set_output(0, in.items[at]);
}

void sequence_length(KernelContext& ctx) {
  const Sequence& in = sequence_input(ctx, 0, "input_sequence");
  ctx.output(0, DataType::kInt64, {}).data<int64_t>()[0] = static_cast<int64_t>(in.items.size());
}

}  // namespace

TESSERA_REGISTER_KERNELS(sequence_basic) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("SequenceConstruct", sequence_construct));
  reg.add(KernelDef::fn("SequenceEmpty", sequence_empty));
  reg.add(KernelDef::fn("SequenceInsert", sequence_insert));
  reg.add(KernelDef::fn("SequenceErase", sequence_erase));
  reg.add(KernelDef::fn("SequenceAt", sequence_at));
  reg.add(KernelDef::fn("SequenceLength", sequence_length));
}
