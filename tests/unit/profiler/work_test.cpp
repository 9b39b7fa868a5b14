// The work of a layer (FLOPs, multiply-add = 2, and the bytes it must move) on hand-computed layers,
// and the roofline bound a layer gets from it.
#include "profiler/work.h"

#include <gtest/gtest.h>

#include "profiler/roofline.h"

namespace ir = tessera::ir;
namespace profiler = tessera::profiler;
using ir::DataType;

namespace {

ir::Node node(std::string op, std::vector<std::string> in, std::vector<std::string> out,
              std::vector<ir::Attribute> attrs = {}, std::string domain = {}) {
  ir::Node n;
  n.op_type = std::move(op);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.attributes = std::move(attrs);
  n.domain = std::move(domain);
  return n;
}

profiler::TensorInfo t(DataType d, std::vector<int64_t> shape) {
  return {d, std::move(shape)};
}

}  // namespace

// X [2, 8, 15, 15], W [16, 4, 3, 3] in 2 groups, stride 2, pads 1: Y [2, 16, 8, 8]. Each output element
// is a dot product over 4 input channels (its group's) times 9 taps; the bias adds 1.
TEST(ProfileWork, GroupedStridedConvolution) {
  profiler::ValueInfos v{{"x", t(DataType::kFloat, {2, 8, 15, 15})},
                         {"w", t(DataType::kFloat, {16, 4, 3, 3})},
                         {"b", t(DataType::kFloat, {16})},
                         {"y", t(DataType::kFloat, {2, 16, 8, 8})}};
  auto conv = node("Conv", {"x", "w", "b"}, {"y"},
                   {ir::Attribute::of_int("group", 2), ir::Attribute::of_ints("strides", {2, 2}),
                    ir::Attribute::of_ints("pads", {1, 1, 1, 1})});
  const double outputs = 2 * 16 * 8 * 8;  // 2048
  profiler::Work w = profiler::node_work(conv, v);
  ASSERT_TRUE(w.flops && w.bytes);
  EXPECT_DOUBLE_EQ(*w.flops, 2 * outputs * 4 * 9 + outputs);  // 149,504
  EXPECT_DOUBLE_EQ(*w.bytes, 4.0 * (2 * 8 * 15 * 15 + 16 * 4 * 9 + 16 + outputs));
  EXPECT_EQ(w.rule, "convolution");
  // The same layer channels-last in float16 (W [M, kH, kW, C/group]) with a residual and a Relu.
  profiler::ValueInfos h{{"x", t(DataType::kFloat16, {2, 15, 15, 8})},
                         {"w", t(DataType::kFloat16, {16, 3, 3, 4})},
                         {"b", t(DataType::kFloat16, {16})},
                         {"z", t(DataType::kFloat16, {2, 8, 8, 16})},
                         {"y", t(DataType::kFloat16, {2, 8, 8, 16})}};
  auto nhwc = node("NhwcConv", {"x", "w", "b", "z"}, {"y"},
                   {ir::Attribute::of_int("group", 2), ir::Attribute::of_string("activation", "Relu")},
                   "com.tessera");
  w = profiler::node_work(nhwc, h);
  EXPECT_DOUBLE_EQ(*w.flops, 2 * outputs * 4 * 9 + outputs * 3);  // bias, residual, Relu
  EXPECT_DOUBLE_EQ(*w.bytes, 2.0 * (2 * 8 * 15 * 15 + 16 * 4 * 9 + 16 + 2 * outputs));
}

// X [1, 4, 5, 5] through W [4, 3, 2, 2] (group 1): every input element meets 3 output channels times 4
// taps.
TEST(ProfileWork, TransposedConvolution) {
  profiler::ValueInfos v{{"x", t(DataType::kFloat, {1, 4, 5, 5})},
                         {"w", t(DataType::kFloat, {4, 3, 2, 2})},
                         {"y", t(DataType::kFloat, {1, 3, 10, 10})}};
  profiler::Work w = profiler::node_work(node("ConvTranspose", {"x", "w"}, {"y"}), v);
  EXPECT_DOUBLE_EQ(*w.flops, 2.0 * 100 * 12);
}

