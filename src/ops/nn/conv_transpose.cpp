// ConvTranspose: the gradient of Conv with respect to its input, used to upsample.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/infer_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::AttrType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// Spatial output size: output_shape when given, else stride*(in-1) + output_padding + window - pads.
Dim transpose_dim(const nn::Window& w, const std::vector<int64_t>& output_padding, const Dim& in, size_t i) {
  int64_t stride = w.strides[i];
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
    if (in.is_static()) return dim_mul(in, Dim::of(stride));
    return stride == 1 ? in : Dim::unknown();
  }
  if (!in.is_static() || w.kernel[i] < 0) return Dim::unknown();
  // stride*(in-1) + output_padding + dilation*(kernel-1) + 1 - pads, each step checked: the
  // attributes come from the file and may be anything.
  auto step = [](std::optional<int64_t> acc, auto op, int64_t v) { return acc ? op(*acc, v) : acc; };
  auto effective =
      step(step(step(std::optional<int64_t>(w.kernel[i]), checked_sub, 1), checked_mul, w.dilations[i]),
           checked_add, 1);
  auto out = step(std::optional<int64_t>(in.value), checked_sub, 1);
  out = step(out, checked_mul, stride);
  out = step(out, checked_add, output_padding[i]);
  out = effective ? step(out, checked_add, *effective) : std::nullopt;
  out = step(out, checked_sub, w.pads[i]);
  out = step(out, checked_sub, w.pads[i + w.kernel.size()]);
  return out ? Dim::of(*out) : Dim::unknown();
}

void infer_conv_transpose(InferenceContext& ctx) {
  const Shape* xs = input_shape(ctx, 0);
  const Shape* ws = input_shape(ctx, 1);
  int64_t group = ctx.attr_int("group", 1);
  if (group < 1) ctx.fail(fmt::format("group is {}; it must be at least 1", group));
  if (xs) nn::require_nc(ctx, 0, *xs, "X");
  if (ws) nn::require_nc(ctx, 1, *ws, "W");
  if (xs && ws && xs->size() != ws->size()) {
    ctx.fail_input(
        1, fmt::format("input 1 ('W') has rank {} {} but X has rank {} {}; W must be [C, M/group, kernel...]",
                       ws->size(), ir::shape_to_string(*ws), xs->size(), ir::shape_to_string(*xs)));
  }
  if (xs && ws && (*xs)[1].is_static() && (*ws)[0].is_static() && (*xs)[1].value != (*ws)[0].value) {
    ctx.fail_input(
        1, fmt::format("input 1 ('W') is for {} input channels (its first axis) but X has {} channels",
                       (*ws)[0].value, (*xs)[1].value));
  }
  Dim m = ws ? dim_mul((*ws)[1], Dim::of(group)) : Dim::unknown();
  if (ctx.has_input(2)) {
    if (const Shape* bs = input_shape(ctx, 2)) {
      if (bs->size() != 1)
        ctx.fail_input(2, "input 2 ('B') must be 1-D with one value per output channel, got " +
                              ir::shape_to_string(*bs));
      m = unify_dims(ctx, m, (*bs)[0],
                     "input 2 ('B') must have one value per output channel (W's second axis times group)");
    }
  }
  if (!xs) return propagate_elem(ctx, 0, 0, std::nullopt);
  size_t spatial = xs->size() - 2;
  std::vector<int64_t> kernel(spatial, -1);
  if (ws && ws->size() == xs->size()) {
    for (size_t i = 0; i < spatial; ++i) kernel[i] = (*ws)[i + 2].is_static() ? (*ws)[i + 2].value : -1;
  }
  auto w = nn::read_window(ctx, spatial, kernel);
  std::vector<int64_t> output_padding = ctx.attr_ints("output_padding", std::vector<int64_t>(spatial, 0));
  if (output_padding.size() != spatial) {
    ctx.fail(fmt::format("output_padding has {} entries but X has {} spatial dimensions",
                         output_padding.size(), spatial));
  }
  Shape y{(*xs)[0], m};
  if (ctx.has_attr("output_shape")) {
    // Either the spatial sizes alone or a full shape whose tail they are.
    std::vector<int64_t> os = ctx.attr_ints("output_shape");
    if (os.size() != spatial && os.size() != xs->size()) {
      ctx.fail(fmt::format("output_shape {} has {} entries but X has {} spatial dimensions", os, os.size(),
                           spatial));
    }
    for (size_t i = os.size() - spatial; i < os.size(); ++i) y.push_back(Dim::of(os[i]));
  } else {
    for (size_t i = 0; i < spatial; ++i) {
      Dim d = transpose_dim(*w, output_padding, (*xs)[i + 2], i);
      if (d.is_static() && d.value <= 0) {
        ctx.fail(
            fmt::format("the output would have size {} along spatial axis {}: pads {} remove more than the "
                        "transposed window adds",
                        d.value, i, w->pads));
      }
      y.push_back(d);
    }
  }
  propagate_elem(ctx, 0, 0, y);
}

}  // namespace

TESSERA_REGISTER_OPS(nn_conv_transpose) {
  for (int v : {1, 11, 22}) {
    OpSchema s("ConvTranspose", v);
    s.category(Category::kConvolution)
        .doc(
            "Transposed (fractionally strided) convolution: spreads each input value over a kernel-sized "
            "window "
            "of the output, which upsamples X by the strides. W is [C, M/group, kernel...].")
        .input("X", "T")
        .input("W", "T")
        .optional_input("B", "T")
        .output("Y", "T")
        .types("T", nn::float_types(v))
        .attr("auto_pad", "NOTSET")
        .attr_optional("dilations", AttrType::kInts)
        .attr("group", int64_t{1})
        .attr_optional("kernel_shape", AttrType::kInts)
        .attr_optional("output_padding", AttrType::kInts)
        .attr_optional("output_shape", AttrType::kInts)
        .attr_optional("pads", AttrType::kInts)
        .attr_optional("strides", AttrType::kInts)
        .infer(infer_conv_transpose);
    reg.add(std::move(s));
  }
}
