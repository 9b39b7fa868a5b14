// The layers' work counted over a session's optimised model from the shapes a profiled run saw: a free
// batch dimension the checker leaves symbolic is taken from the run, and fusion (the layout level's
// convolution with its Relu, the linear layer with its bias) keeps the model's FLOPs.
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "profiler/report.h"

namespace ir = tessera::ir;
namespace rt = tessera::rt;
namespace profiler = tessera::profiler;
using ir::DataType;
using ir::Dim;

namespace {

// x [n, 3, 8, 8] -> Conv 4x3x3x3 (pads 1) -> Relu -> Flatten -> MatMul [256, 10] -> Add bias -> Softmax.
ir::Model small_cnn() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", ir::Type::tensor(DataType::kFloat,
                                         ir::Shape{Dim::symbol("n"), Dim::of(3), Dim::of(8), Dim::of(8)}));
  auto w = b.random_normal("w", {4, 3, 3, 3}, 0.2f);
  auto conv = b.node("Conv", {x, w}, {ir::Attribute::of_ints("pads", {1, 1, 1, 1})}, "conv");
  auto relu = b.node("Relu", {conv}, {}, "relu");
  auto flat = b.node("Flatten", {relu}, {}, "flatten");
  auto fc = b.random_normal("fc_w", {256, 10}, 0.1f);
  auto mm = b.node("MatMul", {flat, fc}, {}, "fc");
  auto bias = b.random_normal("bias", {10}, 0.1f);
  auto add = b.node("Add", {mm, bias}, {}, "fc_bias");
  auto y = b.node("Softmax", {add}, {ir::Attribute::of_int("axis", 1)}, "softmax");
  b.output(y, ir::Type::tensor(DataType::kFloat));
  return m;
}

// Profiles one run of the model with batch `n` and counts its layers' work.
std::vector<profiler::Layer> profiled_layers(rt::OptLevel level, int64_t n,
                                             const rt::Session** out = nullptr) {
  static std::unique_ptr<rt::Session> keep;
  keep = std::make_unique<rt::Session>(small_cnn(), rt::SessionOptions{.optimization = level, .threads = 1});
  rt::Tensor x = rt::Tensor::zeros(DataType::kFloat, {n, 3, 8, 8});
  std::vector<std::pair<std::string, rt::Value>> feeds{{"x", rt::Value(x)}};
  keep->run(feeds, {}, rt::RunOptions{.profile = true});
  profiler::LayerTable table;
  table.add(keep->last_stats());
  auto layers = table.layers();
  profiler::count_work(layers, keep->model(), feeds);
  if (out) *out = keep.get();
  return layers;
}

double model_flops(const std::vector<profiler::Layer>& layers) {
  double f = 0;
  for (const auto& l : layers) {
    EXPECT_TRUE(l.work.flops.has_value()) << l.op_type;
    f += l.work.flops.value_or(0);
  }
  return f;
}

}  // namespace

TEST(ProfileLayerWork, ShapesFromTheRunAndFlopsOfEachLayer) {
  const int64_t n = 2;
  auto layers = profiled_layers(rt::OptLevel::kNone, n);
  const double conv_out = n * 4 * 8 * 8;
  std::map<std::string, const profiler::Layer*> by_name;
  for (const auto& l : layers) by_name[l.name] = &l;
  ASSERT_TRUE(by_name.count("conv") && by_name.count("fc") && by_name.count("softmax"));
  EXPECT_DOUBLE_EQ(*by_name["conv"]->work.flops, 2 * conv_out * 27);
  EXPECT_DOUBLE_EQ(*by_name["conv"]->work.bytes, 4.0 * (n * 3 * 64 + 4 * 27 + conv_out));
  // Flatten's output is [n, 256] with n free: the run's batch of 2 gives the MatMul's size.
  EXPECT_DOUBLE_EQ(*by_name["fc"]->work.flops, 2.0 * n * 10 * 256);
  EXPECT_DOUBLE_EQ(*by_name["fc"]->work.bytes, 4.0 * (n * 256 + 256 * 10 + n * 10));
  EXPECT_DOUBLE_EQ(*by_name["flatten"]->work.bytes, 0);
  EXPECT_DOUBLE_EQ(*by_name["softmax"]->work.flops, 5.0 * n * 10);
}