// A [4, 1, 32, 64] x B [3, 64, 16] broadcasts to Y [4, 3, 32, 16]: 384 rows of 16 dot products of 64.
TEST(ProfileWork, BatchedMatMulWithBroadcasting) {
  profiler::ValueInfos v{{"a", t(DataType::kFloat16, {4, 1, 32, 64})},
                         {"b", t(DataType::kFloat16, {3, 64, 16})},
                         {"y", t(DataType::kFloat16, {4, 3, 32, 16})}};
  profiler::Work w = profiler::node_work(node("MatMul", {"a", "b"}, {"y"}), v);
  EXPECT_DOUBLE_EQ(*w.flops, 2.0 * 4 * 3 * 32 * 16 * 64);
  EXPECT_DOUBLE_EQ(*w.bytes, 2.0 * (4 * 32 * 64 + 3 * 64 * 16 + 4 * 3 * 32 * 16));
  EXPECT_EQ(w.rule, "matrix product");
  // A vector times a matrix: [64] x [64, 16] -> [16].
  profiler::ValueInfos vec{{"a", t(DataType::kFloat, {64})},
                           {"b", t(DataType::kFloat, {64, 16})},
                           {"y", t(DataType::kFloat, {16})}};
  EXPECT_DOUBLE_EQ(*profiler::node_work(node("MatMul", {"a", "b"}, {"y"}), vec).flops, 2.0 * 16 * 64);
  // Gemm with A transposed ([K, M] = [64, 32]) and a bias C: 2 M N K + M N.
  profiler::ValueInfos g{{"a", t(DataType::kFloat, {64, 32})},
                         {"b", t(DataType::kFloat, {64, 16})},
                         {"c", t(DataType::kFloat, {16})},
                         {"y", t(DataType::kFloat, {32, 16})}};
  auto gemm = node("Gemm", {"a", "b", "c"}, {"y"}, {ir::Attribute::of_int("transA", 1)});
  EXPECT_DOUBLE_EQ(*profiler::node_work(gemm, g).flops, 2.0 * 32 * 16 * 64 + 32 * 16);
  // GPT-2's linear layer with its tanh GELU in the epilogue: bias 1 + GELU 9 per output element.
  profiler::ValueInfos l{{"a", t(DataType::kFloat16, {2, 128, 768})},
                         {"b", t(DataType::kFloat16, {768, 3072})},
                         {"bias", t(DataType::kFloat16, {3072})},
                         {"y", t(DataType::kFloat16, {2, 128, 3072})}};
  auto mbg = node("MatMulBiasGelu", {"a", "b", "bias"}, {"y"}, {}, "com.tessera");
  const double out = 2.0 * 128 * 3072;
  EXPECT_DOUBLE_EQ(*profiler::node_work(mbg, l).flops, 2 * out * 768 + out * 10);
}

// Einsum: 2 FLOPs per term of two operands' sum of products; an ellipsis's axes from the output.
TEST(ProfileWork, Einsum) {
  profiler::ValueInfos v{{"q", t(DataType::kFloat, {2, 3, 5, 8})},
                         {"k", t(DataType::kFloat, {2, 3, 7, 8})},
                         {"s", t(DataType::kFloat, {2, 3, 5, 7})},
                         {"x", t(DataType::kFloat, {4, 6})},
                         {"r", t(DataType::kFloat, {6})}};
  auto scores = node("Einsum", {"q", "k"}, {"s"}, {ir::Attribute::of_string("equation", "bhqd,bhkd->bhqk")});
  EXPECT_DOUBLE_EQ(*profiler::node_work(scores, v).flops, 2.0 * 2 * 3 * 5 * 7 * 8);
  auto dots = node("Einsum", {"q", "k"}, {"s"}, {ir::Attribute::of_string("equation", "...qd, ...kd")});
  EXPECT_DOUBLE_EQ(*profiler::node_work(dots, v).flops, 2.0 * 2 * 3 * 5 * 7 * 8);  // implicit: ...kq
  auto sum = node("Einsum", {"x"}, {"r"}, {ir::Attribute::of_string("equation", "ij->j")});
  EXPECT_DOUBLE_EQ(*profiler::node_work(sum, v).flops, 24);
}

