// Reference kernel of Loop: runs the body while the trip count and the condition allow, threading the
// loop-carried values (tensors, sequences, optionals) through the iterations and stacking each scan
// output along a new first axis.
#include <fmt/format.h>

#include <algorithm>

#include "ops/control/tensor_slices.h"
#include "runtime/exec_graph.h"
#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Shape;
using tessera::rt::Tensor;
using tessera::rt::Value;

// A single-element tensor of `dt` (M or cond, as input or body output); KernelError naming it otherwise.
const Tensor& single(const Value& v, DataType dt, const std::string& what) {
  if (!v.is_tensor())
    throw tessera::rt::KernelError(fmt::format("{} must be a tensor, got {}", what, v.describe()));
  const Tensor& t = v.tensor();
  if (t.dtype() != dt)
    throw tessera::rt::KernelError(fmt::format("{} must be a {} tensor, got {}", what,
                                               tessera::ir::dtype_name(dt),
                                               tessera::ir::dtype_name(t.dtype())));
  if (t.numel() != 1)
    throw tessera::rt::KernelError(
        fmt::format("{} must hold one element, got shape {}", what, tessera::rt::shape_str(t.shape())));
  return t;
}

// Stacks the per-iteration slices of one scan output along a new first axis. With no iteration the
// slice shape comes from the body's declared output type when it is static, else it is [0].
Tensor stack_scan_output(KernelContext& ctx, size_t out_index, const std::vector<Tensor>& slices,
                         const tessera::ir::Type& declared) {
  if (slices.empty()) {
    Shape s{0};
    DataType dt = declared.elem == DataType::kUndefined ? DataType::kFloat : declared.elem;
    if (declared.shape && tessera::ir::shape_is_static(*declared.shape))
      for (const auto& d : *declared.shape) s.push_back(d.value);
    return ctx.output(out_index, dt, s);
  }
  const Tensor& first = slices[0];
  Shape s{static_cast<int64_t>(slices.size())};
  s.insert(s.end(), first.shape().begin(), first.shape().end());
  tessera::rt::shape_numel(s);  // throws on overflow before allocating
  Tensor& y = ctx.output(out_index, first.dtype(), s);
  for (size_t it = 0; it < slices.size(); ++it)
    tessera::ops::kernels::copy_elements(slices[it], 0, y, static_cast<int64_t>(it) * first.numel(),
                                         first.numel());
  return y;
}

void loop_kernel(KernelContext& ctx) {
  const size_t carried = ctx.input_count() > 2 ? ctx.input_count() - 2 : 0;
  if (ctx.output_count() < carried)
    ctx.fail(fmt::format("the node has {} outputs but {} loop-carried values", ctx.output_count(), carried));
  const size_t scans = ctx.output_count() - carried;

  bool has_max = ctx.has_input(0);
  int64_t max_trips = has_max ? single(ctx.value(0), DataType::kInt64, "input 'M'").data<int64_t>()[0] : 0;
  bool cond = ctx.has_input(1) ? single(ctx.value(1), DataType::kBool, "input 'cond'").data<bool>()[0] : true;

  std::vector<Value> state(carried);
  for (size_t i = 0; i < carried; ++i) {
    const Value* slot = ctx.input_slot(2 + i);
    if (slot) state[i] = *slot;
  }
  std::vector<std::vector<Tensor>> scan_slices(scans);
  // Memory the kept slices hold: a slice costs at least its Tensor object, so that a data-driven trip
  // count stacking even empty slices ends in an error naming the scan output, not in exhausted memory.
  std::vector<size_t> scan_bytes(scans, 0);

  for (int64_t iter = 0; (!has_max || iter < max_trips) && cond; ++iter) {
    if (ctx.cancelled()) ctx.fail("run cancelled");
    std::vector<Value> ins;
    ins.reserve(2 + carried);
    ins.emplace_back(Tensor::scalar<int64_t>(DataType::kInt64, iter));
    ins.emplace_back(Tensor::scalar<bool>(DataType::kBool, cond));
    ins.insert(ins.end(), state.begin(), state.end());
    std::vector<Value> outs = ctx.run_subgraph("body", ins);
    if (outs.size() != 1 + carried + scans)
      ctx.fail(
          fmt::format("the body gave {} outputs; expected {} (condition, {} loop-carried, {} scan outputs)",
                      outs.size(), 1 + carried + scans, carried, scans));
    cond = single(outs[0], DataType::kBool, "the body's condition output").data<bool>()[0];
    for (size_t i = 0; i < carried; ++i) state[i] = std::move(outs[1 + i]);
    for (size_t k = 0; k < scans; ++k) {
      const Value& v = outs[1 + carried + k];
      if (!v.is_tensor())
        ctx.fail(fmt::format("scan output {} must be a tensor to be stacked, got {}", k, v.describe()));
      if (!scan_slices[k].empty() && v.tensor().shape() != scan_slices[k][0].shape())
        ctx.fail(fmt::format("scan output {} has shape {} in iteration {} but {} in iteration 0", k,
                             tessera::rt::shape_str(v.tensor().shape()), iter,
                             tessera::rt::shape_str(scan_slices[k][0].shape())));
      scan_slices[k].push_back(v.tensor());
      scan_bytes[k] += std::max(v.tensor().nbytes(), sizeof(Tensor));
      if (scan_bytes[k] > tessera::rt::max_tensor_bytes())
        ctx.fail(
            fmt::format("scan output {} holds {} bytes after {} iterations (slices of shape {}), more "
                        "than the limit of {} bytes for one tensor",
                        k, scan_bytes[k], iter + 1, tessera::rt::shape_str(v.tensor().shape()),
                        tessera::rt::max_tensor_bytes()));
    }
  }

  for (size_t i = 0; i < carried; ++i) ctx.set_output(i, std::move(state[i]));
  const auto& body_outputs = ctx.info().subgraph("body").graph().outputs;
  for (size_t k = 0; k < scans; ++k) {
    if (!ctx.wants_output(carried + k)) continue;
    size_t bo = 1 + carried + k;
    tessera::ir::Type declared = bo < body_outputs.size() ? body_outputs[bo].type : tessera::ir::Type{};
    stack_scan_output(ctx, carried + k, scan_slices[k], declared);
  }
}

}  // namespace

TESSERA_REGISTER_KERNELS(control_loop) {
  reg.add(tessera::rt::KernelDef::fn("Loop", loop_kernel));
}
