// Reference kernels of the compute-heavy operators of src/ops/nn on what the ONNX conformance suite
// leaves out: the blocked float GEMM against a naive triple loop on odd sizes, Conv with groups,
// dilations and asymmetric pads against a direct convolution, element types the suite does not use,
// and the error paths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/model.h"
#include "kernel_test_util.h"
#include "ops/nn/gemm_kernel_util.h"
#include "runtime/half.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace tessera {
namespace {

using ir::Attribute;
using ir::DataType;
using kernel_test::make;
using kernel_test::values;
using kernel_test::vec;
using rt::Tensor;

// Runs one node with `outputs` outputs; an undefined Tensor among `ins` leaves that input out.
std::vector<Tensor> run_node(const std::string& op, int opset, const std::vector<Tensor>& ins,
                             std::vector<Attribute> attrs = {}, size_t outputs = 1, int threads = 1) {
  return kernel_test::run_one_node(
      op, opset, ins, std::move(attrs),
      {.outputs = outputs, .threads = threads, .optimization = rt::OptLevel::kNone});
}

Tensor run_op(const std::string& op, int opset, const std::vector<Tensor>& ins,
              std::vector<Attribute> attrs = {}, int threads = 1) {
  return run_node(op, opset, ins, std::move(attrs), 1, threads).at(0);
}

std::string error_of(const std::string& op, int opset, const std::vector<Tensor>& ins,
                     std::vector<Attribute> attrs = {}) {
  return kernel_test::run_error(op, opset, ins, std::move(attrs), {.optimization = rt::OptLevel::kNone});
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// --- the shared GEMM ---

TEST(NnComputeKernelsTest, GemmMatchesNaiveLoop) {
  rt::ThreadPool pool(2);
  struct Size {
    int64_t m, n, k;
  };
  for (Size sz : {Size{1, 1, 1}, Size{7, 13, 5}, Size{65, 130, 67}, Size{3, 300, 600}, Size{130, 2, 1}}) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        const int64_t m = sz.m, n = sz.n, k = sz.k;
        auto a = random_floats(static_cast<size_t>(m * k), 1);
        auto b = random_floats(static_cast<size_t>(k * n), 2);
        auto c0 = random_floats(static_cast<size_t>(m * n), 3);
        const float alpha = 0.75f, beta = -0.5f;
        std::vector<float> c = c0;
        ops::kernels::gemm_f32(&pool, ta, tb, m, n, k, alpha, a.data(), ta ? m : k, b.data(), tb ? k : n,
                               beta, c.data(), n);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (int64_t p = 0; p < k; ++p) {
              double av = ta ? a[p * m + i] : a[i * k + p];
              double bv = tb ? b[j * k + p] : b[p * n + j];
              acc += av * bv;
            }
            double want = alpha * acc + beta * c0[i * n + j];
            ASSERT_NEAR(c[i * n + j], want, 1e-4 * (1 + std::abs(want)))
                << "m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb << " at " << i << ","
                << j;
          }
        }
      }
    }
  }
}

TEST(NnComputeKernelsTest, GemmBetaZeroIgnoresNaNAndKZeroScalesC) {
  std::vector<float> a(6, 1.f), b(6, 1.f), c(4, std::nanf(""));
  ops::kernels::gemm_f32(nullptr, false, false, 2, 2, 3, 1.f, a.data(), 3, b.data(), 2, 0.f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{3, 3, 3, 3}));
  std::vector<float> d{1, 2};
  ops::kernels::gemm_f32(nullptr, false, false, 1, 2, 0, 1.f, a.data(), 1, b.data(), 2, 2.f, d.data(), 2);
  EXPECT_EQ(d, (std::vector<float>{2, 4}));
}

// --- Conv ---

