#include "profiler/work.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "profiler/work_util.h"

namespace tessera::profiler {

using namespace detail;

namespace {

// Views: the output aliases the input, so nothing has to move (0 bytes, 0 FLOPs).
const std::set<std::string, std::less<>> kViews = {"Reshape",   "Flatten",  "Squeeze",
                                                   "Unsqueeze", "Identity", "Dropout"};
// Only the output is written; the input's data is not read.
const std::set<std::string, std::less<>> kMetadata = {"Shape",    "Size",    "ConstantOfShape",
                                                      "Constant", "EyeLike", "Range"};
// Data movement: 0 FLOPs, every input and output once.
const std::set<std::string, std::less<>> kMovement = {"Transpose",
                                                      "Concat",
                                                      "Split",
                                                      "Slice",
                                                      "Gather",
                                                      "GatherElements",
                                                      "GatherND",
                                                      "ScatterND",
                                                      "Scatter",
                                                      "ScatterElements",
                                                      "Pad",
                                                      "Expand",
                                                      "Tile",
                                                      "Cast",
                                                      "CastLike",
                                                      "DepthToSpace",
                                                      "SpaceToDepth",
                                                      "ReorderToBlocked",
                                                      "ReorderFromBlocked",
                                                      "Trilu",
                                                      "Compress",
                                                      "OneHot",
                                                      "ReverseSequence"};
// Data movement that reads at most what it writes from its first input (a few rows of a table).
const std::set<std::string, std::less<>> kSelective = {"Slice", "Gather", "GatherElements", "GatherND",
                                                       "Compress"};
const std::set<std::string, std::less<>> kConvs = {"Conv", "FusedConv", "NhwcConv", "BlockedConv"};
const std::set<std::string, std::less<>> kPools = {"MaxPool",           "AveragePool",     "LpPool",
                                                   "NhwcMaxPool",       "NhwcAveragePool", "BlockedMaxPool",
                                                   "BlockedAveragePool"};

// Every distinct input and output value once (a value read through two inputs, as a packed Q/K/V, is
// read once). `selective`: the first input counts at most the bytes of the outputs. `inputs`: whether
// the inputs' data is read at all (not for Shape). nullopt when a value's size is unknown.
std::optional<double> moved_bytes(const ir::Node& n, const ValueInfos& values, bool selective,
                                  bool inputs = true) {
  std::set<std::string_view> seen;
  double out_bytes = 0, total = 0;
  for (const auto& name : n.outputs) {
    if (name.empty() || !seen.insert(name).second) continue;
    const TensorInfo* t = info_of(values, name);
    auto b = t ? t->bytes() : std::nullopt;
    if (!b) return std::nullopt;
    out_bytes += *b;
  }
  total = out_bytes;
  if (!inputs) return total;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const std::string& name = n.inputs[i];
    if (name.empty() || !seen.insert(name).second) continue;
    const TensorInfo* t = info_of(values, name);
    auto b = t ? t->bytes() : std::nullopt;
    if (!b) return std::nullopt;
    total += selective && i == 0 ? std::min(*b, out_bytes) : *b;
  }
  return total;
}

// Per output element: a bias and a tensor added (Z), then the activation.
double epilogue_flops(const ir::Node& n, size_t bias_input, size_t z_input) {
  double f = has_input(n, bias_input) ? 1 : 0;
  if (z_input != SIZE_MAX && has_input(n, z_input)) f += 1;
  if (const ir::Attribute* a = n.attr("activation")) f += activation_flops(a->s);
  return f;
}

// Conv, FusedConv, BlockedConv: W [M, C/group, k...]; NhwcConv: W [M, kH, kW, C/group]. The output's
// pixels (batch times spatial) by its layout: NCHW, blocked [N, M/b, H, W, b] or NHWC.
std::optional<double> conv_flops(const ir::Node& n, const ValueInfos& values) {
  const Dims* w = input_dims(n, values, 1);
  const Dims* y = output_dims(n, values, 0);
  if (!w || !y || w->size() < 2 || y->size() < 2) return std::nullopt;
  const bool nhwc = n.op_type == "NhwcConv";
  const double m = static_cast<double>((*w)[0]);
  const double per_output = product(*w, 1);  // C/group times the kernel window, in either layout
  double pixels = 0;
  if (nhwc)
    pixels = product(*y, 0, y->size() - 1);
  else if (n.op_type == "BlockedConv" && y->size() == 5)
    pixels = static_cast<double>((*y)[0]) * (*y)[2] * (*y)[3];
  else
    pixels = static_cast<double>((*y)[0]) * product(*y, 2);
  const double outputs = pixels * m;
  return 2 * outputs * per_output + outputs * epilogue_flops(n, 2, 3);
}

// X [N, C, spatial...] scattered through W [C, M/group, k...]: every input element meets M/group times
// the window.
std::optional<double> conv_transpose_flops(const ir::Node& n, const ValueInfos& values) {
  const Dims* x = input_dims(n, values, 0);
  const Dims* w = input_dims(n, values, 1);
  const Dims* y = output_dims(n, values, 0);
  if (!x || !w || !y || w->size() < 2) return std::nullopt;
  return 2 * product(*x) * product(*w, 1) + (has_input(n, 2) ? product(*y) : 0);
}

// The reduction length K of a matrix product with A [..., M, K] (transposed: [..., K, M]); a 1-D A is
// [K]. Every output element is one dot product of length K, batch broadcasting included.
std::optional<double> matmul_flops(const ir::Node& n, const ValueInfos& values, bool trans_a,
                                   double epilogue) {
  const Dims* a = input_dims(n, values, 0);
  const Dims* y = output_dims(n, values, 0);
  if (!a || !y || a->empty()) return std::nullopt;
  const double k = static_cast<double>(trans_a && a->size() >= 2 ? (*a)[a->size() - 2] : a->back());
  return 2 * product(*y) * k + product(*y) * epilogue;
}

// Einsum: every term of the sum of products is one multiply per operand after the first and one add
// (2 per term for two operands, a multiply-add; 1 for a single operand's sum). The terms are the
// product of every index's size, the dimensions an ellipsis stands for taken from the output.
std::optional<double> einsum_flops(const ir::Node& n, const ValueInfos& values) {
  const ir::Attribute* eq = n.attr("equation");
  const Dims* y = output_dims(n, values, 0);
  if (!eq || !y) return std::nullopt;
  std::string text;
  for (char c : eq->s)
    if (c != ' ') text += c;
  const size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  std::map<char, int64_t> sizes;
  std::map<char, int> uses;
  size_t operand = 0, start = 0;
  for (size_t end = 0; end <= lhs.size(); ++end) {
    if (end < lhs.size() && lhs[end] != ',') continue;
    const std::string term = lhs.substr(start, end - start);
    const Dims* x = input_dims(n, values, operand);
    if (!x) return std::nullopt;
    const size_t dots = term.find("...");
    const size_t letters = term.size() - (dots == std::string::npos ? 0 : 3);
    const size_t skipped = x->size() >= letters ? x->size() - letters : 0;  // the ellipsis' axes
    for (size_t k = 0, axis = 0; k < term.size(); ++k) {
      if (dots != std::string::npos && k == dots) {
        k += 2, axis += skipped;
        continue;
      }
      if (axis >= x->size()) return std::nullopt;
      sizes[term[k]] = std::max(sizes[term[k]], (*x)[axis++]);
      uses[term[k]]++;
    }
    operand++, start = end + 1;
  }
  // The output's letters: as written, or (implicit form) those used once; the rest of its axes are
  // the ellipsis'.
  std::string out;
  if (arrow != std::string::npos)
    out = text.substr(arrow + 2);
  else
    for (const auto& [c, u] : uses)
      if (u == 1) out += c;
  double out_letters = 1;
  for (char c : out)
    if (c != '.') out_letters *= static_cast<double>(sizes.count(c) ? sizes[c] : 1);
  double terms = out_letters > 0 ? product(*y) / out_letters : 0;  // the ellipsis' axes
  for (const auto& [c, size] : sizes) terms *= static_cast<double>(size);
  return terms * static_cast<double>(std::max<size_t>(operand, 1));
}

// Resize, per output element over the k axes it resizes: nearest 0 (a copy); linear 2^k - 1
// interpolations of 3 FLOPs (subtract, multiply, add); cubic a multiply-add per each of the 4^k taps.
std::optional<double> resize_flops(const ir::Node& n, const ValueInfos& values) {
  const Dims* x = input_dims(n, values, 0);
  const Dims* y = output_dims(n, values, 0);
  if (!x || !y || x->size() != y->size()) return std::nullopt;
  int k = 0;
  for (size_t d = 0; d < x->size(); ++d) k += (*x)[d] != (*y)[d];
  const ir::Attribute* mode = n.attr("mode");
  const std::string m = mode ? mode->s : "nearest";
  const double per = m == "linear" ? 3 * (std::pow(2.0, k) - 1) : m == "cubic" ? 2 * std::pow(4.0, k) : 0;
  return product(*y) * per;
}

// Reductions over their input: FLOPs per input element.
std::optional<double> reduction_flops(std::string_view op) {
  if (op == "ReduceSumSquare" || op == "ReduceL2" || op == "ReduceL1" || op == "ReduceLogSumExp") return 2;
  if (op.starts_with("Reduce") || op == "ArgMax" || op == "ArgMin" || op == "CumSum" ||
      op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "GlobalLpPool")
    return 1;
  return std::nullopt;
}

std::string per_element(std::string_view what, double f) {
  return std::string(what) + " " +
         (f == static_cast<int64_t>(f) ? std::to_string(static_cast<int64_t>(f)) : std::to_string(f)) +
         "/element";
}

// The FLOPs of the node and the rule that counted them; `flops` stays nullopt where none applies.
void count_flops(const ir::Node& n, const ValueInfos& values, Work& w) {
  const std::string& op = n.op_type;
  auto out_elems = [&]() -> std::optional<double> {
    const Dims* y = output_dims(n, values, 0);
    return y ? std::optional<double>(product(*y)) : std::nullopt;
  };
  if (kConvs.count(op)) {
    w.rule = "convolution";
    w.flops = conv_flops(n, values);
  } else if (op == "ConvTranspose") {
    w.rule = "transposed convolution";
    w.flops = conv_transpose_flops(n, values);
  } else if (op == "MatMul" || op == "MatMulBias" || op == "MatMulBiasGelu" || op == "FusedMatMul" ||
             op == "Gemm") {
    w.rule = "matrix product";
    const bool trans_a = int_attr(n, "transA", 0) != 0;
    double epilogue = op == "MatMulBias" ? 1 : op == "MatMulBiasGelu" ? 1 + activation_flops("GeluTanh") : 0;
    if (op == "Gemm" && has_input(n, 2)) epilogue = 1;
    w.flops = matmul_flops(n, values, trans_a, epilogue);
  } else if (is_attention(n)) {
    bool causal = false;
    w.flops = attention_flops(n, values, causal);
    w.rule = causal ? "attention (causal)" : "attention";
  } else if (op == "Einsum") {
    w.rule = "einsum";
    w.flops = einsum_flops(n, values);
  } else if (op == "Resize" || op == "Upsample") {
    w.rule = "resize";
    w.flops = resize_flops(n, values);
  } else if (kPools.count(op)) {
    const double window = product(ints_attr(n, "kernel_shape", {}));
    w.rule = "pooling (window)";
    if (auto e = out_elems()) w.flops = *e * window;
  } else if (auto r = reduction_flops(op)) {
    w.rule = per_element("reduction", *r) + " of the input";
    if (const Dims* x = input_dims(n, values, 0)) w.flops = product(*x) * *r;
  } else if (auto f = op == "FusedElementwise" ? fused_elementwise_flops(n) : std::nullopt) {
    w.rule = per_element("elementwise", *f);
    if (auto e = out_elems()) w.flops = *e * *f;
  } else if (auto p = pointwise_flops(n)) {
    w.rule = per_element(p->kind, p->flops);
    if (auto e = out_elems()) w.flops = *e * p->flops;
  } else if (kMovement.count(op) || kViews.count(op) || kMetadata.count(op)) {
    w.rule = kViews.count(op) ? "view" : "data movement";
    w.flops = 0;
  } else {
    w.rule = "not counted";
  }
}

}  // namespace

std::optional<double> TensorInfo::elements() const {
  if (!shape) return std::nullopt;
  return product(*shape);
}

std::optional<double> TensorInfo::bytes() const {
  auto e = elements();
  if (!e) return std::nullopt;
  return *e * ir::dtype_bits(dtype) / 8.0;
}

Work node_work(const ir::Node& n, const ValueInfos& values) {
  Work w;
  if (n.op_type == "MemcpyToDevice" || n.op_type == "MemcpyToHost") {
    w.device_copy = true;
    w.rule = "copy between devices";
    w.flops = 0;
    w.bytes = moved_bytes(n, values, false, false);
    return w;
  }
  count_flops(n, values, w);
  if (kViews.count(n.op_type))
    w.bytes = 0;
  else
    w.bytes = moved_bytes(n, values, kSelective.count(n.op_type) > 0, !kMetadata.count(n.op_type));
  return w;
}

}  // namespace tessera::profiler
