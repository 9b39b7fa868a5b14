// Reference kernel of Scan. Each iteration hands the body the state values and one slice of every scan
// input (along its scan axis, forward or reversed), then takes the new states and one slice of every
// scan output, which are stacked along the scan output's axis.
//
// Opset 8 adds a leading batch axis to every input and output and an optional sequence_lens input:
// each batch entry is scanned on its own for its own length, and scan outputs are zero-padded to the
// longest sequence. Opset 9 dropped both and made axes and directions configurable.
#include <fmt/format.h>

#include "ops/control/tensor_slices.h"
#include "runtime/exec_graph.h"
#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::ops::kernels::copy_elements;
using tessera::ops::kernels::normalize_axis_or_throw;
using tessera::ops::kernels::put_slice;
using tessera::ops::kernels::take_slice;
using tessera::rt::KernelContext;
using tessera::rt::KernelError;
using tessera::rt::Shape;
using tessera::rt::Tensor;
using tessera::rt::Value;

struct ScanSpec {
  std::vector<size_t> in_axes;  // normalised
  std::vector<bool> in_reverse;
  std::vector<int64_t> out_axes;  // as given; normalised against the slice rank + 1
  std::vector<bool> out_reverse;
};

// `name` as `count` values (zeros when absent); KernelError when given with another length.
std::vector<int64_t> per_value(const KernelContext& ctx, const char* name, size_t count) {
  std::vector<int64_t> v = ctx.info().get_ints(name, std::vector<int64_t>(count, 0));
  if (v.size() != count)
    ctx.fail(fmt::format("attribute '{}' has {} values but there are {}", name, v.size(), count));
  return v;
}

struct ScanResult {
  std::vector<Tensor> states;
  std::vector<Tensor> scans;  // undefined when no iteration ran
};

// Runs `iterations` steps of the body over the scan inputs; scan outputs get `length` positions along
// their axis (length >= iterations; the rest stays zero, for opset 8's padding).
ScanResult run_scan(KernelContext& ctx, std::vector<Tensor> states, const std::vector<Tensor>& inputs,
                    const ScanSpec& spec, int64_t iterations, int64_t length, size_t scan_outs) {
  ScanResult r;
  r.scans.resize(scan_outs);
  std::vector<size_t> out_axis(scan_outs, 0);
  for (int64_t t = 0; t < iterations; ++t) {
    if (ctx.cancelled()) ctx.fail("run cancelled");
    std::vector<Value> ins;
    ins.reserve(states.size() + inputs.size());
    for (const Tensor& s : states) ins.emplace_back(s);
    for (size_t j = 0; j < inputs.size(); ++j) {
      int64_t idx = spec.in_reverse[j] ? iterations - 1 - t : t;
      ins.emplace_back(take_slice(inputs[j], spec.in_axes[j], idx));
    }
    std::vector<Value> outs = ctx.run_subgraph("body", ins);
    if (outs.size() != states.size() + scan_outs)
      ctx.fail(fmt::format("the body gave {} outputs; expected {} states and {} scan outputs", outs.size(),
                           states.size(), scan_outs));
    for (const Value& v : outs)
      if (!v.is_tensor()) ctx.fail(fmt::format("the body's outputs must be tensors, got {}", v.describe()));
    for (size_t i = 0; i < states.size(); ++i) {
      // A state keeps its element type and shape from one iteration to the next.
      const Tensor& next = outs[i].tensor();
      if (next.dtype() != states[i].dtype() || next.shape() != states[i].shape())
        ctx.fail(fmt::format("state {} changes from {} {} to {} {} in iteration {}", i,
                             tessera::ir::dtype_name(states[i].dtype()),
                             tessera::rt::shape_str(states[i].shape()), tessera::ir::dtype_name(next.dtype()),
                             tessera::rt::shape_str(next.shape()), t));
      states[i] = next;
    }
    for (size_t k = 0; k < scan_outs; ++k) {
      const Tensor& slice = outs[states.size() + k].tensor();
      Tensor& y = r.scans[k];
      if (!y.defined()) {
        auto rank = static_cast<int64_t>(slice.rank()) + 1;
        out_axis[k] =
            static_cast<size_t>(normalize_axis_or_throw(spec.out_axes[k], rank, "scan_output_axes value"));
        Shape s = slice.shape();
        s.insert(s.begin() + static_cast<ptrdiff_t>(out_axis[k]), length);
        tessera::rt::shape_numel(s);  // throws on overflow before allocating
        y = Tensor::zeros(slice.dtype(), s);
      }
      Shape expect = y.shape();
      expect.erase(expect.begin() + static_cast<ptrdiff_t>(out_axis[k]));
      if (slice.shape() != expect || slice.dtype() != y.dtype())
        ctx.fail(fmt::format("scan output {} is {} {} in iteration {} but {} {} before", k,
                             tessera::ir::dtype_name(slice.dtype()), tessera::rt::shape_str(slice.shape()), t,
                             tessera::ir::dtype_name(y.dtype()), tessera::rt::shape_str(expect)));
      put_slice(slice, y, out_axis[k], spec.out_reverse[k] ? length - 1 - t : t);
    }
  }
  r.states = std::move(states);
  return r;
}