// Direct 2-D convolution: x [N, C, H, W], w [M, C/g, kh, kw], pads {top, left, bottom, right}.
std::vector<float> naive_conv(const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& bias, int64_t n, int64_t c, int64_t h, int64_t wd,
                              int64_t m, int64_t g, int64_t kh, int64_t kw, std::vector<int64_t> s,
                              std::vector<int64_t> d, std::vector<int64_t> p, int64_t& oh, int64_t& ow) {
  oh = (h + p[0] + p[2] - (d[0] * (kh - 1) + 1)) / s[0] + 1;
  ow = (wd + p[1] + p[3] - (d[1] * (kw - 1) + 1)) / s[1] + 1;
  const int64_t cg = c / g, mg = m / g;
  std::vector<float> y(static_cast<size_t>(n * m * oh * ow));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < m; ++oc)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = bias.empty() ? 0 : bias[oc];
          int64_t grp = oc / mg;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t v = 0; v < kw; ++v) {
                int64_t yy = i * s[0] - p[0] + u * d[0], xx = j * s[1] - p[1] + v * d[1];
                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                acc += double(x[((b * c + grp * cg + ic) * h + yy) * wd + xx]) *
                       w[((oc * cg + ic) * kh + u) * kw + v];
              }
          y[((b * m + oc) * oh + i) * ow + j] = static_cast<float>(acc);
        }
  return y;
}

TEST(NnComputeKernelsTest, ConvGroupsDilationsAsymmetricPadsMatchDirect) {
  const int64_t n = 2, c = 6, h = 9, wd = 11, m = 4, g = 2, kh = 3, kw = 2;
  std::vector<int64_t> s{2, 1}, d{2, 3}, p{1, 0, 2, 3};
  auto x = random_floats(static_cast<size_t>(n * c * h * wd), 4);
  auto w = random_floats(static_cast<size_t>(m * (c / g) * kh * kw), 5);
  auto bias = random_floats(static_cast<size_t>(m), 6);
  int64_t oh, ow;
  auto want = naive_conv(x, w, bias, n, c, h, wd, m, g, kh, kw, s, d, p, oh, ow);
  for (int threads : {1, 2}) {
    Tensor y = run_op(
        "Conv", 11,
        {make<float>(DataType::kFloat, {n, c, h, wd}, x),
         make<float>(DataType::kFloat, {m, c / g, kh, kw}, w), make<float>(DataType::kFloat, {m}, bias)},
        {Attribute::of_int("group", g), Attribute::of_ints("strides", s), Attribute::of_ints("dilations", d),
         Attribute::of_ints("pads", p)},
        threads);
    ASSERT_EQ(y.shape(), (rt::Shape{n, m, oh, ow}));
    auto got = values<float>(y);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << i;
  }
}

TEST(NnComputeKernelsTest, ConvDoubleAndFloat16) {
  // 1-D, depthwise, SAME_LOWER: y[i] = x[i-1] + 2 x[i] for a kernel [1, 2] padded one at the start.
  Tensor xd = make<double>(DataType::kDouble, {1, 1, 4}, {1, 2, 3, 4});
  Tensor wd = make<double>(DataType::kDouble, {1, 1, 2}, {1, 2});
  Tensor yd = run_op("Conv", 11, {xd, wd}, {Attribute::of_string("auto_pad", "SAME_LOWER")});
  EXPECT_EQ(values<double>(yd), (std::vector<double>{2, 5, 8, 11}));
  Tensor xh = make<rt::Float16>(DataType::kFloat16, {1, 1, 4}, {1.f, 2.f, 3.f, 4.f});
  Tensor wh = make<rt::Float16>(DataType::kFloat16, {1, 1, 2}, {1.f, 2.f});
  Tensor yh = run_op("Conv", 11, {xh, wh}, {Attribute::of_string("auto_pad", "SAME_UPPER")});
  std::vector<float> got;
  for (auto v : values<rt::Float16>(yh)) got.push_back(v);
  EXPECT_EQ(got, (std::vector<float>{5, 8, 11, 4}));
}

TEST(NnComputeKernelsTest, ConvRejectsBadShapes) {
  Tensor x = make<float>(DataType::kFloat, {1, 3, 4, 4}, std::vector<float>(48, 1.f));
  Tensor w = make<float>(DataType::kFloat, {2, 2, 3, 3}, std::vector<float>(36, 1.f));
  EXPECT_NE(error_of("Conv", 11, {x, w}).find("channels"), std::string::npos);
  Tensor w5 = make<float>(DataType::kFloat, {2, 3, 5, 5}, std::vector<float>(150, 1.f));
  EXPECT_NE(error_of("Conv", 11, {x, w5}).find("window"), std::string::npos);
}

