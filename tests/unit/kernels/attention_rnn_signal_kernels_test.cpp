// Reference kernels of src/ops/attention, rnn, signal, image and training/flex_attention on what the
// ONNX conformance suite leaves out: element types it does not use, small hand-checked results and
// the error paths (bad shapes, out-of-range indices, inconsistent attributes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/model.h"
#include "kernel_test_util.h"
#include "runtime/half.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

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
                             std::vector<Attribute> attrs = {}, size_t outputs = 1,
                             const std::string& domain = {}) {
  return kernel_test::run_one_node(op, opset, ins, std::move(attrs), {.outputs = outputs, .domain = domain});
}

Tensor run_op(const std::string& op, int opset, const std::vector<Tensor>& ins,
              std::vector<Attribute> attrs = {}) {
  return run_node(op, opset, ins, std::move(attrs)).at(0);
}

std::string error_of(const std::string& op, int opset, const std::vector<Tensor>& ins,
                     std::vector<Attribute> attrs = {}, size_t outputs = 1) {
  return kernel_test::run_error(op, opset, ins, std::move(attrs), {.outputs = outputs});
}

Tensor f32(rt::Shape shape, std::vector<float> v) {
  return make<float>(DataType::kFloat, std::move(shape), v);
}
Tensor f64(rt::Shape shape, std::vector<double> v) {
  return make<double>(DataType::kDouble, std::move(shape), v);
}
Tensor i64(rt::Shape shape, std::vector<int64_t> v) {
  return make<int64_t>(DataType::kInt64, std::move(shape), v);
}
Tensor scalar_i64(int64_t v) {
  return make<int64_t>(DataType::kInt64, {}, {v});
}

