// decompose_patch_conv (basic, CUDA): a convolution whose windows tile its input exactly (kernel ==
// stride, no pads, dilation 1, one group, H and W multiples of the window: ViT's 16x16 stride-16 patch
// embedding) is a matrix product of the input's patches, written with standard ops:
//   Reshape X [N, C, H, W] -> [N, C, oH, kH, oW, kW], Transpose (0, 2, 4, 1, 3, 5) -> the patches
//   [N, oH, oW, C, kH, kW], Reshape -> [N*oH*oW, C*kH*kW], Gemm by W [M, C*kH*kW] (transB) + B,
//   Reshape -> [N, oH, oW, M] (channels-last), Transpose (0, 3, 1, 2) -> Y [N, M, oH, oW].
// On the GPU the Transpose is one strided copy that moves kW-element runs and reads the NCHW input where
// it lies: the NHWC layout pass then has no convolution to give an input Transpose (14 us for ViT at batch
// 32), and the Gemm runs on cuBLASLt with the bias in its epilogue (cuDNN's implicit GEMM took 0.27 ms for
// these 7.4 GFLOP). The closing Transpose to NCHW is what the model reads; where it reads it through views
// that regroup the channels-last result (ViT's Reshape [N, M, oH*oW] and Transpose (0, 2, 1)),
// fold_transpose_reshape_chain makes all of it one Reshape. Windows of one pixel stay Conv (a 1x1
// convolution is already a product to cuDNN); W must be a constant (it is reshaped once). Every node made
// is a standard op that every engine runs.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "passes/graph_util.h"

namespace tessera::passes {
namespace {

bool all_equal(const std::optional<std::vector<int64_t>>& v, int64_t want) {
  if (!v) return true;
  for (int64_t x : *v)
    if (x != want) return false;
  return true;
}

// The patch geometry: X [N, C, H, W] and W [M, C, kH, kW] with kernel == stride tiling X exactly.
struct Patch {
  int64_t n, c, h, w, m, kh, kw;  // n -1: a batch that varies
  int64_t oh() const { return h / kh; }
  int64_t ow() const { return w / kw; }
};

std::optional<Patch> patch_conv(const RuleContext& ctx, const ir::Node& n) {
  if (!is_op(n, "Conv") || n.inputs.size() < 2 || n.outputs.size() != 1) return std::nullopt;
  if (onnx_opset(ctx.model) < 11) return std::nullopt;  // Gemm's optional C, Reshape's shape input
  const ir::Tensor* w = constant_value(ctx.graph, n.inputs[1]);
  auto xt = value_type(ctx, n.inputs[0]);
  if (!w || !xt || !xt->is_tensor() || !xt->shape || w->dims.size() != 4 || xt->shape->size() != 4)
    return std::nullopt;
  // The batch may vary (-1 in the Reshapes); C, H and W must be known.
  std::vector<int64_t> x;
  for (const auto& d : *xt->shape) x.push_back(d.is_static() ? d.value : -1);
  if (x[0] == 0) return std::nullopt;
  if (!is_compute_float(w->dtype) || elem_type(ctx, n.inputs[0]) != w->dtype) return std::nullopt;
  Patch p{x[0], x[1], x[2], x[3], w->dims[0], w->dims[2], w->dims[3]};
  for (int64_t d : {p.c, p.h, p.w, p.m, p.kh, p.kw})
    if (d <= 0) return std::nullopt;
  if (w->dims[1] != p.c || p.kh * p.kw < 2 || p.h % p.kh != 0 || p.w % p.kw != 0) return std::nullopt;
  if (attr_int(n, "group", 1) != 1) return std::nullopt;
  const ir::Attribute* pad = n.attr("auto_pad");
  if (pad && pad->s != "NOTSET" && pad->s != "VALID") return std::nullopt;
  if (!all_equal(attr_ints(n, "pads"), 0) || !all_equal(attr_ints(n, "dilations"), 1)) return std::nullopt;
  const std::vector<int64_t> window{p.kh, p.kw};
  auto strides = attr_ints(n, "strides");
  auto kernel = attr_ints(n, "kernel_shape");
  if (!strides || *strides != window || (kernel && *kernel != window)) return std::nullopt;
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    auto b = static_shape(ctx, n.inputs[2]);
    if (!b || *b != std::vector<int64_t>{p.m}) return std::nullopt;
  }
  return p;
}

// A node name no node of `g` has (ONNX wants them unique), derived from `base`.
std::string node_name(const ir::Graph& g, const std::string& base) {
  auto taken = [&](const std::string& s) {
    return std::any_of(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.name == s; });
  };
  std::string name = fresh_name(g, base);
  for (int k = 1; taken(name); ++k) name = fresh_name(g, base + "_" + std::to_string(k));
  return name;
}

