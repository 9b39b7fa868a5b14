// com.tessera NhwcConv on cuDNN against its reference kernel (transposes around the reference FusedConv):
// ResNet-50 and MobileNetV2 layers (7x7 stride 2 over 3 channels, 3x3, 1x1, 1x1 stride 2, depthwise
// stride 2), bias + residual Z + ReLU (cuDNN's fused call), the activations our epilogue kernel applies
// (Clip 0..6, Sigmoid, LeakyRelu, HardSigmoid), asymmetric pads, odd channel counts, in float32 and float16.
//
// Error bound per element: 2 * K * 2^-23 * sum |x||w| (+|b|+|z|), K the products per output (float32
// accumulation on either side), plus 2 ulps of the result, plus, for float16, half an ulp of
// sum |x||w| (+|b|+|z|) for the rounding of the convolution to float16 before the epilogue adds B and Z
// (the reference rounds once; conv_test_util.h).
#include <cstdlib>

#include "conv_test_util.h"

using namespace cuda_test;

namespace {

constexpr DataType kTypes[] = {DataType::kFloat, DataType::kFloat16};

// NhwcConv of x [N, H, W, C] with w [M, kH, kW, C/group], a bias, and optionally Z [N, oH, oW, M].
void check_nhwc(const rt::Shape& x, const rt::Shape& w, std::vector<ir::Attribute> attrs, DataType t,
                const rt::Shape& z = {}) {
  std::vector<rt::Shape> shapes = {x, w, {w[0]}};
  std::vector<rt::Tensor> ins = {random_tensor(t, x, 11), random_tensor(t, w, 12),
                                 random_tensor(t, {w[0]}, 13)};
  if (!z.empty()) {
    shapes.push_back(z);
    ins.push_back(random_tensor(t, z, 14));
  }
  std::string act;
  for (const auto& a : attrs)
    if (a.name == "activation") act = a.s;
  Node n = make_node("NhwcConv", t, shapes, std::move(attrs), "com.tessera");
  Result r = run_both(n, ins);
  const double k = static_cast<double>(w[1] * w[2] * w[3]);
  expect_within(r, k + 2, 2,
                "NhwcConv x" + rt::shape_str(x) + " w" + rt::shape_str(w) + " " + act + " " + type_name(t),
                t == DataType::kFloat ? 0 : 0.5);
}

ir::Attribute act(const char* name) {
  return ir::Attribute::of_string("activation", name);
}

}  // namespace

TEST_F(CudaBlas, NhwcConvResNetAndMobileNetLayers) {
  const auto pads1 = ints("pads", {1, 1, 1, 1});
  for (DataType t : kTypes) {
    // ResNet-50's stem over 3 channels, with ReLU (bias + ReLU in cuDNN's fused call).
    check_nhwc({1, 64, 64, 3}, {16, 7, 7, 3},
               {ints("strides", {2, 2}), ints("pads", {3, 3, 3, 3}), act("Relu")}, t);
    // A bottleneck's 3x3 and its last 1x1 with the residual Z and ReLU.
    check_nhwc({2, 28, 28, 64}, {64, 3, 3, 64}, {pads1, act("Relu")}, t);
    check_nhwc({2, 28, 28, 64}, {256, 1, 1, 64}, {act("Relu")}, t, {2, 28, 28, 256});
    // The downsampling shortcut: 1x1 stride 2, bias only (the epilogue kernel).
    check_nhwc({1, 29, 29, 64}, {128, 1, 1, 64}, {ints("strides", {2, 2})}, t);
    // MobileNetV2: expansion with ReLU6, depthwise stride 2 with ReLU6, projection with residual Z.
    const auto relu6 = ir::Attribute::of_floats("activation_params", {0.f, 6.f});
    check_nhwc({2, 28, 28, 32}, {192, 1, 1, 32}, {act("Clip"), relu6}, t);
    check_nhwc({2, 28, 28, 192}, {192, 3, 3, 1},
               {ir::Attribute::of_int("group", 192), ints("strides", {2, 2}), pads1, act("Clip"), relu6}, t);
    check_nhwc({2, 14, 14, 192}, {32, 1, 1, 192}, {}, t, {2, 14, 14, 32});
  }
}

TEST_F(CudaBlas, NhwcConvActivationsPadsAndOddChannels) {
  for (DataType t : kTypes) {
    check_nhwc({1, 13, 11, 5}, {7, 3, 3, 5}, {ints("pads", {1, 1, 1, 1}), act("Sigmoid")}, t);
    check_nhwc({2, 9, 10, 6}, {8, 3, 3, 3},
               {ir::Attribute::of_int("group", 2), act("LeakyRelu"),
                ir::Attribute::of_floats("activation_params", {0.1f})},
               t);
    // SAME_UPPER with an even window: asymmetric pads, padded into a copy first.
    check_nhwc({1, 15, 16, 8}, {8, 4, 2, 8},
               {ir::Attribute::of_string("auto_pad", "SAME_UPPER"), ints("strides", {2, 3}),
                act("HardSigmoid"), ir::Attribute::of_floats("activation_params", {0.2f, 0.5f})},
               t);
    check_nhwc({1, 10, 10, 4}, {6, 3, 3, 4}, {ints("pads", {0, 1, 2, 0}), ints("dilations", {2, 1})}, t);
  }
}

// Depthwise layers on both paths NhwcConv times against each other at session build: our own kernel
// (tiled where it applies; "direct" forces the untiled one) and cuDNN's (TESSERA_CUDA_DEPTHWISE decides
// without timing), with vector and single-channel loads, asymmetric pads handled in the kernel, bias, Z
// and the activations.
TEST_F(CudaBlas, NhwcDepthwiseOnBothPaths) {
  const auto relu6 = ir::Attribute::of_floats("activation_params", {0.f, 6.f});
  for (const char* path : {"own", "direct", "cudnn"}) {
    setenv("TESSERA_CUDA_DEPTHWISE", path, 1);
    for (DataType t : kTypes) {
      check_nhwc({2, 28, 28, 144}, {144, 3, 3, 1},
                 {ir::Attribute::of_int("group", 144), ints("pads", {1, 1, 1, 1}), act("Clip"), relu6}, t);
      check_nhwc({1, 15, 17, 24}, {24, 3, 3, 1},
                 {ir::Attribute::of_int("group", 24), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}, t,
                 {1, 8, 9, 24});
      check_nhwc({1, 9, 10, 5}, {5, 5, 5, 1},
                 {ir::Attribute::of_int("group", 5), ints("pads", {2, 1, 1, 2}), ints("dilations", {1, 2}),
                  act("Relu")},
                 t);
    }
  }
  unsetenv("TESSERA_CUDA_DEPTHWISE");
}