// Resize of H and W: nearest copies, bilinear makes 3 interpolations of 3 FLOPs per output element.
TEST(ProfileWork, Resize) {
  profiler::ValueInfos v{{"x", t(DataType::kFloat, {1, 2, 4, 4})}, {"y", t(DataType::kFloat, {1, 2, 8, 8})}};
  auto nearest = node("Resize", {"x", "", "", ""}, {"y"});
  EXPECT_DOUBLE_EQ(*profiler::node_work(nearest, v).flops, 0);
  EXPECT_DOUBLE_EQ(*profiler::node_work(nearest, v).bytes, 4.0 * (32 + 128));
  auto linear = node("Resize", {"x", "", "", ""}, {"y"}, {ir::Attribute::of_string("mode", "linear")});
  EXPECT_DOUBLE_EQ(*profiler::node_work(linear, v).flops, 128.0 * 9);
}

TEST(ProfileWork, CausalPairsCountTheLowerTriangle) {
  EXPECT_DOUBLE_EQ(profiler::attention_pairs(5, 5, false), 25);
  EXPECT_DOUBLE_EQ(profiler::attention_pairs(5, 5, true), 15);  // 1 + 2 + 3 + 4 + 5
  EXPECT_DOUBLE_EQ(profiler::attention_pairs(5, 3, true), 12);  // 1 + 2 + 3 + 3 + 3
  EXPECT_DOUBLE_EQ(profiler::attention_pairs(3, 7, true, 4), 5 + 6 + 7);
  EXPECT_DOUBLE_EQ(profiler::attention_pairs(128, 128, true), 128.0 * 129 / 2);
}

// Q, K, V [B=2, S=5, H=3, D=8] (the exporters' [B, S, H, D] before the head transposes): per head, Q K^T
// and P V take 2 D FLOPs per (query, key) pair each, the scores 6 (scale, softmax 5); causal keeps 15
// of the 25 pairs.
TEST(ProfileWork, AttentionWithACausalMask) {
  profiler::ValueInfos v{{"q", t(DataType::kFloat16, {2, 5, 3, 8})},
                         {"k", t(DataType::kFloat16, {2, 5, 3, 8})},
                         {"v", t(DataType::kFloat16, {2, 5, 3, 8})},
                         {"y", t(DataType::kFloat16, {2, 5, 3, 8})}};
  auto full = node("FusedAttention", {"q", "k", "v"}, {"y"}, {ir::Attribute::of_float("scale", 0.35f)},
                   "com.tessera");
  profiler::Work w = profiler::node_work(full, v);
  EXPECT_DOUBLE_EQ(*w.flops, 2 * 3 * 25 * (2 * 8 + 2 * 8 + 6));
  EXPECT_EQ(w.rule, "attention");
  auto causal = full;
  causal.attributes.push_back(ir::Attribute::of_int("causal", 1));
  w = profiler::node_work(causal, v);
  EXPECT_DOUBLE_EQ(*w.flops, 2 * 3 * 15 * (2 * 8 + 2 * 8 + 6));
  EXPECT_EQ(w.rule, "attention (causal)");
  EXPECT_DOUBLE_EQ(*w.bytes, 4 * 2.0 * (2 * 5 * 3 * 8));
  // Q, K and V packed in one projection's output [B, S, 3, H, D]: read once.
  profiler::ValueInfos p{{"qkv", t(DataType::kFloat16, {2, 5, 3, 3, 8})},
                         {"y", t(DataType::kFloat16, {2, 5, 3, 8})}};
  auto packed =
      node("FusedAttention", {"qkv", "qkv", "qkv"}, {"y"},
           {ir::Attribute::of_ints("q_axes", {0, 3, 1, 4}), ir::Attribute::of_ints("k_axes", {0, 3, 1, 4}),
            ir::Attribute::of_ints("v_axes", {0, 3, 1, 4}), ir::Attribute::of_int("k_part", 1),
            ir::Attribute::of_int("v_part", 2), ir::Attribute::of_int("causal", 1)},
           "com.tessera");
  w = profiler::node_work(packed, p);
  EXPECT_DOUBLE_EQ(*w.flops, 2 * 3 * 15 * (2 * 8 + 2 * 8 + 6));
  EXPECT_DOUBLE_EQ(*w.bytes, 2.0 * (2 * 5 * 3 * 3 * 8 + 2 * 5 * 3 * 8));
}