ir::Node view(RuleContext& ctx, const std::string& op, const std::string& in, const std::string& base,
              std::vector<int64_t> param) {
  ir::Node r;
  r.op_type = op;
  r.name = node_name(ctx.graph, base + "_" + op);
  if (op == "Reshape") {
    const auto rank = static_cast<int64_t>(param.size());
    r.inputs = {in, add_initializer(ctx.graph, ir::make_tensor("", ir::DataType::kInt64, {rank}, param),
                                    base + "_shape")};
  } else {
    r.inputs = {in};
    r.attributes = {ir::Attribute::of_ints("perm", std::move(param))};
  }
  r.outputs = {fresh_name(ctx.graph, r.name + "_out")};
  return r;
}

bool decompose_patch_conv(RuleContext& ctx, size_t i) {
  auto p = patch_conv(ctx, ctx.graph.nodes[i]);
  if (!p) return false;
  const ir::Node conv = ctx.graph.nodes[i];
  const std::string base = conv.name.empty() ? conv.outputs[0] : conv.name;
  const int64_t rows = p->n < 0 ? -1 : p->n * p->oh() * p->ow(), k = p->c * p->kh * p->kw;

  ir::Node gemm;
  gemm.op_type = "Gemm";
  gemm.name = node_name(ctx.graph, base + "_Gemm");
  gemm.attributes = {ir::Attribute::of_int("transB", 1)};
  gemm.outputs = {fresh_name(ctx.graph, gemm.name + "_out")};
  gemm.metadata_props.emplace_back(kFusedFromKey, base);  // profiles tie the product to the Conv

  ir::Tensor wm = *constant_value(ctx.graph, conv.inputs[1]);
  wm.dims = {p->m, k};
  wm.name = fresh_name(ctx.graph, conv.inputs[1] + "_rows");
  const std::string w_rows = wm.name;
  ctx.graph.initializers.push_back(std::move(wm));

  // Each node made is added before the next name is drawn, so that fresh_name sees it.
  size_t at = i;
  auto add = [&](ir::Node n) {
    const std::string out = n.outputs[0];
    ctx.graph.add_node(std::move(n), at++);
    return out;
  };
  std::string v =
      add(view(ctx, "Reshape", conv.inputs[0], base, {p->n, p->c, p->oh(), p->kh, p->ow(), p->kw}));
  v = add(view(ctx, "Transpose", v, base, {0, 2, 4, 1, 3, 5}));
  v = add(view(ctx, "Reshape", v, base, {rows, k}));
  gemm.inputs = {v, w_rows};
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) gemm.inputs.push_back(conv.inputs[2]);
  v = add(std::move(gemm));
  v = add(view(ctx, "Reshape", v, base, {p->n, p->oh(), p->ow(), p->m}));
  ir::Node back = view(ctx, "Transpose", v, base, {0, 3, 1, 2});
  back.outputs = conv.outputs;
  replace_with(ctx.graph, at, std::move(back), {conv.id});
  return true;
}

}  // namespace
}  // namespace tessera::passes

TESSERA_REGISTER_RULES(decompose_patch_conv) {
  reg.add({"decompose_patch_conv",
           tessera::passes::OptLevel::kBasic,
           105,
           tessera::passes::decompose_patch_conv,
           {"cuda"}});
}
