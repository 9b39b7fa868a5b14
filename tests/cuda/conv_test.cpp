// The cuDNN Conv, ConvTranspose and FusedConv kernels against the CPU's reference kernels: ResNet-50 and
// MobileNetV2 layers (7x7 stride 2, 3x3, 1x1, stride 2, depthwise), groups, dilations, asymmetric pads
// (SAME_UPPER / SAME_LOWER with even windows), 1-D and 3-D, ConvTranspose's output_padding and
// output_shape, in float32 and float16 (the ONNX types these operators take).
//
// Error bound per element: 2 * K * 2^-23 * sum |x||w| (+|b|) with K the products per output (float32
// accumulation on either side), plus 2 ulps of the element type at the result's magnitude, plus, for
// float16, half an ulp of sum |x||w| (+|b|): where cuDNN does not fuse the bias (all but bias + ReLU), the
// convolution is rounded to float16 before the epilogue adds the bias and Z, and where they cancel that
// rounding is many ulps of the result (the ~15 ulp differences seen on the H100 before this term).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "conv_test_util.h"

using namespace cuda_test;

namespace {

// ONNX types these operators for float16, float and double only.
constexpr DataType kTypes[] = {DataType::kFloat, DataType::kFloat16};

// Conv of x [N, C, spatial...] with w [M, C/group, kernel...] and a bias, checked against the reference.
void check_conv(const std::string& op, const rt::Shape& x, const rt::Shape& w,
                std::vector<ir::Attribute> attrs, DataType t, bool bias = true,
                const std::string& domain = "") {
  rt::Shape b{op == "ConvTranspose" ? w[1] * 1 : w[0]};
  for (const auto& a : attrs)
    if (a.name == "group" && op == "ConvTranspose") b[0] = w[1] * a.i;
  std::vector<rt::Shape> shapes = {x, w};
  std::vector<rt::Tensor> ins = {random_tensor(t, x, 11), random_tensor(t, w, 12)};
  if (bias) {
    shapes.push_back(b);
    ins.push_back(random_tensor(t, b, 13));
  }
  Node n = make_node(op, t, shapes, std::move(attrs), domain);
  Result r = run_both(n, ins);
  double k = 1;
  for (size_t d = 1; d < w.size(); ++d) k *= static_cast<double>(w[d]);
  if (op == "ConvTranspose") k = k / static_cast<double>(w[1]) * static_cast<double>(w[0]);
  expect_within(r, k + 1, 2, op + " x" + rt::shape_str(x) + " w" + rt::shape_str(w) + " " + type_name(t),
                t == DataType::kFloat ? 0 : 0.5);
}

}  // namespace

TEST_F(CudaBlas, ConvResNetAndMobileNetLayers) {
  for (DataType t : kTypes) {
    // ResNet-50's stem: 7x7 stride 2 pad 3.
    check_conv("Conv", {1, 3, 64, 64}, {16, 3, 7, 7}, {ints("strides", {2, 2}), ints("pads", {3, 3, 3, 3})},
               t);
    // 3x3 and 1x1 of a bottleneck block.
    check_conv("Conv", {2, 64, 28, 28}, {64, 64, 3, 3}, {ints("pads", {1, 1, 1, 1})}, t);
    check_conv("Conv", {2, 64, 28, 28}, {256, 64, 1, 1}, {}, t, false);
    // 1x1 stride 2 (the downsampling shortcut).
    check_conv("Conv", {1, 64, 29, 29}, {128, 64, 1, 1}, {ints("strides", {2, 2})}, t);
    // MobileNetV2's depthwise 3x3, stride 2.
    check_conv("Conv", {1, 96, 56, 56}, {96, 1, 3, 3},
               {ir::Attribute::of_int("group", 96), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}, t);
  }
}

TEST_F(CudaBlas, ConvGroupsDilationsAutoPadAndRanks) {
  check_conv("Conv", {2, 12, 17, 19}, {18, 4, 3, 3},
             {ir::Attribute::of_int("group", 3), ints("dilations", {2, 1}), ints("pads", {2, 1, 2, 1})},
             DataType::kFloat);
  // Even windows under SAME_*: asymmetric pads, padded into a copy first.
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"})
    check_conv("Conv", {1, 5, 15, 16}, {7, 5, 4, 2},
               {ir::Attribute::of_string("auto_pad", mode), ints("strides", {2, 3})}, DataType::kFloat);
  check_conv("Conv", {1, 4, 10, 10}, {6, 4, 3, 3}, {ints("pads", {0, 1, 2, 0})}, DataType::kFloat16);
  check_conv("Conv", {1, 4, 10, 10}, {6, 4, 3, 3}, {ir::Attribute::of_string("auto_pad", "VALID")},
             DataType::kFloat);
  // 1-D and 3-D.
  check_conv("Conv", {3, 8, 101}, {16, 8, 5}, {ints("pads", {2, 2}), ints("strides", {2})}, DataType::kFloat);
  check_conv("Conv", {1, 4, 9, 10, 11}, {8, 4, 3, 3, 3}, {ints("pads", {1, 1, 1, 1, 1, 1})},
             DataType::kFloat);
}

