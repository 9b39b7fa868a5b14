// Resize: scales the given axes of a tensor by interpolation, to given scales or to given sizes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "ops/image/float_constant.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::AttrType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

constexpr size_t kRoi = 1, kSizes = 3;

void check_choice(const InferenceContext& ctx, const char* attr, const std::string& fallback,
                  const std::set<std::string>& allowed) {
  std::string value = ctx.attr_string(attr, fallback);
  if (allowed.count(value)) return;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  ctx.fail(fmt::format("attribute '{}' is '{}'; it must be one of {}", attr, value, list));
}

void check_attrs(const InferenceContext& ctx, int v) {
  if (v < 11) return check_choice(ctx, "mode", "nearest", {"nearest", "linear"});
  check_choice(ctx, "mode", "nearest", {"nearest", "linear", "cubic"});
  std::set<std::string> ctm = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                               "tf_crop_and_resize"};
  if (v < 13) ctm.insert("tf_half_pixel_for_nn");  // removed in opset 13
  if (v >= 19) ctm.insert("half_pixel_symmetric");
  check_choice(ctx, "coordinate_transformation_mode", "half_pixel", ctm);
  check_choice(ctx, "nearest_mode", "round_prefer_floor",
               {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  if (v >= 18)
    check_choice(ctx, "keep_aspect_ratio_policy", "stretch", {"stretch", "not_larger", "not_smaller"});
}

// Elements of 1-D input i: 0 when absent, from the constant or the static shape, else unknown.
std::optional<int64_t> element_count(const InferenceContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return 0;
  if (const auto* t = ctx.input_constant(i)) return t->numel();
  const Shape* s = input_shape(ctx, i);
  if (s && s->size() == 1 && (*s)[0].is_static()) return (*s)[0].value;
  return std::nullopt;
}

// The resized axes: attribute 'axes' (opset 18+, normalised, no repeats), else every axis.
std::vector<int64_t> resize_axes(const InferenceContext& ctx, int v, int64_t rank) {
  std::vector<int64_t> axes;
  if (v >= 18 && ctx.has_attr("axes")) {
    for (int64_t a : ctx.attr_ints("axes")) {
      int64_t n = normalize_axis(ctx, a, rank, "axes");
      if (std::find(axes.begin(), axes.end(), n) != axes.end()) {
        ctx.fail(fmt::format("attribute 'axes' names axis {} twice", a));
      }
      axes.push_back(n);
    }
    return axes;
  }
  for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  return axes;
}

// Output sizes from the 'sizes' input; with keep_aspect_ratio_policy not_larger/not_smaller one common
// scale (the smallest/largest of sizes[i] / input[i]) is applied to every resized axis.
void sizes_to_shape(const InferenceContext& ctx, int v, const std::vector<int64_t>& axes, Shape& out) {
  auto sizes = shape_value(ctx, kSizes);
  if (!sizes) {
    for (int64_t a : axes) out[a] = Dim::unknown();
    return;
  }
  if (sizes->size() != axes.size()) {
    ctx.fail_input(kSizes,
                   fmt::format("sizes has {} values for {} resized axes", sizes->size(), axes.size()));
  }
  if (auto c = constant_ints(ctx, kSizes)) {
    for (int64_t d : *c) {
      if (d < 0) ctx.fail_input(kSizes, fmt::format("sizes has a negative value {}", d));
    }
  }
  std::string policy = v >= 18 ? ctx.attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy == "stretch") {
    for (size_t k = 0; k < axes.size(); ++k) out[axes[k]] = (*sizes)[k];
    return;
  }
  std::optional<double> scale;
  for (size_t k = 0; k < axes.size(); ++k) {
    const Dim& in = out[axes[k]];
    const Dim& want = (*sizes)[k];
    if (!in.is_static() || !want.is_static() || in.value == 0) {
      scale.reset();
      break;
    }
    double s = static_cast<double>(want.value) / static_cast<double>(in.value);
    scale = !scale ? s : policy == "not_larger" ? std::min(*scale, s) : std::max(*scale, s);
  }
  for (int64_t a : axes) {
    out[a] = scale
                 ? Dim::of(static_cast<int64_t>(std::floor(*scale * static_cast<double>(out[a].value) + 0.5)))
                 : Dim::unknown();
  }
}