TEST(NnComputeKernelsTest, ConvIntegerPerChannelZeroPoint) {
  Tensor x = make<uint8_t>(DataType::kUint8, {1, 1, 2, 2}, {3, 4, 5, 6});
  Tensor w = make<int8_t>(DataType::kInt8, {2, 1, 1, 1}, {2, -1});
  Tensor xz = make<uint8_t>(DataType::kUint8, {}, {1});
  Tensor wz = make<int8_t>(DataType::kInt8, {2}, {1, 0});
  Tensor y = run_op("ConvInteger", 10, {x, w, xz, wz});
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{2, 3, 4, 5, -2, -3, -4, -5}));
}

// --- Gemm and MatMul ---

TEST(NnComputeKernelsTest, GemmIntegerAndDoubleWithBroadcastC) {
  Tensor a = make<int32_t>(DataType::kInt32, {2, 2}, {1, 2, 3, 4});
  Tensor b = make<int32_t>(DataType::kInt32, {2, 2}, {5, 6, 7, 8});
  Tensor c = make<int32_t>(DataType::kInt32, {2}, {100, 200});
  EXPECT_EQ(values<int32_t>(run_op("Gemm", 13, {a, b, c}, {Attribute::of_int("transB", 1)})),
            (std::vector<int32_t>{117, 223, 139, 253}));
  Tensor ad = make<double>(DataType::kDouble, {2, 1}, {1, 2});
  Tensor bd = make<double>(DataType::kDouble, {1, 2}, {3, 4});
  Tensor cd = make<double>(DataType::kDouble, {2, 1}, {1, 2});
  EXPECT_EQ(values<double>(run_op("Gemm", 13, {ad, bd, cd},
                                  {Attribute::of_float("alpha", 2.f), Attribute::of_float("beta", 0.5f)})),
            (std::vector<double>{6.5, 8.5, 13, 17}));
  Tensor bad = make<double>(DataType::kDouble, {3}, {1, 2, 3});
  EXPECT_NE(error_of("Gemm", 13, {ad, bd, bad}).find("broadcast"), std::string::npos);
}

TEST(NnComputeKernelsTest, MatMulBroadcastsAndWrapsIntegers) {
  Tensor a = make<int64_t>(DataType::kInt64, {2, 1, 2}, {1, 2, 3, 4});
  Tensor b = make<int64_t>(DataType::kInt64, {2}, {10, 1});
  Tensor y = run_op("MatMul", 13, {a, b});
  EXPECT_EQ(y.shape(), (rt::Shape{2, 1}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{12, 34}));
  Tensor big = make<int32_t>(DataType::kInt32, {1, 1}, {65536});
  EXPECT_EQ(values<int32_t>(run_op("MatMul", 13, {big, big})), (std::vector<int32_t>{0}));
  Tensor bad = make<int64_t>(DataType::kInt64, {3}, {1, 2, 3});
  EXPECT_NE(error_of("MatMul", 13, {a, bad}).find("must match"), std::string::npos);
  // Many small float products (split over threads by batch) against the per-matrix loop.
  auto av = random_floats(64 * 5 * 3, 7), bv = random_floats(3 * 4, 8);
  Tensor y2 = run_op(
      "MatMul", 13,
      {make<float>(DataType::kFloat, {64, 5, 3}, av), make<float>(DataType::kFloat, {3, 4}, bv)}, {}, 2);
  auto got = values<float>(y2);
  for (int64_t bt = 0; bt < 64; ++bt)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        float acc = 0;
        for (int64_t p = 0; p < 3; ++p) acc += av[(bt * 5 + i) * 3 + p] * bv[p * 4 + j];
        ASSERT_NEAR(got[(bt * 5 + i) * 4 + j], acc, 1e-5);
      }
}

// --- pooling ---