// A scan output of a scan that ran no iteration: the body's declared slice shape when static.
Tensor empty_scan_output(const KernelContext& ctx, size_t body_out, int64_t axis, int64_t len, Shape lead) {
  const auto& outs = ctx.info().subgraph("body").graph().outputs;
  tessera::ir::Type t = body_out < outs.size() ? outs[body_out].type : tessera::ir::Type{};
  DataType dt = t.elem == DataType::kUndefined ? DataType::kFloat : t.elem;
  Shape s;
  if (t.shape && tessera::ir::shape_is_static(*t.shape))
    for (const auto& d : *t.shape) s.push_back(d.value);
  auto rank = static_cast<int64_t>(s.size()) + 1;
  size_t a = static_cast<size_t>(normalize_axis_or_throw(axis, rank, "scan_output_axes value"));
  s.insert(s.begin() + static_cast<ptrdiff_t>(a), len);
  s.insert(s.begin(), lead.begin(), lead.end());
  tessera::rt::shape_numel(s);
  return Tensor::zeros(dt, s);
}

size_t scan_input_count(const KernelContext& ctx, size_t given) {
  int64_t m = ctx.info().get_int("num_scan_inputs");
  if (m < 1 || static_cast<size_t>(m) > given)
    ctx.fail(fmt::format("num_scan_inputs is {} but must be between 1 and the {} inputs given", m, given));
  return static_cast<size_t>(m);
}

void scan9(KernelContext& ctx) {
  const size_t given = ctx.input_count();
  const size_t m = scan_input_count(ctx, given);
  const size_t n = given - m;
  if (ctx.output_count() < n)
    ctx.fail(fmt::format("the node has {} outputs but {} states", ctx.output_count(), n));
  const size_t k = ctx.output_count() - n;
  ScanSpec spec;
  std::vector<int64_t> in_axes = per_value(ctx, "scan_input_axes", m);
  std::vector<int64_t> in_dirs = per_value(ctx, "scan_input_directions", m);
  spec.out_axes = per_value(ctx, "scan_output_axes", k);
  std::vector<int64_t> out_dirs = per_value(ctx, "scan_output_directions", k);
  for (int64_t d : out_dirs) spec.out_reverse.push_back(d != 0);

  std::vector<Tensor> states, inputs;
  for (size_t i = 0; i < n; ++i) states.push_back(ctx.input(i));
  int64_t length = -1;
  for (size_t j = 0; j < m; ++j) {
    const Tensor& x = ctx.input(n + j);
    spec.in_axes.push_back(static_cast<size_t>(normalize_axis_or_throw(
        in_axes[j], x.rank(), fmt::format("scan_input_axes value of scan input {}", j))));
    spec.in_reverse.push_back(in_dirs[j] != 0);
    int64_t len = x.shape()[spec.in_axes[j]];
    if (length >= 0 && len != length)
      ctx.fail(fmt::format("scan input {} has {} steps along its scan axis but scan input 0 has {}", j, len,
                           length));
    length = len;
    inputs.push_back(x);
  }
  ScanResult r = run_scan(ctx, std::move(states), inputs, spec, length, length, k);
  for (size_t i = 0; i < n; ++i) ctx.set_output(i, r.states[i]);
  for (size_t j = 0; j < k; ++j) {
    Tensor y = r.scans[j].defined() ? r.scans[j] : empty_scan_output(ctx, n + j, spec.out_axes[j], 0, {});
    ctx.set_output(n + j, y);
  }
}