// ONNX Attention: Q [2, 3, 5, 8] against 4 past keys and 3 new ones (V's head size 4), causal: query i
// sees keys up to i + 4; a mask adds 1 per score.
TEST(ProfileWork, OnnxAttentionWithPastKeysAndCausalMask) {
  profiler::ValueInfos v{{"q", t(DataType::kFloat, {2, 3, 5, 8})},  {"k", t(DataType::kFloat, {2, 3, 3, 8})},
                         {"v", t(DataType::kFloat, {2, 3, 3, 4})},  {"m", t(DataType::kFloat, {5, 7})},
                         {"pk", t(DataType::kFloat, {2, 3, 4, 8})}, {"pv", t(DataType::kFloat, {2, 3, 4, 4})},
                         {"y", t(DataType::kFloat, {2, 3, 5, 4})}};
  auto a =
      node("Attention", {"q", "k", "v", "m", "pk", "pv"}, {"y"}, {ir::Attribute::of_int("is_causal", 1)});
  const double pairs = 5 + 6 + 7 + 7 + 7;
  EXPECT_DOUBLE_EQ(*profiler::node_work(a, v).flops, 2 * 3 * pairs * (2 * 8 + 2 * 4 + 7));
  // The contrib Attention of com.microsoft is another operator: not counted.
  auto contrib = node("Attention", {"q", "k", "v"}, {"y"}, {}, "com.microsoft");
  EXPECT_FALSE(profiler::node_work(contrib, v).flops);
}

// The contrib attentions: MultiHeadAttention (2 heads of 4, 3 queries after 2 past keys, causal) and
// GroupQueryAttention (4 query heads on 2 KV heads of 8, 3 new of 5 keys in all, always causal).
TEST(ProfileWork, ContribAttentions) {
  profiler::ValueInfos v{
      {"q", t(DataType::kFloat16, {1, 3, 8})},     {"k", t(DataType::kFloat16, {1, 3, 8})},
      {"v", t(DataType::kFloat16, {1, 3, 8})},     {"pk", t(DataType::kFloat16, {1, 2, 2, 4})},
      {"pv", t(DataType::kFloat16, {1, 2, 2, 4})}, {"y", t(DataType::kFloat16, {1, 3, 8})}};
  auto mha = node("MultiHeadAttention", {"q", "k", "v", "", "", "", "pk", "pv"}, {"y"},
                  {ir::Attribute::of_int("num_heads", 2), ir::Attribute::of_int("unidirectional", 1)},
                  "com.microsoft");
  profiler::Work w = profiler::node_work(mha, v);
  EXPECT_DOUBLE_EQ(*w.flops, 2 * (3 + 4 + 5) * (2 * 4 + 2 * 4 + 6));  // query i sees 3 + i keys
  EXPECT_EQ(w.rule, "attention (causal)");
  profiler::ValueInfos g{
      {"q", t(DataType::kFloat16, {1, 3, 32})},           {"k", t(DataType::kFloat16, {1, 3, 16})},
      {"v", t(DataType::kFloat16, {1, 3, 16})},           {"y", t(DataType::kFloat16, {1, 3, 32})},
      {"present_k", t(DataType::kFloat16, {1, 2, 5, 8})}, {"present_v", t(DataType::kFloat16, {1, 2, 5, 8})}};
  auto gqa = node("GroupQueryAttention", {"q", "k", "v", "", "", "", ""}, {"y", "present_k", "present_v"},
                  {ir::Attribute::of_int("num_heads", 4), ir::Attribute::of_int("kv_num_heads", 2)},
                  "com.microsoft");
  EXPECT_DOUBLE_EQ(*profiler::node_work(gqa, g).flops, 4 * (3 + 4 + 5) * (4 * 8 + 6));
}