// Output sizes from the 'scales' input: floor(input * scale), times the roi's extent for tf_crop_and_resize.
void scales_to_shape(const InferenceContext& ctx, int v, size_t scales_index,
                     const std::vector<int64_t>& axes, Shape& out) {
  auto scales = constant_floats(ctx, scales_index);
  if (scales && scales->size() != axes.size()) {
    ctx.fail_input(scales_index,
                   fmt::format("scales has {} values for {} resized axes", scales->size(), axes.size()));
  }
  bool crop =
      v >= 11 && ctx.attr_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize";
  std::optional<std::vector<double>> roi = crop ? constant_floats(ctx, kRoi) : std::nullopt;
  if (roi && roi->size() != 2 * axes.size()) {
    ctx.fail_input(
        kRoi, fmt::format("roi has {} values; tf_crop_and_resize needs a start and an end for each of the "
                          "{} resized axes",
                          roi->size(), axes.size()));
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    Dim& d = out[axes[k]];
    if (!scales) {
      d = Dim::unknown();
      continue;
    }
    double s = (*scales)[k];
    if (!(s > 0)) ctx.fail_input(scales_index, fmt::format("scales must be positive, got {}", s));
    if (crop && !roi) {
      d = Dim::unknown();
      continue;
    }
    double extent = roi ? (*roi)[axes.size() + k] - (*roi)[k] : 1.0;
    if (s == 1.0 && extent == 1.0) continue;  // unchanged, symbolic or not
    d = d.is_static() ? Dim::of(static_cast<int64_t>(std::floor(static_cast<double>(d.value) * extent * s)))
                      : Dim::unknown();
  }
}

void infer_resize(InferenceContext& ctx) {
  int v = ctx.schema().since_version();
  check_attrs(ctx, v);
  size_t scales_index = v >= 11 ? 2 : 1;
  std::optional<int64_t> n_scales = element_count(ctx, scales_index);
  std::optional<int64_t> n_sizes = v >= 11 ? element_count(ctx, kSizes) : std::optional<int64_t>(0);
  if (n_scales && n_sizes && *n_scales > 0 && *n_sizes > 0) {
    ctx.fail("both scales and sizes are given; give only one (leave the other empty or omitted)");
  }
  if (n_scales && n_sizes && *n_scales == 0 && *n_sizes == 0) {
    ctx.fail(v >= 11 ? "neither scales nor sizes is given; one of them must say the output size"
                     : "scales is empty; it must give one scale per dimension");
  }
  bool by_sizes = !n_scales || *n_scales == 0;
  const Shape* x = input_shape(ctx, 0);
  if (!x) {
    // Without 'axes', scales or sizes have one value per dimension, which gives the rank.
    std::optional<int64_t> n = by_sizes ? n_sizes : n_scales;
    bool all_axes = v < 18 || !ctx.has_attr("axes");
    if (!all_axes || !n || *n <= 0) return propagate_elem(ctx, 0, 0, std::nullopt);
    return propagate_elem(ctx, 0, 0, Shape(static_cast<size_t>(*n), Dim::unknown()));
  }
  Shape out = *x;
  std::vector<int64_t> axes = resize_axes(ctx, v, static_cast<int64_t>(x->size()));
  if (by_sizes) {
    sizes_to_shape(ctx, v, axes, out);
  } else {
    scales_to_shape(ctx, v, scales_index, axes, out);
  }
  propagate_elem(ctx, 0, 0, std::move(out));
}

OpSchema resize(int v) {
  OpSchema s("Resize", v);
  s.category(Category::kImage)
      .doc(
          "Resizes a tensor by nearest, linear or cubic interpolation, to the output size that 'sizes' gives "
          "or that 'scales' implies (floor(input size * scale)), optionally along some axes only.")
      .input("X", v >= 11 ? "T1" : "T")
      .output("Y", v >= 11 ? "T1" : "T")
      .attr("mode", "nearest");
  if (v < 11) {
    return s.input("scales", "tensor(float)").types("T", types::kAllTensor).infer(infer_resize);
  }
  if (v >= 13) {
    s.optional_input("roi", "T2").optional_input("scales", "tensor(float)");
  } else {
    s.input("roi", "T2").input("scales", "tensor(float)");
  }
  s.optional_input("sizes", "tensor(int64)")
      .attr("coordinate_transformation_mode", "half_pixel")
      .attr("cubic_coeff_a", -0.75f)
      .attr("exclude_outside", int64_t{0})
      .attr("extrapolation_value", 0.0f)
      .attr("nearest_mode", "round_prefer_floor");
  if (v >= 18) {
    s.attr("antialias", int64_t{0})
        .attr_optional("axes", AttrType::kInts)
        .attr("keep_aspect_ratio_policy", "stretch");
  }
  return s.types("T1", v >= 13 ? types::kAllTensorIr4 : types::kAllTensor)
      .types("T2", types::kFloat)
      .infer(infer_resize);
}

}  // namespace

TESSERA_REGISTER_OPS(image_resize) {
  for (int v : {10, 11, 13, 18, 19}) reg.add(resize(v));
}