TEST(NnComputeKernelsTest, MaxPoolIndicesColumnMajorAndInt8) {
  Tensor x = make<float>(DataType::kFloat, {1, 1, 2, 3}, {1, 9, 2, 8, 3, 7});
  auto outs =
      run_node("MaxPool", 12, {x},
               {Attribute::of_ints("kernel_shape", {2, 2}), Attribute::of_int("storage_order", 1)}, 2);
  EXPECT_EQ(values<float>(outs[0]), (std::vector<float>{9, 9}));
  // 9 is at (0, 1): column-major index 1 * 2 + 0.
  EXPECT_EQ(values<int64_t>(outs[1]), (std::vector<int64_t>{2, 2}));
  Tensor xi = make<int8_t>(DataType::kInt8, {1, 1, 3}, {-5, -7, -6});
  EXPECT_EQ(values<int8_t>(run_op("MaxPool", 12, {xi}, {Attribute::of_ints("kernel_shape", {2})})),
            (std::vector<int8_t>{-5, -6}));
}

TEST(NnComputeKernelsTest, PoolingDoubleAndErrors) {
  Tensor x = make<double>(DataType::kDouble, {1, 1, 3}, {1, 2, 4});
  Tensor avg = run_op("AveragePool", 19, {x},
                      {Attribute::of_ints("kernel_shape", {2}), Attribute::of_ints("pads", {1, 0}),
                       Attribute::of_int("count_include_pad", 1)});
  EXPECT_EQ(values<double>(avg), (std::vector<double>{0.5, 1.5, 3}));
  Tensor gl = run_op("GlobalLpPool", 2, {x}, {Attribute::of_int("p", 1)});
  EXPECT_EQ(values<double>(gl), (std::vector<double>{7}));
  EXPECT_NE(error_of("MaxPool", 12, {x}, {Attribute::of_ints("kernel_shape", {5})}).find("window"),
            std::string::npos);
  EXPECT_NE(error_of("AveragePool", 19, {x}, {Attribute::of_ints("kernel_shape", {2, 2})}).find("entries"),
            std::string::npos);
}

TEST(NnComputeKernelsTest, MaxUnpoolRejectsOutOfRangeIndex) {
  Tensor x = make<float>(DataType::kFloat, {1, 1, 1, 1}, {5});
  Tensor i = make<int64_t>(DataType::kInt64, {1, 1, 1, 1}, {4});
  EXPECT_NE(error_of("MaxUnpool", 11, {x, i}, {Attribute::of_ints("kernel_shape", {2, 2})}).find("I[0] is 4"),
            std::string::npos);
  Tensor ok = make<int64_t>(DataType::kInt64, {1, 1, 1, 1}, {3});
  EXPECT_EQ(values<float>(run_op("MaxUnpool", 11, {x, ok}, {Attribute::of_ints("kernel_shape", {2, 2})})),
            (std::vector<float>{0, 0, 0, 5}));
}

// --- linear algebra ---