template <class T>
std::vector<double> doubles(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i)
    out.push_back(static_cast<double>(static_cast<float>(t.data<T>()[i])));
  return out;
}
std::vector<double> doubles_f64(const Tensor& t) {
  return {t.data<double>(), t.data<double>() + t.numel()};
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// --- Attention ---------------------------------------------------------------------------------------

TEST(AttentionRnnSignalKernels, AttentionDoubleSingleKeyCopiesValue) {
  // One key: the softmax is 1 whatever the score, so Y is V.
  Tensor q = f64({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor k = f64({1, 1, 1, 2}, {5, 6});
  Tensor v = f64({1, 1, 1, 3}, {7, 8, 9});
  Tensor y = run_op("Attention", 23, {q, k, v});
  EXPECT_EQ(y.dtype(), DataType::kDouble);
  expect_near(doubles_f64(y), {7, 8, 9, 7, 8, 9}, 1e-12);
}

TEST(AttentionRnnSignalKernels, AttentionTwoKeysMatchesHandSoftmax) {
  Tensor q = f64({1, 1, 1, 1}, {1});
  Tensor k = f64({1, 1, 2, 1}, {0, 2});
  Tensor v = f64({1, 1, 2, 1}, {10, 20});
  Tensor y = run_op("Attention", 23, {q, k, v}, {Attribute::of_float("scale", 1.0f)});
  const double p1 = std::exp(2.0) / (1 + std::exp(2.0));
  expect_near(doubles_f64(y), {10 * (1 - p1) + 20 * p1}, 1e-9);
}

TEST(AttentionRnnSignalKernels, AttentionFullyMaskedRowIsZero) {
  Tensor q = f32({1, 1, 1, 2}, {1, 1});
  Tensor k = f32({1, 1, 2, 2}, {1, 0, 0, 1});
  Tensor v = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor mask = make<bool>(DataType::kBool, {1, 2}, {false, false});
  Tensor y = run_op("Attention", 23, {q, k, v, mask});
  expect_near(doubles<float>(y), {0, 0}, 0);
}

TEST(AttentionRnnSignalKernels, AttentionBFloat16Runs) {
  std::vector<rt::BFloat16> ones(4, rt::BFloat16(1.0f));
  Tensor q = make<rt::BFloat16>(DataType::kBFloat16, {1, 1, 1, 4}, ones);
  Tensor y = run_op("Attention", 23, {q, q, q});
  EXPECT_EQ(y.dtype(), DataType::kBFloat16);
  expect_near(doubles<rt::BFloat16>(y), {1, 1, 1, 1}, 0);
}

TEST(AttentionRnnSignalKernels, AttentionErrors) {
  Tensor q3 = f32({1, 2, 4}, std::vector<float>(8, 1));
  EXPECT_TRUE(contains(error_of("Attention", 23, {q3, q3, q3}), "q_num_heads"));
  Tensor q = f32({1, 1, 2, 2}, std::vector<float>(4, 1));
  Tensor long_mask = f32({2, 3}, std::vector<float>(6, 0));
  EXPECT_TRUE(contains(error_of("Attention", 23, {q, q, q, long_mask}), "attn_mask"));
  Tensor nonpad = i64({1}, {5});
  EXPECT_TRUE(contains(error_of("Attention", 24, {q, q, q, Tensor(), Tensor(), Tensor(), nonpad}),
                       "nonpad_kv_seqlen"));
  Tensor past = f32({1, 1, 1, 2}, {0, 0});
  EXPECT_NE(error_of("Attention", 23, {q, q, q, Tensor(), past}, {}, 1), "");
}

TEST(AttentionRnnSignalKernels, AttentionQkOutputModes) {
  // Mode 0 is the scaled Q K^T before softcap, mode 1 after it, mode 2 with the causal -inf added.
  Tensor q = f32({1, 1, 1, 1}, {1});
  Tensor k = f32({1, 1, 2, 1}, {4, 1});
  Tensor v = f32({1, 1, 2, 1}, {1, 1});
  auto run = [&](int64_t mode) {
    return doubles<float>(
        run_node("Attention", 23, {q, k, v},
                 {Attribute::of_float("scale", 1.0f), Attribute::of_float("softcap", 2.0f),
                  Attribute::of_int("is_causal", 1), Attribute::of_int("qk_matmul_output_mode", mode)},
                 4)[3]);
  };
  expect_near(run(0), {4, 1}, 1e-6);
  expect_near(run(1), {2 * std::tanh(2.0), 2 * std::tanh(0.5)}, 1e-6);
  std::vector<double> m2 = run(2);
  EXPECT_NEAR(m2[0], 2 * std::tanh(2.0), 1e-6);
  EXPECT_TRUE(std::isinf(m2[1]) && m2[1] < 0);
  expect_near(run(3), {1, 0}, 1e-6);
}

// --- RotaryEmbedding, SwiGLU, LinearAttention ----------------------------------------------------------

TEST(AttentionRnnSignalKernels, RotaryEmbeddingRotatesPairs) {
  // Angle 90 degrees: (x1, x2) -> (-x2, x1).
  Tensor x = f32({1, 1, 1, 2}, {1, 2});
  Tensor cos = f32({1, 1}, {0});
  Tensor sin = f32({1, 1}, {1});
  Tensor pos = i64({1, 1}, {0});
  expect_near(doubles<float>(run_op("RotaryEmbedding", 23, {x, cos, sin, pos})), {-2, 1}, 1e-6);
  Tensor bad = i64({1, 1}, {3});
  EXPECT_TRUE(contains(error_of("RotaryEmbedding", 23, {x, cos, sin, bad}), "position_ids"));
}

TEST(AttentionRnnSignalKernels, SwiGLU) {
  Tensor a = f64({2}, {0, 1});
  Tensor b = f64({2}, {3, 2});
  expect_near(doubles_f64(run_op("SwiGLU", 28, {a, b})), {0, 2 / (1 + std::exp(-1.0))}, 1e-12);
  EXPECT_TRUE(contains(error_of("SwiGLU", 28, {a, f64({1}, {1})}), "same shape"));
}

TEST(AttentionRnnSignalKernels, LinearAttentionLinearRule) {
  // One head, d_k = d_v = 1: S accumulates k v, o = scale * q S.
  Tensor q = f32({1, 2, 1}, {1, 1});
  Tensor k = f32({1, 2, 1}, {2, 3});
  Tensor v = f32({1, 2, 1}, {1, 1});
  auto outs = run_node("LinearAttention", 27, {q, k, v},
                       {Attribute::of_int("q_num_heads", 1), Attribute::of_int("kv_num_heads", 1),
                        Attribute::of_string("update_rule", "linear")},
                       2);
  expect_near(doubles<float>(outs[0]), {2, 5}, 1e-6);
  expect_near(doubles<float>(outs[1]), {5}, 1e-6);
  EXPECT_TRUE(contains(error_of("LinearAttention", 27, {q, k, v},
                                {Attribute::of_int("q_num_heads", 1), Attribute::of_int("kv_num_heads", 1),
                                 Attribute::of_string("update_rule", "gated")}),
                       "decay"));
}

// --- Resize, Upsample, GridSample, AffineGrid -----------------------------------------------------------

TEST(AttentionRnnSignalKernels, ResizeLinearUint8Rounds) {
  Tensor x = make<uint8_t>(DataType::kUint8, {1, 2}, {0, 255});
  Tensor scales = f32({2}, {1, 2});
  Tensor y = run_op("Resize", 19, {x, Tensor(), scales}, {Attribute::of_string("mode", "linear")});
  ASSERT_EQ(y.shape(), (rt::Shape{1, 4}));
  // half_pixel: sources -0.25, 0.25, 0.75, 1.25 -> 0, 63.75, 191.25, 255.
  std::vector<uint8_t> want = {0, 64, 191, 255};
  EXPECT_EQ(std::vector<uint8_t>(y.data<uint8_t>(), y.data<uint8_t>() + 4), want);
}

TEST(AttentionRnnSignalKernels, ResizeNearestInt64AndErrors) {
  Tensor x = i64({1, 2}, {7, 9});
  Tensor sizes = i64({2}, {1, 4});
  Tensor y = run_op("Resize", 13, {x, Tensor(), Tensor(), sizes});
  std::vector<int64_t> want = {7, 7, 9, 9};
  EXPECT_EQ(std::vector<int64_t>(y.data<int64_t>(), y.data<int64_t>() + 4), want);
  Tensor scales = f32({2}, {1, 2});
  EXPECT_TRUE(contains(error_of("Resize", 13, {x, Tensor(), scales, sizes}), "both"));
  EXPECT_TRUE(contains(error_of("Resize", 13, {x, Tensor(), Tensor(), i64({2}, {1, -1})}), "negative"));
  EXPECT_TRUE(contains(error_of("Resize", 13, {x, Tensor(), f32({2}, {1, 0})}), "positive"));
}

TEST(AttentionRnnSignalKernels, UpsampleNearestDouble) {
  Tensor x = f64({1, 2}, {1, 2});
  Tensor y = run_op("Upsample", 9, {x, f32({2}, {2, 1.5f})});
  ASSERT_EQ(y.shape(), (rt::Shape{2, 3}));
  expect_near(doubles_f64(y), {1, 1, 2, 1, 1, 2}, 0);
}

TEST(AttentionRnnSignalKernels, GridSampleCentreAndErrors) {
  // align_corners=1: (0, 0) is the centre of a 3x3 image.
  Tensor x = f64({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor grid = f64({1, 1, 1, 2}, {0, 0});
  expect_near(doubles_f64(run_op("GridSample", 20, {x, grid}, {Attribute::of_int("align_corners", 1)})), {4},
              1e-12);
  Tensor bad = f64({1, 1, 1, 3}, {0, 0, 0});
  EXPECT_TRUE(contains(error_of("GridSample", 20, {x, bad}), "grid"));
}

TEST(AttentionRnnSignalKernels, AffineGridIdentity) {
  Tensor theta = f32({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  Tensor g = run_op("AffineGrid", 20, {theta, i64({4}, {1, 1, 1, 2})});
  ASSERT_EQ(g.shape(), (rt::Shape{1, 1, 2, 2}));
  expect_near(doubles<float>(g), {-0.5, 0, 0.5, 0}, 1e-6);
  EXPECT_TRUE(contains(error_of("AffineGrid", 20, {theta, i64({3}, {1, 1, 1})}), "size"));
}

TEST(AttentionRnnSignalKernels, ImageDecoderPnmFormatsAndErrors) {
  std::string text = "P6\n# a comment\n2 1\n255\n";
  std::vector<uint8_t> bytes(text.begin(), text.end());
  for (uint8_t v : {10, 20, 30, 40, 50, 60}) bytes.push_back(v);
  auto decode = [&](const std::vector<uint8_t>& b, const std::string& fmt) {
    Tensor in = make<uint8_t>(DataType::kUint8, {static_cast<int64_t>(b.size())}, b);
    Tensor y = run_op("ImageDecoder", 20, {in}, {Attribute::of_string("pixel_format", fmt)});
    return std::make_pair(y.shape(), std::vector<uint8_t>(y.data<uint8_t>(), y.data<uint8_t>() + y.numel()));
  };
  auto [shape, rgb] = decode(bytes, "RGB");
  EXPECT_EQ(shape, (rt::Shape{1, 2, 3}));
  EXPECT_EQ(rgb, (std::vector<uint8_t>{10, 20, 30, 40, 50, 60}));
  EXPECT_EQ(decode(bytes, "BGR").second, (std::vector<uint8_t>{30, 20, 10, 60, 50, 40}));
  EXPECT_EQ(decode(bytes, "Grayscale").second, (std::vector<uint8_t>{18, 48}));
  std::vector<uint8_t> truncated(bytes.begin(), bytes.end() - 3);
  Tensor t = make<uint8_t>(DataType::kUint8, {static_cast<int64_t>(truncated.size())}, truncated);
  EXPECT_TRUE(contains(error_of("ImageDecoder", 20, {t}), "truncated"));
  Tensor junk = make<uint8_t>(DataType::kUint8, {4}, {1, 2, 3, 4});
  EXPECT_NE(error_of("ImageDecoder", 20, {junk}), "");
}

TEST(AttentionRnnSignalKernels, FarCoordinatesStayDefined) {
  Tensor x = f64({1, 1, 1, 3}, {1, 2, 3});
  Tensor far = f64({1, 1, 2, 2}, {1e30, 0, -1e30, 0});
  expect_near(doubles_f64(run_op("GridSample", 20, {x, far})), {0, 0}, 0);
  Tensor border = run_op("GridSample", 20, {x, far}, {Attribute::of_string("padding_mode", "border")});
  expect_near(doubles_f64(border), {3, 1}, 1e-12);
  Tensor reflected = run_op("GridSample", 20, {x, far}, {Attribute::of_string("padding_mode", "reflection")});
  for (double v : doubles_f64(reflected)) EXPECT_TRUE(v >= 1 && v <= 3);
  // A wild roi puts every sample outside: all extrapolation values.
  Tensor roi = f32({4}, {0, -1e30f, 1, 1e30f});
  Tensor y = run_op("Resize", 19, {f32({1, 3}, {1, 2, 3}), roi, Tensor(), i64({2}, {1, 2})},
                    {Attribute::of_string("coordinate_transformation_mode", "tf_crop_and_resize"),
                     Attribute::of_string("mode", "linear"), Attribute::of_float("extrapolation_value", 7)});
  expect_near(doubles<float>(y), {7, 7}, 0);
}

// --- RNN family --------------------------------------------------------------------------------------

TEST(AttentionRnnSignalKernels, RnnReluDoubleWithSequenceLens) {
  // H_t = Relu(x_t + H_{t-1}): W = R = 1, hidden 1; batch 1 stops after one step.
  Tensor x = f64({2, 2, 1}, {1, 2, 3, 4});
  Tensor w = f64({1, 1, 1}, {1});
  Tensor r = f64({1, 1, 1}, {1});
  Tensor lens = make<int32_t>(DataType::kInt32, {2}, {2, 1});
  auto outs =
      run_node("RNN", 22, {x, w, r, Tensor(), lens},
               {Attribute::of_int("hidden_size", 1), Attribute::of_strings("activations", {"Relu"})}, 2);
  expect_near(doubles_f64(outs[0]), {1, 2, 4, 0}, 1e-12);
  expect_near(doubles_f64(outs[1]), {4, 2}, 1e-12);
  Tensor bad_lens = make<int32_t>(DataType::kInt32, {2}, {3, 1});
  EXPECT_TRUE(
      contains(error_of("RNN", 22, {x, w, r, Tensor(), bad_lens}, {Attribute::of_int("hidden_size", 1)}),
               "sequence_lens"));
  EXPECT_TRUE(
      contains(error_of("RNN", 22, {x, w, r}, {Attribute::of_strings("activations", {"Bogus"})}), "Bogus"));
  EXPECT_TRUE(contains(
      error_of("RNN", 22, {x, f64({1, 2, 1}, {1, 1}), r}, {Attribute::of_int("hidden_size", 1)}), "W"));
}

TEST(AttentionRnnSignalKernels, GruAndLstmZeroWeightsGiveKnownStates) {
  // Zero weights: GRU z = r = 0.5, h~ = 0 -> H = 0.5 H_prev; LSTM i = f = o = 0.5, c~ = 0 -> C = 0.5 C_prev.
  Tensor x = f32({1, 1, 1}, {1});
  Tensor h0 = f32({1, 1, 1}, {2});
  auto gru =
      run_node("GRU", 22, {x, f32({1, 3, 1}, {0, 0, 0}), f32({1, 3, 1}, {0, 0, 0}), Tensor(), Tensor(), h0},
               {Attribute::of_int("hidden_size", 1)}, 2);
  expect_near(doubles<float>(gru[1]), {1}, 1e-6);
  std::vector<float> zeros(4, 0);
  auto lstm =
      run_node("LSTM", 22,
               {x, f32({1, 4, 1}, zeros), f32({1, 4, 1}, zeros), Tensor(), Tensor(), h0, f32({1, 1, 1}, {2})},
               {Attribute::of_int("hidden_size", 1)}, 3);
  expect_near(doubles<float>(lstm[2]), {1}, 1e-6);
  expect_near(doubles<float>(lstm[1]), {0.5 * std::tanh(1.0)}, 1e-6);
}

TEST(AttentionRnnSignalKernels, GruLinearBeforeReset) {
  // W_h = R_h = 1, Rb_h = 2, x = h0 = 1, z = r = 0.5: the reset gate scales (h R_h + Rb_h) or only h.
  Tensor x = f32({1, 1, 1}, {1});
  Tensor w = f32({1, 3, 1}, {0, 0, 1});
  Tensor r = f32({1, 3, 1}, {0, 0, 1});
  Tensor b = f32({1, 6}, {0, 0, 0, 0, 0, 2});
  Tensor h0 = f32({1, 1, 1}, {1});
  for (int64_t lbr : {0, 1}) {
    auto outs =
        run_node("GRU", 22, {x, w, r, b, Tensor(), h0},
                 {Attribute::of_int("hidden_size", 1), Attribute::of_int("linear_before_reset", lbr)}, 2);
    const double ht = std::tanh(lbr ? 2.5 : 3.5);
    expect_near(doubles<float>(outs[1]), {0.5 * ht + 0.5}, 1e-6);
  }
}

TEST(AttentionRnnSignalKernels, LstmInputForgetAndRnnClip) {
  std::vector<float> w = {2, 0, 0, 0};  // rows i, o, f, c: only the input gate sees x
  auto lstm = run_node("LSTM", 22,
                       {f32({1, 1, 1}, {1}), f32({1, 4, 1}, w), f32({1, 4, 1}, {0, 0, 0, 0}), Tensor(),
                        Tensor(), Tensor(), f32({1, 1, 1}, {2})},
                       {Attribute::of_int("hidden_size", 1), Attribute::of_int("input_forget", 1)}, 3);
  const double i = 1 / (1 + std::exp(-2.0));
  expect_near(doubles<float>(lstm[2]), {(1 - i) * 2}, 1e-6);
  Tensor y = run_node("RNN", 22, {f32({1, 1, 1}, {1}), f32({1, 1, 1}, {10}), f32({1, 1, 1}, {0})},
                      {Attribute::of_int("hidden_size", 1), Attribute::of_float("clip", 1.0f)}, 2)[1];
  expect_near(doubles<float>(y), {std::tanh(1.0)}, 1e-6);
}

TEST(AttentionRnnSignalKernels, RnnBatchFirstLayoutWithInitialState) {
  Tensor x = f64({2, 2, 1}, {1, 2, 3, 4});  // [batch, seq, input]
  Tensor one = f64({1, 1, 1}, {1});
  Tensor h0 = f64({2, 1, 1}, {5, 6});  // [batch, dirs, hidden]
  auto outs = run_node("RNN", 22, {x, one, one, Tensor(), Tensor(), h0},
                       {Attribute::of_int("hidden_size", 1), Attribute::of_int("layout", 1),
                        Attribute::of_strings("activations", {"Relu"})},
                       2);
  EXPECT_EQ(outs[0].shape(), (rt::Shape{2, 2, 1, 1}));
  expect_near(doubles_f64(outs[0]), {6, 8, 9, 13}, 1e-12);
  expect_near(doubles_f64(outs[1]), {8, 13}, 1e-12);
}

// --- Signal ------------------------------------------------------------------------------------------

TEST(AttentionRnnSignalKernels, DftPowerOfTwoMatchesDirectSum) {
  // Length 8 (radix-2 path) and 6 (direct sum) of the same ramp agree with the textbook formula.
  for (int64_t n : {8, 6}) {
    std::vector<double> sig;
    for (int64_t i = 0; i < n; ++i) sig.push_back(static_cast<double>(i * i % 5));
    Tensor x = f64({1, n, 1}, sig);
    Tensor y = run_op("DFT", 20, {x});
    ASSERT_EQ(y.shape(), (rt::Shape{1, n, 2}));
    std::vector<double> want;
    for (int64_t k = 0; k < n; ++k) {
      double re = 0, im = 0;
      for (int64_t j = 0; j < n; ++j) {
        re += sig[j] * std::cos(2 * std::numbers::pi * j * k / n);
        im -= sig[j] * std::sin(2 * std::numbers::pi * j * k / n);
      }
      want.push_back(re);
      want.push_back(im);
    }
    expect_near(doubles_f64(y), want, 1e-9);
    // And the inverse brings the signal back.
    Tensor back = run_op("DFT", 20, {y}, {Attribute::of_int("inverse", 1)});
    std::vector<double> bd = doubles_f64(back);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(bd[2 * i], sig[i], 1e-9);
      EXPECT_NEAR(bd[2 * i + 1], 0, 1e-9);
    }
  }
  Tensor x = f64({1, 4, 1}, {1, 2, 3, 4});
  EXPECT_TRUE(contains(error_of("DFT", 20, {x, Tensor(), scalar_i64(2)}), "axis"));
  EXPECT_TRUE(contains(error_of("DFT", 17, {x, scalar_i64(0)}), "dft_length"));
}

TEST(AttentionRnnSignalKernels, StftErrors) {
  Tensor sig = f32({1, 4, 1}, {1, 2, 3, 4});
  EXPECT_TRUE(contains(error_of("STFT", 17, {sig, scalar_i64(1), Tensor(), scalar_i64(8)}), "longer"));
  EXPECT_TRUE(contains(error_of("STFT", 17, {sig, scalar_i64(0), Tensor(), scalar_i64(2)}), "frame_step"));
}

TEST(AttentionRnnSignalKernels, WindowsDtypesAndErrors) {
  Tensor n = make<int32_t>(DataType::kInt32, {}, {4});
  Tensor hann = run_op("HannWindow", 17, {n}, {Attribute::of_int("output_datatype", 11)});
  EXPECT_EQ(hann.dtype(), DataType::kDouble);
  expect_near(doubles_f64(hann), {0, 0.5, 1, 0.5}, 1e-12);
  Tensor sym = run_op("HammingWindow", 17, {n},
                      {Attribute::of_int("periodic", 0), Attribute::of_int("output_datatype", 11)});
  expect_near(doubles_f64(sym),
              {25.0 / 46 - 21.0 / 46, 25.0 / 46 + 21.0 / 92, 25.0 / 46 + 21.0 / 92, 25.0 / 46 - 21.0 / 46},
              1e-12);
  Tensor neg = make<int32_t>(DataType::kInt32, {}, {-1});
  EXPECT_TRUE(contains(error_of("BlackmanWindow", 17, {neg}), "negative"));
}

TEST(AttentionRnnSignalKernels, MelWeightMatrixRejectsEdgeAboveNyquist) {
  auto i32 = [](int32_t v) { return make<int32_t>(DataType::kInt32, {}, {v}); };
  Tensor lo = f32({}, {0}), hi = f32({}, {20000});
  EXPECT_TRUE(
      contains(error_of("MelWeightMatrix", 17, {i32(4), i32(16), i32(8000), lo, hi}), "upper_edge_hertz"));
}

}  // namespace
}  // namespace tessera
