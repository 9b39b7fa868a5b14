// A micro-benchmark of MobileNetV2's convolution layers at batch 32 in float16, channels-last (the
// NhwcConv nodes the to_nhwc_layout pass makes), per path:
// - depthwise 3x3 (+ bias + ReLU6): our tiled kernel ("own"), our untiled one ("direct") and cuDNN's
//   (+ the epilogue kernel, or its graph);
// - 1x1 expansions (+ bias + ReLU6) and projections (+ bias, some + the residual Z): the cuDNN operation
//   graph against the older path (cuDNN's convolution + our epilogue kernel).
// Each one-node model runs 20 times with per-node CUDA-event timing; the best time is printed with the
// bytes moved (inputs, weights, output once each) per second and, for the 1x1s, TFLOP/s. Disabled in
// the normal run (it checks nothing beyond the node running on the GPU):
//   tessera_cuda_tests --gtest_also_run_disabled_tests --gtest_filter='*CudaConvBench*'
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "conv_test_util.h"

using namespace cuda_test;

namespace {

struct Layer {
  int64_t h, w, c, m;  // input H, W, C; output channels
  int64_t k = 1, stride = 1;
  bool depthwise = false, clip = true, z = false;
};

constexpr int64_t kBatch = 32;

struct Timing {
  double us = std::numeric_limits<double>::infinity();
  std::string path;
  bool on_gpu = false;
};

Timing time_layer(const Layer& l, const char* env, const char* value) {
  setenv(env, value, 1);
  const DataType t = DataType::kFloat16;
  const int64_t pad = l.k / 2;
  const int64_t oh = (l.h + 2 * pad - l.k) / l.stride + 1, ow = (l.w + 2 * pad - l.k) / l.stride + 1;
  const rt::Shape x{kBatch, l.h, l.w, l.c}, w{l.m, l.k, l.k, l.depthwise ? 1 : l.c}, y{kBatch, oh, ow, l.m};
  std::vector<ir::Attribute> attrs = {ir::Attribute::of_ints("strides", {l.stride, l.stride}),
                                      ir::Attribute::of_ints("pads", {pad, pad, pad, pad})};
  if (l.depthwise) attrs.push_back(ir::Attribute::of_int("group", l.c));
  if (l.clip) {
    attrs.push_back(ir::Attribute::of_string("activation", "Clip"));
    attrs.push_back(ir::Attribute::of_floats("activation_params", {0.f, 6.f}));
  }
  std::vector<rt::Shape> shapes = {x, w, {l.m}};
  std::vector<rt::Tensor> ins = {random_tensor(t, x, 1), random_tensor(t, w, 2), random_tensor(t, {l.m}, 3)};
  if (l.z) {
    shapes.push_back(y);
    ins.push_back(random_tensor(t, y, 4));
  }
  ir::Model m = one_node(make_node("NhwcConv", t, shapes, std::move(attrs), "com.tessera"));
  rt::Session s(m, {.optimization = rt::OptLevel::kNone,
                    .backend = "cuda",
                    .profile = true,
                    .precision = tessera::passes::Precision::kFp32});
  Timing out;
  for (int r = 0; r < 20; ++r) {
    s.run(feeds_of(ins));
    for (const auto& ev : s.last_stats().events) {
      if (ev.node_name != "op") continue;
      out.on_gpu = ev.backend == "cuda";
      out.us = std::min(out.us, ev.duration_us);
      out.path = ev.path;
    }
  }
  unsetenv(env);
  return out;
}

void report(const Layer& l, const char* env, std::initializer_list<const char*> values) {
  const int64_t oh = (l.h + 2 * (l.k / 2) - l.k) / l.stride + 1,
                ow = (l.w + 2 * (l.k / 2) - l.k) / l.stride + 1;
  const double in = static_cast<double>(kBatch * l.h * l.w * l.c),
               out = static_cast<double>(kBatch * oh * ow * l.m);
  const double weights = static_cast<double>(l.m * l.k * l.k * (l.depthwise ? 1 : l.c) + l.m);
  const double bytes = 2 * (in + out * (l.z ? 2 : 1) + weights);
  const double flops = 2 * out * static_cast<double>(l.k * l.k * (l.depthwise ? 1 : l.c));
  const std::string name = fmt::format("{} {}x{}x{}->{} k{} s{}{}{}", l.depthwise ? "dw" : "1x1", l.h, l.w,
                                       l.c, l.m, l.k, l.stride, l.clip ? " relu6" : "", l.z ? " +Z" : "");
  for (const char* v : values) {
    const Timing t = time_layer(l, env, v);
    EXPECT_TRUE(t.on_gpu) << name;
    fmt::print("[conv-bench] {:<40} {:>6}={:<5} {:8.1f} us {:7.0f} GB/s {:6.1f} TFLOP/s  {}\n", name,
               env + 13, v, t.us, bytes / (t.us * 1e3), flops / (t.us * 1e6), t.path);
  }
}

}  // namespace

TEST_F(CudaBlas, DISABLED_CudaConvBenchMobileNetV2) {
  const Layer dw[] = {{112, 112, 32, 32, 3, 1, true}, {112, 112, 96, 96, 3, 2, true},
                      {56, 56, 144, 144, 3, 1, true}, {56, 56, 144, 144, 3, 2, true},
                      {28, 28, 192, 192, 3, 1, true}, {28, 28, 192, 192, 3, 2, true},
                      {14, 14, 384, 384, 3, 1, true}, {14, 14, 576, 576, 3, 1, true},
                      {14, 14, 576, 576, 3, 2, true}, {7, 7, 960, 960, 3, 1, true}};
  for (const Layer& l : dw) report(l, "TESSERA_CUDA_DEPTHWISE", {"own", "direct", "cudnn"});
  const Layer pw[] = {{112, 112, 16, 96},
                      {56, 56, 24, 144},
                      {28, 28, 32, 192},
                      {14, 14, 64, 384},
                      {14, 14, 96, 576},
                      {7, 7, 160, 960},
                      {7, 7, 320, 1280},  // expansions (+ ReLU6)
                      {112, 112, 32, 16, 1, 1, false, false},
                      {56, 56, 144, 24, 1, 1, false, false, true},
                      {28, 28, 192, 32, 1, 1, false, false, true},
                      {14, 14, 384, 64, 1, 1, false, false, true},
                      {14, 14, 576, 96, 1, 1, false, false, true},
                      {7, 7, 960, 160, 1, 1, false, false, true},
                      {7, 7, 960, 320, 1, 1, false, false}};  // projections (+ bias, + Z)
  for (const Layer& l : pw) report(l, "TESSERA_CUDA_CONV_GRAPH", {"on", "off"});
}