TEST(NnComputeKernelsTest, EinsumTraceDiagonalAndIntegers) {
  Tensor m = make<int32_t>(DataType::kInt32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(values<int32_t>(run_op("Einsum", 12, {m}, {Attribute::of_string("equation", "ii")})),
            (std::vector<int32_t>{15}));
  EXPECT_EQ(values<int32_t>(run_op("Einsum", 12, {m}, {Attribute::of_string("equation", "ii->i")})),
            (std::vector<int32_t>{1, 5, 9}));
  EXPECT_EQ(values<int32_t>(run_op("Einsum", 12, {m, m}, {Attribute::of_string("equation", "ij,jk")}))[0],
            30);
  Tensor v = make<double>(DataType::kDouble, {2, 1}, {1, 2});
  Tensor w = make<double>(DataType::kDouble, {3}, {1, 10, 100});
  Tensor y = run_op("Einsum", 12, {v, w}, {Attribute::of_string("equation", "...i,j->...ij")});
  EXPECT_EQ(y.shape(), (rt::Shape{2, 1, 3}));
  EXPECT_EQ(values<double>(y), (std::vector<double>{1, 10, 100, 2, 20, 200}));
  EXPECT_NE(error_of("Einsum", 12, {m, w}, {Attribute::of_string("equation", "ij,jk->ik")}).find("input 1"),
            std::string::npos);
}

TEST(NnComputeKernelsTest, DetDoubleAndSingular) {
  Tensor x = make<double>(DataType::kDouble, {2, 2, 2}, {0, 1, 1, 0, 1, 2, 2, 4});
  EXPECT_EQ(values<double>(run_op("Det", 11, {x})), (std::vector<double>{-1, 0}));
  Tensor bad = make<double>(DataType::kDouble, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_NE(error_of("Det", 11, {bad}).find("square"), std::string::npos);
}

// --- detection ---

TEST(NnComputeKernelsTest, NonMaxSuppressionWithoutLimitSelectsNothing) {
  Tensor boxes = make<float>(DataType::kFloat, {1, 1, 4}, {0, 0, 1, 1});
  Tensor scores = make<float>(DataType::kFloat, {1, 1, 1}, {0.9f});
  EXPECT_EQ(run_op("NonMaxSuppression", 11, {boxes, scores}).shape(), (rt::Shape{0, 3}));
  Tensor limit = make<int64_t>(DataType::kInt64, {1}, {5});
  EXPECT_EQ(values<int64_t>(run_op("NonMaxSuppression", 11, {boxes, scores, limit})),
            (std::vector<int64_t>{0, 0, 0}));
}

TEST(NnComputeKernelsTest, RoiAlignRejectsBadBatchIndex) {
  Tensor x = make<float>(DataType::kFloat, {1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor rois = make<float>(DataType::kFloat, {1, 4}, {0, 0, 1, 1});
  Tensor bi = make<int64_t>(DataType::kInt64, {1}, {1});
  EXPECT_NE(error_of("RoiAlign", 16, {x, rois, bi}).find("batch_indices[0] is 1"), std::string::npos);
}

TEST(NnComputeKernelsTest, MaxRoiPoolTakesBinMaxima) {
  Tensor x = make<float>(DataType::kFloat, {1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor rois = make<float>(DataType::kFloat, {1, 5}, {0, 0, 0, 1, 1});
  Tensor y = run_op("MaxRoiPool", 22, {x, rois}, {Attribute::of_ints("pooled_shape", {1, 2})});
  EXPECT_EQ(values<float>(y), (std::vector<float>{3, 4}));
  Tensor bad = make<float>(DataType::kFloat, {1, 5}, {3, 0, 0, 1, 1});
  EXPECT_NE(
      error_of("MaxRoiPool", 22, {x, bad}, {Attribute::of_ints("pooled_shape", {1, 1})}).find("batch index"),
      std::string::npos);
}

TEST(NnComputeKernelsTest, ConvTransposeDoubleStride2) {
  // 1-D: x = [1, 2], kernel [1, 1], stride 2 -> [1, 1, 2, 2].
  Tensor x = make<double>(DataType::kDouble, {1, 1, 2}, {1, 2});
  Tensor w = make<double>(DataType::kDouble, {1, 1, 2}, {1, 1});
  Tensor y = run_op("ConvTranspose", 11, {x, w}, {Attribute::of_ints("strides", {2})});
  EXPECT_EQ(values<double>(y), (std::vector<double>{1, 1, 2, 2}));
}

TEST(NnComputeKernelsTest, MatMulIntegerPerRowZeroPoint) {
  Tensor a = make<uint8_t>(DataType::kUint8, {2, 2}, {1, 2, 3, 4});
  Tensor b = make<uint8_t>(DataType::kUint8, {2, 1}, {1, 1});
  Tensor az = make<uint8_t>(DataType::kUint8, {2}, {1, 2});
  EXPECT_EQ(values<int32_t>(run_op("MatMulInteger", 10, {a, b, az})), (std::vector<int32_t>{1, 3}));
  Tensor bad = make<uint8_t>(DataType::kUint8, {3}, {1, 2, 3});
  EXPECT_NE(error_of("MatMulInteger", 10, {a, b, bad}).find("a_zero_point"), std::string::npos);
}

TEST(NnComputeKernelsTest, QLinearConvRejectsZeroScale) {
  Tensor x = make<uint8_t>(DataType::kUint8, {1, 1, 1, 1}, {3});
  Tensor w = make<uint8_t>(DataType::kUint8, {1, 1, 1, 1}, {2});
  Tensor one = make<float>(DataType::kFloat, {}, {1.f});
  Tensor zero = make<float>(DataType::kFloat, {}, {0.f});
  Tensor zp = make<uint8_t>(DataType::kUint8, {}, {0});
  EXPECT_EQ(values<uint8_t>(run_op("QLinearConv", 10, {x, one, zp, w, one, zp, one, zp})),
            (std::vector<uint8_t>{6}));
  EXPECT_NE(error_of("QLinearConv", 10, {x, zero, zp, w, one, zp, one, zp}).find("x_scale"),
            std::string::npos);
}

TEST(NnComputeKernelsTest, DeformConvWithZeroOffsetsIsConv) {
  auto xv = random_floats(2 * 4 * 5, 11), wv = random_floats(3 * 2 * 2 * 2, 12);
  Tensor x = make<float>(DataType::kFloat, {1, 2, 4, 5}, xv);
  Tensor w = make<float>(DataType::kFloat, {3, 2, 2, 2}, wv);
  Tensor off = make<float>(DataType::kFloat, {1, 8, 4, 5}, std::vector<float>(160, 0.f));
  std::vector<Attribute> attrs{Attribute::of_ints("pads", {0, 0, 1, 1})};
  auto want = values<float>(run_op("Conv", 11, {x, w}, attrs));
  auto got = values<float>(run_op("DeformConv", 19, {x, w, off}, attrs));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5);
  Tensor bad = make<float>(DataType::kFloat, {1, 4, 4, 5}, std::vector<float>(80, 0.f));
  EXPECT_NE(error_of("DeformConv", 19, {x, w, bad}, attrs).find("input offset has shape"), std::string::npos);
}

TEST(NnComputeKernelsTest, Col2ImAndCausalConvErrors) {
  Tensor cols = make<float>(DataType::kFloat, {1, 4, 3}, std::vector<float>(12, 1.f));
  Tensor image = make<int64_t>(DataType::kInt64, {2}, {3, 3});
  Tensor block = make<int64_t>(DataType::kInt64, {2}, {2, 2});
  EXPECT_NE(error_of("Col2Im", 18, {cols, image, block}).find("blocks"), std::string::npos);
  Tensor img1 = make<int64_t>(DataType::kInt64, {1}, {5});
  Tensor blk1 = make<int64_t>(DataType::kInt64, {1}, {2});
  EXPECT_EQ(
      values<int32_t>(run_op(
          "Col2Im", 18, {make<int32_t>(DataType::kInt32, {1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), img1, blk1})),
      (std::vector<int32_t>{1, 7, 9, 11, 8}));
  Tensor in = make<float>(DataType::kFloat, {1, 1, 3}, {1, 2, 3});
  Tensor w = make<float>(DataType::kFloat, {1, 1, 2}, {1, 10});
  Tensor past = make<float>(DataType::kFloat, {1, 1, 1}, {5});
  auto outs = run_node("CausalConvWithState", 27, {in, w, Tensor(), past}, {}, 2);
  EXPECT_EQ(values<float>(outs[0]), (std::vector<float>{15, 21, 32}));
  EXPECT_EQ(values<float>(outs[1]), (std::vector<float>{3}));
  Tensor bad_past = make<float>(DataType::kFloat, {1, 1, 2}, {5, 6});
  EXPECT_NE(error_of("CausalConvWithState", 27, {in, w, Tensor(), bad_past}).find("past_state"),
            std::string::npos);
}

TEST(NnComputeKernelsTest, BFloat16PoolingAndEinsum) {
  Tensor x = make<rt::BFloat16>(DataType::kBFloat16, {1, 2, 2}, {1.f, 3.f, -2.f, -4.f});
  std::vector<float> got;
  for (auto v : values<rt::BFloat16>(run_op("GlobalMaxPool", 22, {x}))) got.push_back(v);
  EXPECT_EQ(got, (std::vector<float>{3, -2}));
  got.clear();
  for (auto v : values<rt::BFloat16>(run_op("Einsum", 28, {x}, {Attribute::of_string("equation", "bij->")})))
    got.push_back(v);
  EXPECT_EQ(got, (std::vector<float>{-2}));
}

}  // namespace
}  // namespace tessera
