// The fused NhwcConv paths against the reference kernel (transposes around the reference FusedConv):
// - the cuDNN operation graph (cudnn_graph.h): conv + Z + bias + ReLU/Clip in one plan, forced on with
//   TESSERA_CUDA_CONV_GRAPH=on (float16; MobileNetV2's 1x1 expansions with Clip 0..6, projections with a
//   bias and the residual Z, a 3x3 with Clip; bias + ReLU stays on cuDNN's fused call), and with it off;
// - the tiled depthwise 3x3 kernel (conv_depthwise_tiled.cu), forced with TESSERA_CUDA_DEPTHWISE=own:
//   stride 1 and 2, symmetric and one-sided pads, output sizes that do not fill the tiles, channel counts
//   with 16-byte vectors in full and partial chunks, odd ones (single channels), Z, float32 and float16.
// Error bound as conv_nhwc_test.cpp: float32 accumulation of K products on both sides, 2 ulps of the
// result, and half an ulp of sum |x||w| (+|b|+|z|) where the older path rounds the convolution before the
// epilogue (the graph and the depthwise kernel round once; the bound covers either path).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "conv_test_util.h"

using namespace cuda_test;

namespace {

ir::Attribute act(const char* name) {
  return ir::Attribute::of_string("activation", name);
}

ir::Attribute relu6() {
  return ir::Attribute::of_floats("activation_params", {0.f, 6.f});
}

ir::Attribute group(int64_t g) {
  return ir::Attribute::of_int("group", g);
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// NhwcConv of x [N, H, W, C] with w [M, kH, kW, C/group], a bias, optionally Z; returns the path taken.
std::string check(const rt::Shape& x, const rt::Shape& w, std::vector<ir::Attribute> attrs, DataType t,
                  const rt::Shape& z = {}, bool bias = true) {
  std::vector<rt::Shape> shapes = {x, w};
  std::vector<rt::Tensor> ins = {random_tensor(t, x, 21), random_tensor(t, w, 22)};
  if (bias || !z.empty()) {
    shapes.push_back({w[0]});
    ins.push_back(random_tensor(t, {w[0]}, 23));
  }
  if (!z.empty()) {
    shapes.push_back(z);
    ins.push_back(random_tensor(t, z, 24));
  }
  std::string a;
  for (const auto& at : attrs)
    if (at.name == "activation") a = at.s;
  Node n = make_node("NhwcConv", t, shapes, std::move(attrs), "com.tessera");
  Result r = run_both(n, ins);
  const std::string what = "NhwcConv x" + rt::shape_str(x) + " w" + rt::shape_str(w) + " " + a + " " +
                           type_name(t) + (z.empty() ? "" : " +Z") + " [" + r.path + "]";
  expect_within(r, static_cast<double>(w[1] * w[2] * w[3]) + 2, 2, what, t == DataType::kFloat ? 0 : 0.5);
  return r.path;
}

bool is_graph(const std::string& path) {
  return path.find("cuDNN graph") != std::string::npos;
}

}  // namespace

// MobileNetV2's 1x1 layers in float16 with the graph forced on: the fused plan must be taken (an H100
// with cuDNN 9 has fusion engines for conv + bias + clip) and match the reference.
TEST_F(CudaBlas, NhwcConvGraphFusesBiasAndClip) {
  ScopedEnv env("TESSERA_CUDA_CONV_GRAPH", "on");
  const DataType t = DataType::kFloat16;
  // Expansion with ReLU6 (the epilogue_half2 pass this replaces), 147k outputs.
  std::string p = check({3, 28, 28, 32}, {192, 1, 1, 32}, {act("Clip"), relu6()}, t);
  EXPECT_TRUE(is_graph(p)) << "1x1 + bias + Clip ran " << p;
  // Projection: bias only, then bias + the residual Z.
  p = check({2, 28, 28, 144}, {32, 1, 1, 144}, {}, t);
  EXPECT_TRUE(is_graph(p)) << "1x1 + bias ran " << p;
  p = check({2, 14, 14, 192}, {64, 1, 1, 192}, {}, t, {2, 14, 14, 64});
  EXPECT_TRUE(is_graph(p)) << "1x1 + bias + Z ran " << p;
  // A clip window other than ReLU6, a stride-2 1x1, and a dense 3x3 (not only GEMM-shaped). Bias + ReLU
  // stays on cuDNN's one fused call (no epilogue pass to save).
  check({2, 15, 15, 40}, {80, 1, 1, 40},
        {ints("strides", {2, 2}), act("Clip"), ir::Attribute::of_floats("activation_params", {-0.5f, 0.75f})},
        t);
  p = check({2, 20, 20, 32}, {48, 3, 3, 32}, {ints("pads", {1, 1, 1, 1}), act("Clip"), relu6()}, t);
  // cuDNN may list no acceptable engine for it: then the path must say why.
  EXPECT_TRUE(is_graph(p) || p.find("no graph") != std::string::npos) << "3x3 + bias + Clip ran " << p;
  p = check({2, 20, 20, 32}, {48, 3, 3, 32}, {ints("pads", {1, 1, 1, 1}), act("Relu")}, t);
  EXPECT_FALSE(is_graph(p)) << "3x3 + bias + ReLU ran " << p;
  // A channel count without 16-byte rows: cuDNN may decline; either path must be right.
  check({1, 9, 9, 6}, {10, 1, 1, 6}, {act("Clip"), relu6()}, t);
}

// The same configurations on the older path (convolution, then the epilogue kernel or the fused call).
TEST_F(CudaBlas, NhwcConvGraphOffKeepsTheOlderPath) {
  ScopedEnv env("TESSERA_CUDA_CONV_GRAPH", "off");
  const DataType t = DataType::kFloat16;
  std::string p = check({3, 28, 28, 32}, {192, 1, 1, 32}, {act("Clip"), relu6()}, t);
  EXPECT_FALSE(is_graph(p)) << p;
  check({2, 14, 14, 192}, {64, 1, 1, 192}, {}, t, {2, 14, 14, 64});
}

// Without forcing: timed at session build (or taken from the disk cache); either choice must be right,
// float32 never takes the graph (it would need TF32 rules of its own).
TEST_F(CudaBlas, NhwcConvGraphTimedChoice) {
  check({2, 28, 28, 24}, {144, 1, 1, 24}, {act("Clip"), relu6()}, DataType::kFloat16);
  const std::string p = check({2, 28, 28, 24}, {144, 1, 1, 24}, {act("Clip"), relu6()}, DataType::kFloat);
  EXPECT_FALSE(is_graph(p)) << p;
}

// The timed choice lands in the disk cache ($XDG_CACHE_HOME/tessera/cudnn-algos.tsv) under a "graph2" key
// naming bias, Z and the activation; a second session takes it from there: the cached plan, or the
// older path where the line says 0.
TEST_F(CudaBlas, NhwcConvGraphChoiceIsCachedOnDisk) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / fmt::format("tessera-graph-cache-{}", ::getpid());
  fs::create_directories(dir);
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  const rt::Shape x{2, 14, 14, 40}, w{120, 1, 1, 40};
  const std::string first = check(x, w, {act("Clip"), relu6()}, DataType::kFloat16);
  const std::string second = check(x, w, {act("Clip"), relu6()}, DataType::kFloat16);
  if (old) {
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  } else {
    unsetenv("XDG_CACHE_HOME");
  }
  std::ifstream in(dir / "tessera" / "cudnn-algos.tsv");
  std::string line, choice;
  while (std::getline(in, line))
    if (line.find("|graph2|b1z0|") != std::string::npos) choice = line.substr(line.find('\t') + 1);
  fs::remove_all(dir);
  ASSERT_FALSE(choice.empty()) << "no graph2 line in the cache after a timed choice (" << first << ")";
  const int plan = std::stoi(choice.substr(0, choice.find('\t')));
  if (plan > 0) {
    EXPECT_TRUE(is_graph(first)) << first;
    EXPECT_NE(second.find("(cached)"), std::string::npos) << second;
  } else {
    EXPECT_FALSE(is_graph(first)) << first;
    EXPECT_FALSE(is_graph(second)) << second;
  }
  std::cout << "[graph cache] first: " << first << "; second: " << second << "\n";
}