TEST(ProfileWork, ElementwiseNormalisationAndSoftmaxPerElement) {
  profiler::ValueInfos v{{"x", t(DataType::kFloat, {4, 10})},
                         {"g", t(DataType::kFloat, {10})},
                         {"b", t(DataType::kFloat, {10})},
                         {"s", t(DataType::kFloat, {4, 10})},
                         {"y", t(DataType::kFloat, {4, 10})}};
  EXPECT_DOUBLE_EQ(*profiler::node_work(node("Add", {"x", "s"}, {"y"}), v).flops, 40);
  EXPECT_DOUBLE_EQ(*profiler::node_work(node("Sigmoid", {"x"}, {"y"}), v).flops, 160);
  EXPECT_DOUBLE_EQ(*profiler::node_work(node("Softmax", {"x"}, {"y"}), v).flops, 200);
  profiler::Work ln = profiler::node_work(node("LayerNormalization", {"x", "g", "b"}, {"y"}), v);
  EXPECT_DOUBLE_EQ(*ln.flops, 320);
  EXPECT_EQ(ln.rule, "normalisation 8/element");
  // The skip added first: 9 per element.
  auto skip = node("SkipLayerNormalization", {"x", "s", "g", "b"}, {"y"}, {}, "com.microsoft");
  EXPECT_DOUBLE_EQ(*profiler::node_work(skip, v).flops, 360);
  // A fused chain counts its statements (GPT-2's tanh GELU: 8), a Cast none.
  auto gelu = node(
      "FusedElementwise", {"x"}, {"y"},
      {ir::Attribute::of_string("program",
                                "t0=Pow(x0,3);t1=Mul(t0,0.044715);t2=Add(x0,t1);t3=Mul(t2,0.7978845608);"
                                "t4=Tanh(t3);t5=Add(t4,1);t6=Mul(x0,0.5);t7=Mul(t6,t5);t8=Cast<float16>(t7)"),
       ir::Attribute::of_ints("results", {8})},
      "com.tessera");
  profiler::Work f = profiler::node_work(gelu, v);
  EXPECT_DOUBLE_EQ(*f.flops, 8 * 40);
  EXPECT_EQ(f.rule, "elementwise 8/element");
}

TEST(ProfileWork, DataMovementViewsAndWhatIsNotCounted) {
  // An embedding lookup reads the rows it writes, not the whole table.
  profiler::ValueInfos v{
      {"table", t(DataType::kFloat, {30522, 768})}, {"ids", t(DataType::kInt64, {2, 128})},
      {"e", t(DataType::kFloat, {2, 128, 768})},    {"shape", t(DataType::kInt64, {2})},
      {"r", t(DataType::kFloat, {256, 768})},       {"unknown", {DataType::kFloat, std::nullopt}}};
  profiler::Work g = profiler::node_work(node("Gather", {"table", "ids"}, {"e"}), v);
  EXPECT_DOUBLE_EQ(*g.flops, 0);
  EXPECT_DOUBLE_EQ(*g.bytes, 2 * 4.0 * 2 * 128 * 768 + 8 * 256);
  EXPECT_EQ(g.rule, "data movement");
  profiler::Work r = profiler::node_work(node("Reshape", {"e", "shape"}, {"r"}), v);
  EXPECT_DOUBLE_EQ(*r.bytes, 0);
  EXPECT_EQ(r.rule, "view");
  profiler::Work lstm = profiler::node_work(node("LSTM", {"e"}, {"r"}), v);
  EXPECT_FALSE(lstm.flops);
  EXPECT_EQ(lstm.rule, "not counted");
  EXPECT_DOUBLE_EQ(*lstm.bytes, 4.0 * (2 * 128 * 768 + 256 * 768));
  // A shape the count does not know leaves the work unknown, never a guess.
  profiler::Work u = profiler::node_work(node("Relu", {"unknown"}, {"r"}), v);
  EXPECT_FALSE(u.bytes);
  EXPECT_TRUE(u.flops);  // from the output, which is known
  EXPECT_FALSE(profiler::node_work(node("Relu", {"e"}, {"missing"}), v).flops);
}

