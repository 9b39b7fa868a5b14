#include "ops/nn/window.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/infer_util.h"

namespace tessera::ops::nn {

using ir::Dim;
using ir::Shape;

namespace {

// A list attribute that, when set, needs `count` entries each at least `min`; `fill` otherwise.
std::vector<int64_t> read_list(const InferenceContext& ctx, std::string_view name, size_t count, int64_t min,
                               int64_t fill, std::string_view what) {
  if (!ctx.has_attr(name)) return std::vector<int64_t>(count, fill);
  std::vector<int64_t> v = ctx.attr_ints(name);
  if (v.size() != count) {
    ctx.fail(fmt::format("{} has {} entries but X has {} spatial dimensions{}", name, v.size(),
                         name == "pads" ? count / 2 : count,
                         name == "pads" ? " (pads needs a begin and an end for each)" : ""));
  }
  for (int64_t x : v) {
    if (x < min)
      ctx.fail(fmt::format("{} {} has a value below {}: {} must be {}", name, v, min, what,
                           min == 0 ? "non-negative" : "positive"));
  }
  return v;
}

}  // namespace

std::optional<Window> read_window(const InferenceContext& ctx, size_t spatial,
                                  std::optional<std::vector<int64_t>> kernel) {
  Window w;
  if (ctx.has_attr("kernel_shape")) {
    w.kernel = read_list(ctx, "kernel_shape", spatial, 1, 1, "each kernel size");
    // A kernel_shape that contradicts the weight is a model error, not something to pick between.
    if (kernel) {
      for (size_t i = 0; i < spatial && i < kernel->size(); ++i) {
        if ((*kernel)[i] >= 0 && (*kernel)[i] != w.kernel[i]) {
          ctx.fail(fmt::format("kernel_shape {} does not match the spatial sizes of the weight {}", w.kernel,
                               *kernel));
        }
      }
    }
  } else if (kernel) {
    w.kernel = *kernel;
  } else {
    w.kernel.assign(spatial, -1);  // not known: spatial output sizes stay unknown
  }
  w.strides = read_list(ctx, "strides", spatial, 1, 1, "each stride");
  w.dilations = read_list(ctx, "dilations", spatial, 1, 1, "each dilation");
  w.auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (w.auto_pad != "NOTSET" && w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER" &&
      w.auto_pad != "VALID") {
    ctx.fail(fmt::format("auto_pad is '{}'; it must be NOTSET, SAME_UPPER, SAME_LOWER or VALID", w.auto_pad));
  }
  // Explicit pads only apply with NOTSET; with auto_pad they are computed (and ignored if given).
  w.pads = w.auto_pad == "NOTSET" ? read_list(ctx, "pads", 2 * spatial, 0, 0, "each pad")
                                  : std::vector<int64_t>(2 * spatial, 0);
  w.ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  return w;
}

Dim window_output_dim(const Window& w, const Dim& in, size_t i) {
  int64_t stride = w.strides[i];
  bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
  if (same) {
    // SAME padding makes the output ceil(in / stride) whatever the kernel.
    if (in.is_static()) return Dim::of(in.value / stride + (in.value % stride != 0 ? 1 : 0));
    return stride == 1 ? in : Dim::unknown();
  }
  int64_t k = w.kernel[i];
  if (k < 0) return Dim::unknown();
  int64_t pb = w.pads[i], pe = w.pads[i + w.kernel.size()];
  if (!in.is_static()) {
    // A 1-wide window with stride 1 and no padding keeps a symbolic size as it is.
    bool identity = (k == 1 || w.dilations[i] == 0) && stride == 1 && pb == 0 && pe == 0;
    return identity ? in : Dim::unknown();
  }
  return conv_output_dim(in, k, stride, w.dilations[i], pb, pe, w.ceil_mode);
}

Shape window_output_shape(const InferenceContext& ctx, const Shape& x, const Dim& channels,
                          const std::optional<Window>& w) {
  Shape out{x[0], channels};
  for (size_t i = 2; i < x.size(); ++i) {
    if (!w) {
      out.push_back(Dim::unknown());
      continue;
    }
    size_t s = i - 2;
    Dim d = window_output_dim(*w, x[i], s);
    if (x[i].is_static() && w->kernel[s] >= 0 && w->auto_pad != "SAME_UPPER" && w->auto_pad != "SAME_LOWER") {
      // Attribute values come from the file: sizes past int64 are reported, never computed with.
      auto km1 = checked_sub(w->kernel[s], 1);
      auto span = km1 ? checked_mul(w->dilations[s], *km1) : std::nullopt;
      auto effective = span ? checked_add(*span, 1) : std::nullopt;
      auto padded = checked_add(x[i].value, w->pads[s]);
      padded = padded ? checked_add(*padded, w->pads[s + w->kernel.size()]) : std::nullopt;
      if (!effective || !padded) {
        ctx.fail(fmt::format("kernel {}, dilation {} and pads along spatial axis {} give sizes beyond int64",
                             w->kernel[s], w->dilations[s], s));
      }
      if (*effective > *padded) {
        ctx.fail(
            fmt::format("the window spans {} along spatial axis {} (kernel {}, dilation {}) but X is only {} "
                        "there with padding",
                        *effective, s, w->kernel[s], w->dilations[s], *padded));
      }
    }
    out.push_back(d);
  }
  return out;
}

void require_nc(const InferenceContext& ctx, size_t input, const Shape& x, std::string_view name) {
  if (x.size() >= 2) return;
  ctx.fail_input(
      input, fmt::format("input {} ('{}') has rank {} {}; it needs at least batch and channel axes", input,
                         name, x.size(), ir::shape_to_string(x)));
}

std::vector<std::string> float_types(int version) {
  return version >= 22 ? types::kFloatBf16 : types::kFloat;
}

}  // namespace tessera::ops::nn