TEST_F(CudaBlas, ConvTransposePadsOutputPaddingAndShape) {
  for (DataType t : kTypes) {
    check_conv("ConvTranspose", {1, 16, 14, 14}, {16, 8, 3, 3},
               {ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}), ints("output_padding", {1, 1})}, t);
    check_conv("ConvTranspose", {2, 8, 9, 7}, {8, 6, 4, 4},
               {ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}, t);
  }
  check_conv("ConvTranspose", {1, 6, 5, 5}, {6, 2, 3, 3},
             {ir::Attribute::of_int("group", 3), ints("strides", {3, 2}), ints("output_shape", {16, 11})},
             DataType::kFloat);
  check_conv("ConvTranspose", {1, 3, 7, 7}, {3, 4, 2, 2},
             {ir::Attribute::of_string("auto_pad", "SAME_UPPER"), ints("strides", {2, 2})}, DataType::kFloat,
             false);
  check_conv("ConvTranspose", {2, 4, 20}, {4, 3, 5}, {ints("strides", {3}), ints("pads", {2, 1})},
             DataType::kFloat);
}

TEST_F(CudaBlas, FusedConvAppliesTheActivation) {
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    // ReLU in cuDNN's fused call, the others in the epilogue kernel (activation_params as ONNX Runtime
    // orders them).
    const std::pair<const char*, std::vector<float>> acts[] = {{"Relu", {}},
                                                               {"Sigmoid", {}},
                                                               {"Tanh", {}},
                                                               {"LeakyRelu", {0.1f}},
                                                               {"Clip", {0.f, 6.f}},
                                                               {"Clip", {-0.5f, 0.5f}},
                                                               {"HardSigmoid", {0.2f, 0.5f}}};
    for (const auto& [act, params] : acts) {
      std::vector<ir::Attribute> attrs = {ints("pads", {1, 1, 1, 1}),
                                          ir::Attribute::of_string("activation", act)};
      if (!params.empty()) attrs.push_back(ir::Attribute::of_floats("activation_params", params));
      check_conv("FusedConv", {1, 16, 20, 20}, {32, 16, 3, 3}, attrs, t, true, "com.microsoft");
    }
  }
}

TEST_F(CudaBlas, FusedConvAddsZBeforeTheActivation) {
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    rt::Shape x{2, 8, 13, 11}, w{12, 8, 3, 3}, b{12}, z{2, 12, 13, 11};
    Node n = make_node("FusedConv", t, {x, w, b, z},
                       {ints("pads", {1, 1, 1, 1}), ir::Attribute::of_string("activation", "Relu")},
                       "com.microsoft");
    Result r = run_both(n, {random_tensor(t, x, 31), random_tensor(t, w, 32), random_tensor(t, b, 33),
                            random_tensor(t, z, 34)});
    expect_within(r, 8 * 9 + 2, 3, "FusedConv with Z " + type_name(t), t == DataType::kFloat ? 0 : 0.5);
  }
}

// The algorithm chosen for a new configuration lands in $XDG_CACHE_HOME/tessera/cudnn-algos.tsv, one
// "key<TAB>algorithm<TAB>math type" line each; a file of garbage found there is ignored and replaced.
TEST_F(CudaBlas, ConvAlgorithmsAreCachedOnDisk) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / fmt::format("tessera-algo-cache-{}", ::getpid());
  fs::create_directories(dir / "tessera");
  {
    std::ofstream junk(dir / "tessera" / "cudnn-algos.tsv");
    junk << "not\ta\tnumber\n\x01\x02 truncated";
  }
  const char* old = std::getenv("XDG_CACHE_HOME");
  std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  check_conv("Conv", {1, 3, 23, 29}, {5, 3, 3, 3}, {ints("strides", {2, 1})}, DataType::kFloat);
  if (old) {
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  } else {
    unsetenv("XDG_CACHE_HOME");
  }
  std::ifstream in(dir / "tessera" / "cudnn-algos.tsv");
  std::string line;
  bool found = false;
  while (std::getline(in, line)) {
    auto t1 = line.find('\t'), t2 = line.rfind('\t');
    ASSERT_NE(t1, std::string::npos) << line;
    ASSERT_NE(t1, t2) << line;
    EXPECT_NO_THROW((void)std::stoi(line.substr(t1 + 1, t2 - t1 - 1))) << line;
    EXPECT_NO_THROW((void)std::stoi(line.substr(t2 + 1))) << line;
    found |= line.find("fwd|float|x[1, 3, 23, 29]") != std::string::npos;
  }
  EXPECT_TRUE(found) << "no cache line for the convolution just run";
  fs::remove_all(dir);
}
