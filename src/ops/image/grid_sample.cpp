// GridSample: samples an input at the normalised coordinates of a grid (spatial transformer networks).
#include <fmt/format.h>

#include <set>
#include <string>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void check_modes(InferenceContext& ctx, int version) {
  std::string mode = ctx.attr_string("mode");
  // Opset 20 renamed bilinear/bicubic to linear/cubic when it went N-dimensional.
  std::set<std::string> modes = version >= 20 ? std::set<std::string>{"linear", "nearest", "cubic"}
                                              : std::set<std::string>{"bilinear", "nearest", "bicubic"};
  if (!modes.count(mode)) {
    if (version >= 20 && (mode == "bilinear" || mode == "bicubic")) {
      ctx.warn(fmt::format("mode '{}' is the opset-16 name; from opset 20 it is '{}'", mode,
                           mode == "bilinear" ? "linear" : "cubic"));
    } else {
      ctx.fail(fmt::format("attribute 'mode' is '{}'; it must be one of {}", mode,
                           version >= 20 ? "linear, nearest, cubic" : "bilinear, nearest, bicubic"));
    }
  }
  std::string padding = ctx.attr_string("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection") {
    ctx.fail(
        fmt::format("attribute 'padding_mode' is '{}'; it must be zeros, border or reflection", padding));
  }
}

// X [N, C, D1..Dr] and grid [N, D1_out..Dr_out, r] give Y [N, C, D1_out..Dr_out]; before opset 20 r is 2.
void infer_grid_sample(InferenceContext& ctx) {
  int v = ctx.schema().since_version();
  check_modes(ctx, v);
  if (v < 20) {
    require_rank(ctx, 0, 4, "X ([N, C, H, W])");
    require_rank(ctx, 1, 4, "grid ([N, H_out, W_out, 2])");
  }
  const Shape* x = input_shape(ctx, 0);
  const Shape* grid = input_shape(ctx, 1);
  if (x && x->size() < 3) {
    ctx.fail_input(0, fmt::format("X must be [N, C, spatial...], got {}", tessera::ir::shape_to_string(*x)));
  }
  if (x && grid && grid->size() != x->size()) {
    ctx.fail_input(1, fmt::format("grid {} must have the rank of X {}", tessera::ir::shape_to_string(*grid),
                                  tessera::ir::shape_to_string(*x)));
  }
  std::optional<size_t> rank;
  if (x) rank = x->size();
  if (grid) rank = grid->size();
  if (!rank) return set_output(ctx, 0, input_elem(ctx, 0), std::nullopt);
  size_t spatial = *rank - 2;
  if (grid && grid->back().is_static() && grid->back().value != static_cast<int64_t>(spatial)) {
    ctx.fail_input(1, fmt::format("the last dimension of grid {} must be {}, one coordinate per spatial axis",
                                  tessera::ir::shape_to_string(*grid), spatial));
  }
  Dim n = x ? (*x)[0] : Dim::unknown();
  if (grid) n = unify_dims(ctx, n, (*grid)[0], "the batch sizes of X and grid differ");
  Shape out{n, x ? (*x)[1] : Dim::unknown()};
  for (size_t i = 0; i < spatial; ++i) out.push_back(grid ? (*grid)[1 + i] : Dim::unknown());
  set_output(ctx, 0, input_elem(ctx, 0), std::move(out));
}

}  // namespace

TESSERA_REGISTER_OPS(image_grid_sample) {
  const char* doc =
      "Samples X at the normalised coordinates ([-1, 1] per spatial axis) that 'grid' gives for each output "
      "position, interpolating and padding as the attributes say.";
  struct Version {
    int v;
    const char* mode;
    std::vector<std::string> data, out;
  };
  for (const auto& [v, mode, data, out] : {Version{16, "bilinear", types::kAllTensor, types::kFloat},
                                           Version{20, "linear", types::kAllTensor, types::kFloat},
                                           Version{22, "linear", types::kAllTensorIr4, types::kFloatBf16}}) {
    // Opset 16 as libonnx 1.12 (the test oracle) spells it: grid shares X's parameter and Y has the
    // float one; later releases swapped this to grid T2 / Y T1, which opsets 20 and 22 follow.
    reg.add(OpSchema("GridSample", v)
                .category(Category::kImage)
                .doc(doc)
                .input("X", "T1")
                .input("grid", v == 16 ? "T1" : "T2")
                .output("Y", v == 16 ? "T2" : "T1")
                .attr("align_corners", int64_t{0})
                .attr("mode", mode)
                .attr("padding_mode", "zeros")
                .types("T1", data)
                .types("T2", out)
                .infer(infer_grid_sample));
  }
}