namespace tessera::ops::nn {

void infer_conv(InferenceContext& ctx, const ConvInputs& in, ir::DataType elem) {
  const Shape* xs = input_shape(ctx, in.x);
  const Shape* ws = input_shape(ctx, in.w);
  int64_t group = ctx.attr_int("group", 1);
  if (group < 1) ctx.fail(fmt::format("group is {}; it must be at least 1", group));
  if (xs) require_nc(ctx, in.x, *xs, in.x_name);
  if (ws) require_nc(ctx, in.w, *ws, in.w_name);
  if (xs && ws && xs->size() != ws->size()) {
    ctx.fail_input(
        in.w, fmt::format("input {} ('{}') has rank {} {} but {} has rank {} {}; {} must be [M, C/group, "
                          "kernel...] with one kernel size per spatial axis of {}",
                          in.w, in.w_name, ws->size(), ir::shape_to_string(*ws), in.x_name, xs->size(),
                          ir::shape_to_string(*xs), in.w_name, in.x_name));
  }
  Dim m = ws ? (*ws)[0] : Dim::unknown();
  if (xs && ws && (*xs)[1].is_static() && (*ws)[1].is_static() &&
      checked_mul((*ws)[1].value, group) != std::optional<int64_t>((*xs)[1].value)) {
    ctx.fail_input(
        in.w, fmt::format("input {} ('{}') has {} input channels per group but {} has {} channels and group "
                          "is {}",
                          in.w, in.w_name, (*ws)[1].value, in.x_name, (*xs)[1].value, group));
  }
  if (m.is_static() && m.value % group != 0) {
    ctx.fail_input(in.w, fmt::format("input {} ('{}') has {} output channels, which group {} does not divide",
                                     in.w, in.w_name, m.value, group));
  }
  if (in.b >= 0 && ctx.has_input(in.b)) {
    if (const Shape* bs = input_shape(ctx, in.b)) {
      if (bs->size() != 1) {
        ctx.fail_input(
            in.b, fmt::format("input {} ('{}') must be 1-D with one value per output channel, got {}", in.b,
                              in.b_name, ir::shape_to_string(*bs)));
      }
      m = unify_dims(ctx, m, (*bs)[0],
                     fmt::format("input {} ('{}') must have one value per output channel of {}", in.b,
                                 in.b_name, in.w_name));
    }
  }
  if (!xs) {
    std::optional<Shape> shape;
    if (ws) {
      shape = Shape(ws->size(), Dim::unknown());
      (*shape)[1] = m;
    }
    set_output(ctx, 0, elem, shape);
    return;
  }
  size_t spatial = xs->size() - 2;
  std::vector<int64_t> kernel(spatial, -1);
  if (ws) {
    for (size_t i = 0; i < spatial; ++i) kernel[i] = (*ws)[i + 2].is_static() ? (*ws)[i + 2].value : -1;
  }
  auto w = read_window(ctx, spatial, kernel);
  set_output(ctx, 0, elem, window_output_shape(ctx, *xs, m, w));
}

}  // namespace tessera::ops::nn