void scan8(KernelContext& ctx) {
  if (ctx.input_count() < 2) ctx.fail("Scan needs at least one state or scan input after sequence_lens");
  const size_t given = ctx.input_count() - 1;
  const size_t m = scan_input_count(ctx, given);
  const size_t n = given - m;
  if (ctx.output_count() < n)
    ctx.fail(fmt::format("the node has {} outputs but {} states", ctx.output_count(), n));
  const size_t k = ctx.output_count() - n;
  ScanSpec spec;
  for (int64_t d : per_value(ctx, "directions", m)) {
    spec.in_axes.push_back(0);  // the sequence axis once the batch axis is taken off
    spec.in_reverse.push_back(d != 0);
  }
  spec.out_axes.assign(k, 0);
  spec.out_reverse.assign(k, false);

  int64_t batch = -1, max_len = -1;
  for (size_t i = 0; i < given; ++i) {
    const Tensor& x = ctx.input(1 + i);
    if (x.rank() < (i < n ? 1 : 2))
      ctx.fail(fmt::format("input {} needs a batch axis{} but has shape {}", 1 + i,
                           i < n ? "" : " and a sequence axis", tessera::rt::shape_str(x.shape())));
    if (batch >= 0 && x.dim(0) != batch)
      ctx.fail(fmt::format("input {} has batch size {} but input 1 has {}", 1 + i, x.dim(0), batch));
    batch = x.dim(0);
    if (i >= n) {
      if (max_len >= 0 && x.dim(1) != max_len)
        ctx.fail(fmt::format("scan input {} has sequence length {} but the first has {}", i - n, x.dim(1),
                             max_len));
      max_len = x.dim(1);
    }
  }
  std::vector<int64_t> lens(static_cast<size_t>(batch), max_len);
  if (const Tensor* sl = ctx.optional_input(0)) {
    if (sl->dtype() != DataType::kInt64 || sl->numel() != batch)
      ctx.fail(fmt::format("input 'sequence_lens' must be int64 with {} values, got {} {}", batch,
                           tessera::ir::dtype_name(sl->dtype()), tessera::rt::shape_str(sl->shape())));
    for (int64_t b = 0; b < batch; ++b) {
      int64_t v = sl->data<int64_t>()[b];
      if (v < 0 || v > max_len)
        ctx.fail(fmt::format("sequence_lens[{}] is {}, outside [0, {}]", b, v, max_len));
      lens[static_cast<size_t>(b)] = v;
    }
  }

  std::vector<Tensor> outs(n + k);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> states, inputs;
    for (size_t i = 0; i < n; ++i) states.push_back(take_slice(ctx.input(1 + i), 0, b));
    for (size_t j = 0; j < m; ++j) inputs.push_back(take_slice(ctx.input(1 + n + j), 0, b));
    ScanResult r = run_scan(ctx, std::move(states), inputs, spec, lens[static_cast<size_t>(b)], max_len, k);
    for (size_t o = 0; o < n + k; ++o) {
      if (o >= n && !r.scans[o - n].defined()) continue;  // no step ran for this entry: it stays zeros
      const Tensor& piece = o < n ? r.states[o] : r.scans[o - n];
      if (!outs[o].defined()) {
        Shape s = piece.shape();
        s.insert(s.begin(), batch);
        tessera::rt::shape_numel(s);
        outs[o] = Tensor::zeros(piece.dtype(), s);
      }
      if (piece.dtype() != outs[o].dtype() || piece.numel() * batch != outs[o].numel())
        ctx.fail(fmt::format("output {} has shape {} for batch entry {}, unlike the others", o,
                             tessera::rt::shape_str(piece.shape()), b));
      copy_elements(piece, 0, outs[o], b * piece.numel(), piece.numel());
    }
  }
  for (size_t o = 0; o < n + k; ++o) {
    if (!outs[o].defined())
      outs[o] = o < n ? ctx.input(1 + o) : empty_scan_output(ctx, o, 0, max_len, {batch});
    ctx.set_output(o, outs[o]);
  }
}

}  // namespace

TESSERA_REGISTER_KERNELS(control_scan) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Scan", scan8, 8, 8));
  reg.add(KernelDef::fn("Scan", scan9, 9));
}