// The tiled depthwise 3x3 kernel (own path forced) over MobileNetV2-like shapes and the edge cases.
TEST_F(CudaBlas, NhwcDepthwiseTiled) {
  ScopedEnv env("TESSERA_CUDA_DEPTHWISE", "own");
  const auto pads1 = ints("pads", {1, 1, 1, 1});
  const auto s2 = ints("strides", {2, 2});
  for (DataType t : {DataType::kFloat16, DataType::kFloat}) {
    // Stride 1 over 56x56x144 (903k outputs; 18 vectors of float16 = one chunk of 9 twice).
    std::string p = check({2, 56, 56, 144}, {144, 3, 3, 1}, {group(144), pads1, act("Clip"), relu6()}, t);
    EXPECT_NE(p.find("own depthwise"), std::string::npos) << p;
    // Stride 2, odd image sizes: the last tiles are partial in both directions.
    check({2, 57, 55, 96}, {96, 3, 3, 1}, {group(96), s2, pads1, act("Clip"), relu6()}, t);
    // Stride 2 with TensorFlow's SAME pads (bottom/right only), no activation.
    check({1, 30, 31, 32}, {32, 3, 3, 1}, {group(32), s2, ints("pads", {0, 0, 1, 1})}, t);
    // 136 channels: 17 float16 vectors, a prime count: a chunk of 16 and one mostly idle.
    check({1, 19, 21, 136}, {136, 3, 3, 1}, {group(136), pads1, act("Relu")}, t);
    // Odd channel counts: single-channel loads.
    check({2, 23, 17, 37}, {37, 3, 3, 1}, {group(37), pads1, act("Clip"), relu6()}, t);
    check({1, 16, 16, 5}, {5, 3, 3, 1}, {group(5), s2, pads1}, t);
    // The residual Z with the bias, no padding (the output is smaller than the input).
    check({2, 18, 20, 64}, {64, 3, 3, 1}, {group(64)}, t, {2, 16, 18, 64});
    // Larger pads than the window reaches into: whole tile rows of zeros.
    check({1, 6, 7, 16}, {16, 3, 3, 1}, {group(16), ints("pads", {2, 2, 2, 2}), act("Relu")}, t);
  }
}
