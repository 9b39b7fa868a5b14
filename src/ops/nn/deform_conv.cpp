// DeformConv: convolution whose sampling positions are shifted by learned offsets (deformable conv v1/v2).
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::AttrType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// offset is [N, offset_group * spatial * prod(kernel), out...] and mask [N, offset_group * prod(kernel),
// out...].
void check_side_input(const InferenceContext& ctx, size_t i, const char* name, const Shape& y,
                      int64_t per_position) {
  const Shape* s = input_shape(ctx, i);
  if (!s) return;
  if (s->size() != y.size()) {
    ctx.fail_input(i, fmt::format("input {} ('{}') has rank {} {} but the output has rank {}", i, name,
                                  s->size(), ir::shape_to_string(*s), y.size()));
  }
  if (per_position > 0 && (*s)[1].is_static() && (*s)[1].value != per_position) {
    ctx.fail_input(
        i, fmt::format("input {} ('{}') has {} channels; with this kernel and offset_group it needs {}", i,
                       name, (*s)[1].value, per_position));
  }
  for (size_t k = 2; k < y.size(); ++k) {
    unify_dims(ctx, (*s)[k], y[k],
               fmt::format("input {} ('{}') must match the output's spatial size on axis {}", i, name, k));
  }
}

void infer_deform_conv(InferenceContext& ctx) {
  nn::infer_conv(ctx, {.x = 0, .w = 1, .b = 3}, input_elem(ctx, 0));
  const ir::Type* t = ctx.output_type(0);
  if (!t || !t->shape) return;
  int64_t offset_group = ctx.attr_int("offset_group", 1);
  if (offset_group < 1) ctx.fail(fmt::format("offset_group is {}; it must be at least 1", offset_group));
  // Kernel positions per output position, when the kernel size is known.
  int64_t positions = 1;
  const Shape* ws = input_shape(ctx, 1);
  std::vector<int64_t> ks = ctx.attr_ints("kernel_shape");
  if (ks.empty() && ws) {
    for (size_t k = 2; k < ws->size(); ++k) ks.push_back((*ws)[k].is_static() ? (*ws)[k].value : -1);
  }
  for (int64_t k : ks) positions = (k < 0 || positions < 0) ? -1 : positions * k;
  if (ks.empty()) positions = -1;
  size_t spatial = t->shape->size() - 2;
  int64_t offsets = positions < 0 ? -1 : positions * offset_group * static_cast<int64_t>(spatial);
  check_side_input(ctx, 2, "offset", *t->shape, offsets);
  if (ctx.has_input(4))
    check_side_input(ctx, 4, "mask", *t->shape, positions < 0 ? -1 : positions * offset_group);
}

}  // namespace

TESSERA_REGISTER_OPS(nn_deform_conv) {
  for (int v : {19, 22}) {
    OpSchema s("DeformConv", v);
    s.category(Category::kConvolution)
        .doc(
            "Deformable convolution: each kernel tap samples X at its regular position plus a learned offset "
            "(bilinearly interpolated), optionally scaled by a mask.")
        .input("X", "T")
        .input("W", "T")
        .input("offset", "T")
        .optional_input("B", "T")
        .optional_input("mask", "T")
        .output("Y", "T")
        .types("T", nn::float_types(v))
        .attr_optional("dilations", AttrType::kInts)
        .attr("group", int64_t{1})
        .attr_optional("kernel_shape", AttrType::kInts)
        .attr("offset_group", int64_t{1})
        .attr_optional("pads", AttrType::kInts)
        .attr_optional("strides", AttrType::kInts)
        .infer(infer_deform_conv);
    reg.add(std::move(s));
  }
}