TEST(ProfileLayerWork, FusionKeepsTheModelsFlops) {
  const double plain = model_flops(profiled_layers(rt::OptLevel::kNone, 3));
  const double fused = model_flops(profiled_layers(rt::OptLevel::kLayout, 3));
  const double conv_out = 3 * 4 * 8 * 8;
  EXPECT_DOUBLE_EQ(plain, 2 * conv_out * 27 + conv_out + 2.0 * 3 * 10 * 256 + 3 * 10 + 5.0 * 3 * 10);
  EXPECT_DOUBLE_EQ(fused, plain);
}

TEST(ProfileLayerWork, ReportCarriesWorkRooflineAndSummary) {
  const rt::Session* session = nullptr;
  auto layers = profiled_layers(rt::OptLevel::kNone, 2, &session);
  profiler::ReportInfo info;
  info.model_path = "small_cnn.onnx";
  info.peaks = {0.01, 10, "given"};  // a slow device: its ridge is at 1 FLOP per byte
  double layer_sum_us = 0;
  for (const auto& l : layers) layer_sum_us += l.total_us;
  profiler::Latency lat{1, 1, 1, 1};
  auto j = profiler::report_json(info, *session, lat, layers, layer_sum_us, 1);
  const auto& r = j["roofline"];
  EXPECT_EQ(r["peak_source"], "given");
  EXPECT_DOUBLE_EQ(r["model_flops"].get<double>(), model_flops(layers));
  EXPECT_NEAR(r["model_tflops_per_s"].get<double>(), model_flops(layers) / 1e9, 1e-12);
  EXPECT_EQ(r["compute_bound"]["layers"].get<size_t>() + r["memory_bound"]["layers"].get<size_t>() +
                r["unbounded"]["layers"].get<size_t>(),
            layers.size());
  bool conv_seen = false;
  for (const auto& l : j["layers"]) {
    if (l["name"] != "conv") continue;
    conv_seen = true;
    // 27,648 FLOPs over 4,016 bytes: 6.9 FLOPs per byte, above this device's ridge.
    EXPECT_EQ(l["bound"], "compute");
    EXPECT_EQ(l["work_rule"], "convolution");
    EXPECT_NEAR(l["intensity"].get<double>(), l["flops"].get<double>() / l["bytes"].get<double>(), 1e-12);
    EXPECT_NEAR(l["bound_ms"].get<double>(), l["flops"].get<double>() / 0.01e9, 1e-12);
  }
  EXPECT_TRUE(conv_seen);
}

// On the CPU nothing is replayed: a stamped run runs as any other and says why it has no stamped spans.
TEST(ProfileLayerWork, AStampedRunOnTheCpuSaysWhyItHasNoSpans) {
  rt::Session s(small_cnn(), rt::SessionOptions{.threads = 1});
  rt::Tensor x = rt::Tensor::zeros(DataType::kFloat, {1, 3, 8, 8});
  auto outs = s.run({{"x", rt::Value(x)}}, {}, rt::RunOptions{.stamp_repeats = 5});
  EXPECT_EQ(outs.size(), 1u);
  EXPECT_TRUE(s.last_stats().stamped.empty());
  EXPECT_NE(s.last_stats().stamp_note.find("did not replay"), std::string::npos) << s.last_stats().stamp_note;
  s.run({{"x", rt::Value(x)}}, {}, rt::RunOptions{});
  EXPECT_TRUE(s.last_stats().stamp_note.empty()) << "a later run that is not stamped says nothing of stamps";
}