// A 4096^3 float16 product against an H100's datasheet: compute-bound; a Relu: memory-bound.
TEST(ProfileRoofline, BoundIsTheLargerOfComputeAndMemoryTime) {
  auto peaks = profiler::datasheet_peaks("NVIDIA H100 80GB HBM3", tessera::passes::Precision::kFp16);
  ASSERT_TRUE(peaks);
  EXPECT_DOUBLE_EQ(peaks->tflops, 989.4);
  EXPECT_DOUBLE_EQ(peaks->gbps, 3350);
  profiler::Peaks given{500, 2000, "given"};
  const double n = 4096;
  profiler::Work mm{2 * n * n * n, 3 * n * n * 2, "matrix product"};
  profiler::Roofline r = profiler::layer_roofline(mm, 0.5, given);
  EXPECT_EQ(r.bound, "compute");
  EXPECT_DOUBLE_EQ(r.bound_ms, 2 * n * n * n / 500e9);
  EXPECT_NEAR(r.tflops_per_s, 2 * n * n * n / 0.5e9, 1e-9);
  EXPECT_NEAR(r.percent_of_bound, 100 * r.bound_ms / 0.5, 1e-9);
  EXPECT_NEAR(r.intensity, 2 * n / 6, 1e-9);
  profiler::Work relu{1e6, 8e6, "elementwise 1/element"};
  r = profiler::layer_roofline(relu, 0.01, given);
  EXPECT_EQ(r.bound, "memory");
  EXPECT_DOUBLE_EQ(r.bound_ms, 8e6 / 2000e6);
  EXPECT_NEAR(r.gbps, 800, 1e-9);
  EXPECT_NEAR(r.percent_of_bound, 40, 1e-9);
  // No peaks, uncounted FLOPs or a copy between devices: no bound, the achieved rates still.
  EXPECT_EQ(profiler::layer_roofline(relu, 0.01, {}).bound, "");
  EXPECT_EQ(profiler::layer_roofline({std::nullopt, 8e6, "not counted"}, 0.01, given).bound, "");
  profiler::Work copy{0, 8e6, "copy between devices", true};
  EXPECT_EQ(profiler::layer_roofline(copy, 0.01, given).bound, "");
  EXPECT_NEAR(profiler::layer_roofline(copy, 0.01, given).gbps, 800, 1e-9);
}

TEST(ProfileRoofline, DatasheetByNameAndPrecision) {
  using tessera::passes::Precision;
  EXPECT_DOUBLE_EQ(profiler::datasheet_peaks("NVIDIA H100 PCIe", Precision::kFp16)->tflops, 756.5);
  EXPECT_DOUBLE_EQ(profiler::datasheet_peaks("NVIDIA H100 80GB HBM3", Precision::kFp32)->tflops, 66.9);
  EXPECT_DOUBLE_EQ(profiler::datasheet_peaks("NVIDIA H200", Precision::kTf32)->gbps, 4800);
  EXPECT_FALSE(profiler::datasheet_peaks("Intel(R) Xeon(R) Platinum 8480+", Precision::kFp32));
  EXPECT_FALSE(profiler::datasheet_peaks("NVIDIA H100 NVL", Precision::kFp16));
}
