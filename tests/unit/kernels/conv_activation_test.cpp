// FusedConv's activation on the fast convolutions keeps the standalone ops' special values (issue 12):
// a NaN reaching Relu, Clip or HardSigmoid stays NaN on every path (oneDNN's post-ops made it a
// number), Sigmoid's subnormal results are not flushed, and the decision to fuse oneDNN's post-op
// rests on FiniteSums, which must refuse every input that could make a sum NaN.
#include "backends/cpu/conv_activation.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/depthwise_conv.h"
#include "backends/cpu/dnnl_conv_util.h"
#include "backends/cpu/pointwise_conv.h"
#include "ir/builder.h"
#include "runtime/session.h"
#include "runtime/thread_pool.h"

namespace cpu = tessera::cpu;
namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// A 3x3 FusedConv (or BlockedConv over a blocked input) with `activation`, on x whose first pixel is
// `special`, run by the fast and the reference kernels.
struct ConvRun {
  std::vector<float> fast, ref;
  std::string kernel;
};

ConvRun run_conv(const std::string& activation, std::vector<float> params, float special, bool blocked) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.microsoft", 1}, {"com.tessera", 1}};
  ir::GraphBuilder b(m.graph);
  const int64_t c = 16, h = 6, w = 6;
  rt::Shape xs = blocked ? rt::Shape{1, 1, h, w, 16} : rt::Shape{1, c, h, w};
  ir::Shape dims;
  for (int64_t d : xs) dims.push_back(ir::Dim::of(d));
  auto x = b.input("x", ir::Type::tensor(DataType::kFloat, dims));
  auto wt = b.random_normal("w", {c, c, 3, 3}, 0.3f);
  std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", activation),
                                      ir::Attribute::of_ints("pads", {1, 1, 1, 1})};
  if (!params.empty()) attrs.push_back(ir::Attribute::of_floats("activation_params", params));
  if (blocked) attrs.push_back(ir::Attribute::of_int("block", 16));
  const char* op = blocked ? "BlockedConv" : "FusedConv";
  const char* domain = blocked ? "com.tessera" : "com.microsoft";
  b.output(b.nodes(op, {x, wt}, attrs, "conv", 1, domain)[0], ir::Type::tensor(DataType::kFloat));
  rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, xs);
  for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::sin(0.7f * static_cast<float>(i)) * 3.f;
  xv.data<float>()[0] = special;
  rt::SessionOptions opts{.optimization = rt::OptLevel::kNone, .threads = 2, .profile = true};
  rt::Session fast(m, opts);
  opts.reference_kernels = true;
  rt::Session ref(m, opts);
  auto got = fast.run({{"x", rt::Value(xv)}})[0].tensor();
  auto want = ref.run({{"x", rt::Value(xv)}})[0].tensor();
  ConvRun r;
  r.fast.assign(got.data<float>(), got.data<float>() + got.numel());
  r.ref.assign(want.data<float>(), want.data<float>() + want.numel());
  r.kernel = fast.last_stats().events.at(0).kernel;
  return r;
}

void expect_same_specials(const ConvRun& r, const std::string& what) {
  ASSERT_EQ(r.fast.size(), r.ref.size());
  for (size_t i = 0; i < r.fast.size(); ++i) {
    ASSERT_EQ(std::isnan(r.fast[i]), std::isnan(r.ref[i])) << what << " at " << i << ": " << r.fast[i];
    if (std::isnan(r.ref[i])) continue;
    if (std::isinf(r.ref[i])) {
      EXPECT_EQ(r.fast[i], r.ref[i]) << what << " at " << i;
    } else {
      EXPECT_NEAR(r.fast[i], r.ref[i], 1e-4f * (1 + std::fabs(r.ref[i]))) << what << " at " << i;
    }
  }
  EXPECT_EQ(r.kernel, "dnnl") << what;
}

}  // namespace

TEST(ConvActivation, NaNStaysNaNThroughEveryFusedActivation) {
  const std::vector<std::pair<std::string, std::vector<float>>> acts = {
      {"Relu", {}}, {"Clip", {0.f, 6.f}}, {"HardSigmoid", {0.2f, 0.5f}}, {"LeakyRelu", {0.1f}}, {"Tanh", {}}};
  for (bool blocked : {false, true})
    for (const auto& [act, params] : acts)
      for (float special : {kNaN, kInf, -kInf, 1.f}) {
        std::string what = act + (blocked ? " blocked" : " plain") + " x0=" + std::to_string(special);
        ConvRun r = run_conv(act, params, special, blocked);
        expect_same_specials(r, what);
        if (std::isnan(special)) {
          // The NaN reaches the 3x3 neighbourhood of pixel 0 in every output channel.
          int nans = 0;
          for (float v : r.fast) nans += std::isnan(v);
          EXPECT_GE(nans, 16 * 4) << what;
        }
      }
}

TEST(ConvActivation, SigmoidAfterTheConvolutionDoesNotFlush) {
  // A 1x1 convolution of weight 1: the activation sees x itself; sigmoid(-100) = 3.7e-44 is subnormal.
  for (bool blocked : {false, true}) {
    ir::Model m;
    m.ir_version = 9;
    m.opset_imports = {{"", 17}, {"com.microsoft", 1}, {"com.tessera", 1}};
    ir::GraphBuilder b(m.graph);
    rt::Shape xs = blocked ? rt::Shape{1, 1, 1, 4, 16} : rt::Shape{1, 1, 1, 4};
    ir::Shape dims;
    for (int64_t d : xs) dims.push_back(ir::Dim::of(d));
    auto x = b.input("x", ir::Type::tensor(DataType::kFloat, dims));
    auto w = blocked ? b.constant_floats("w", {16, 1, 1, 1}, 1.f) : b.constant_floats("w", {1, 1, 1, 1}, 1.f);
    std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", "Sigmoid")};
    if (blocked) {
      attrs.push_back(ir::Attribute::of_int("group", 16));
      attrs.push_back(ir::Attribute::of_int("block", 16));
    }
    b.output(b.nodes(blocked ? "BlockedConv" : "FusedConv", {x, w}, attrs, "conv", 1,
                     blocked ? "com.tessera" : "com.microsoft")[0],
             ir::Type::tensor(DataType::kFloat));
    rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, xs);
    const std::vector<float> values = {-100.f, -90.f, -20.f, 3.f};
    for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = values[static_cast<size_t>(i % 4)];
    rt::Session s(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .profile = true});
    auto y = s.run({{"x", rt::Value(xv)}})[0].tensor();
    EXPECT_EQ(s.last_stats().events.at(0).kernel, "dnnl");
    for (int64_t i = 0; i < y.numel(); ++i) {
      const double xd = values[static_cast<size_t>(i % 4)];
      const float want = static_cast<float>(std::exp(xd) / (1 + std::exp(xd)));
      EXPECT_GT(y.data<float>()[i], 0.f) << "flushed at x=" << xd << (blocked ? " blocked" : " plain");
      EXPECT_NEAR(y.data<float>()[i], want, 4 * std::fabs(std::nextafter(want, 2.f) - want)) << xd;
    }
  }
}

TEST(ConvActivation, FiniteSumsRefusesWhatCouldMakeANaN) {
  rt::ThreadPool pool(2);
  std::vector<float> w = {1.f, -2.f, 0.5f, 3.f, 1.f, 1.f};  // two channels, sums |w| 3.5 and 5
  cpu::FiniteSums sums(w.data(), 2, 3);
  rt::Tensor x = rt::Tensor::zeros(DataType::kFloat, {100000});
  std::fill(x.data<float>(), x.data<float>() + x.numel(), 1.f);
  // Each check remembers what it read of x: forgotten here, as a run forgets it, before x changes.
  auto check = [&](const cpu::FiniteSums& s, const rt::Tensor* z = nullptr) {
    cpu::KnownMagnitudes::instance().clear();
    return s.check(pool, x, z).has_value();
  };
  EXPECT_TRUE(check(sums));
  for (float bad : {kNaN, kInf, -kInf, FLT_MAX, -1e35f}) {
    x.data<float>()[77777] = bad;
    EXPECT_FALSE(check(sums)) << bad;
  }
  x.data<float>()[77777] = 1e30f;  // 5e30, far from overflowing
  EXPECT_TRUE(check(sums));
  EXPECT_DOUBLE_EQ(*sums.check(pool, x, nullptr), 5.0 * double{1e30f}) << "max|x| * max sum|w|";
  rt::Tensor z = rt::Tensor::zeros(DataType::kFloat, {10});
  z.data<float>()[3] = kNaN;
  EXPECT_FALSE(check(sums, &z));
  w[4] = kInf;
  EXPECT_FALSE(check(cpu::FiniteSums(w.data(), 2, 3)));
}

TEST(ConvActivation, OwnKernelsClipKeepsNaN) {
  if (!cpu::pointwise_supported()) GTEST_SKIP() << "no AVX-512 on this CPU";
  rt::ThreadPool pool(2);
  cpu::PointwiseEpilogue ep;
  ep.clip = true;
  ep.lo = 0.f;
  ep.hi = 6.f;
  // 1x1: 16 channels in and out, 3 pixels; pixel 1's channel 0 is NaN.
  std::vector<float> w(16 * 16, 0.25f), x(3 * 16, -1.f), y(3 * 16, 0.f);
  x[16] = kNaN;
  cpu::PointwiseWeights pw = cpu::pack_pointwise(w.data(), nullptr, 16, 16);
  cpu::pointwise_conv(pool, x.data(), 1, 3, pw, ep, y.data());
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(y[c], 0.f);
    EXPECT_TRUE(std::isnan(y[16 + c])) << c;
    EXPECT_EQ(y[32 + c], 0.f);
  }
  // Depthwise 3x3 over a 3x3 image, no padding: one output pixel per channel; channel 5 sees a NaN.
  std::vector<float> dw(16 * 9, 1.f), dx(9 * 16, -1.f), dy(16, 0.f);
  dx[4 * 16 + 5] = kNaN;
  cpu::DepthwiseWeights packed = cpu::pack_depthwise(dw.data(), nullptr, 16, 3, 3);
  cpu::DepthwiseGeometry g{3, 3, 1, 1, 1, 1, 0, 0};
  cpu::depthwise_conv(pool, dx.data(), 1, g, packed, ep, dy.data());
  for (int c = 0; c < 16; ++c) {
    if (c == 5) {
      EXPECT_TRUE(std::isnan(dy[c]));
    } else {
      EXPECT_EQ(dy[c], 0.f) << c;
    }
  }
}

TEST(ConvActivation, ResidualNaNStaysNaN) {
  // BlockedConv + Z (a residual) + Relu: a NaN in Z reaches the output; x is finite.
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.tessera", 1}};
  ir::GraphBuilder b(m.graph);
  auto ty = ir::Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(1), ir::Dim::of(1), ir::Dim::of(4),
                                                         ir::Dim::of(4), ir::Dim::of(16)});
  auto x = b.input("x", ty);
  auto z = b.input("z", ty);
  auto w = b.random_normal("w", {16, 16, 1, 1}, 0.3f);
  b.output(b.nodes("BlockedConv", {x, w, "", z},
                   {ir::Attribute::of_string("activation", "Relu"), ir::Attribute::of_int("block", 16)},
                   "conv", 1, "com.tessera")[0],
           ir::Type::tensor(DataType::kFloat));
  rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, {1, 1, 4, 4, 16});
  rt::Tensor zv = rt::Tensor::zeros(DataType::kFloat, {1, 1, 4, 4, 16});
  for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::cos(static_cast<float>(i));
  zv.data<float>()[37] = kNaN;
  rt::Session s(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .profile = true});
  for (int run = 0; run < 2; ++run) {  // the second run meets the scans of the first
    auto y = s.run({{"x", rt::Value(xv)}, {"z", rt::Value(zv)}})[0].tensor();
    EXPECT_EQ(s.last_stats().events.at(0).kernel, "dnnl");
    for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(std::isnan(y.data<float>()[i]), i == 37) << i;
  }
}

TEST(ConvActivation, KnownMagnitudesKnowsAStorageByItsOwner) {
  auto& scanned = cpu::KnownMagnitudes::instance();
  auto bits = [&](const rt::Tensor& t) {
    return scanned.find(t).value_or(cpu::KnownMagnitudes::Known{0, false});
  };
  rt::Tensor a = rt::Tensor::zeros(DataType::kFloat, {1, 1, 2, 2, 16});
  scanned.add(a, 0x3f800000u, true);
  EXPECT_EQ(bits(a).bits, 0x3f800000u);
  EXPECT_TRUE(bits(a).exact);
  rt::Tensor view = a;  // the same storage
  EXPECT_EQ(bits(view).bits, 0x3f800000u);
  scanned.add(a, 0x40000000u, false);  // replaces what was known
  EXPECT_EQ(bits(a).bits, 0x40000000u);
  EXPECT_FALSE(bits(a).exact);
  rt::Tensor other = rt::Tensor::zeros(DataType::kFloat, {1, 1, 2, 2, 16});
  EXPECT_FALSE(scanned.find(other));
  scanned.forget(a);  // overwritten in place
  EXPECT_FALSE(scanned.find(a));
  scanned.add(a, 1, true);
  const void* at = a.raw();
  a = rt::Tensor();  // freed: a tensor allocated later at the same address is another one
  view = rt::Tensor();
  rt::Tensor again = rt::Tensor::zeros(DataType::kFloat, {1, 1, 2, 2, 16});
  if (again.raw() == at) {
    EXPECT_FALSE(scanned.find(again));
  }
}

TEST(ConvActivation, ChainOfConvolutionsKeepsNaNFromRunToRun) {
  // Two blocked Relu convolutions, the second also adding the first's input (a residual): the second
  // knows the first's output from the first's bound instead of reading it. A run with a NaN in the
  // same input tensor after a finite run must still give NaN where the reference does.
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.tessera", 1}};
  ir::GraphBuilder b(m.graph);
  auto ty = ir::Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(1), ir::Dim::of(2), ir::Dim::of(5),
                                                         ir::Dim::of(5), ir::Dim::of(16)});
  auto x = b.input("x", ty);
  auto w1 = b.random_normal("w1", {32, 32, 3, 3}, 0.1f);
  auto w2 = b.random_normal("w2", {32, 32, 1, 1}, 0.2f);
  std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", "Relu"),
                                      ir::Attribute::of_int("block", 16),
                                      ir::Attribute::of_ints("pads", {1, 1, 1, 1})};
  auto y1 = b.nodes("BlockedConv", {x, w1}, attrs, "conv1", 1, "com.tessera")[0];
  attrs.pop_back();
  b.output(b.nodes("BlockedConv", {y1, w2, "", x}, attrs, "conv2", 1, "com.tessera")[0],
           ir::Type::tensor(DataType::kFloat));
  rt::Session fast(m, {.optimization = rt::OptLevel::kNone, .threads = 2});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .reference_kernels = true});
  rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, {1, 2, 5, 5, 16});
  for (float special : {1.f, kNaN, 2.f, -kInf}) {
    for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::sin(0.3f * static_cast<float>(i));
    xv.data<float>()[77] = special;  // the same tensor, changed between runs
    auto got = fast.run({{"x", rt::Value(xv)}})[0].tensor();
    auto want = ref.run({{"x", rt::Value(xv)}})[0].tensor();
    int nans = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
      const float g = got.data<float>()[i], r = want.data<float>()[i];
      ASSERT_EQ(std::isnan(g), std::isnan(r)) << "x[77]=" << special << " at " << i;
      nans += std::isnan(r);
      if (!std::isnan(r)) {
        EXPECT_NEAR(g, r, 1e-4f * (1 + std::fabs(r)));
      }
    }
    if (std::isnan(special)) {
      EXPECT_GT(nans, 0);
    }
  }
}

namespace {

ir::Shape dims_of(std::initializer_list<int64_t> d, bool symbolic_hw = false) {
  ir::Shape s;
  size_t i = 0;
  for (int64_t v : d) {
    s.push_back(symbolic_hw && (i == 2 || i == 3) ? ir::Dim::symbol(i == 2 ? "h" : "w") : ir::Dim::of(v));
    ++i;
  }
  return s;
}

}  // namespace

// Constant weights are read for FiniteSums once, when the session is built, also where their original is
// kept (Winograd's weights, which cannot be reordered back; an input whose size is known only at run
// time). Reading 2.4 M weights at every run of ResNet-50's Winograd convolutions, one thread, made it
// 1.8x slower on 16 cores.
TEST(ConvActivation, ConstantWeightsAreReadOnceNotPerRun) {
  for (bool symbolic : {false, true}) {
    ir::Model m;
    m.ir_version = 9;
    m.opset_imports = {{"", 17}, {"com.tessera", 1}};
    ir::GraphBuilder b(m.graph);
    // 3x3 stride 1 over 16 channels with a 14x14 output: the blocked kernel asks oneDNN for Winograd.
    auto x = b.input("x", ir::Type::tensor(DataType::kFloat, dims_of({1, 1, 14, 14, 16}, symbolic)));
    auto w = b.random_normal("w", {16, 16, 3, 3}, 0.1f);
    std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", "Relu"),
                                        ir::Attribute::of_int("block", 16),
                                        ir::Attribute::of_ints("pads", {1, 1, 1, 1})};
    b.output(b.nodes("BlockedConv", {x, w}, attrs, "conv", 1, "com.tessera")[0],
             ir::Type::tensor(DataType::kFloat));
    rt::Session fast(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .profile = true});
    rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .reference_kernels = true});
    rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, {1, 1, 14, 14, 16});
    const int64_t reads = cpu::FiniteSums::weight_reads();
    for (float special : {1.f, kNaN, 2.f}) {
      for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::cos(0.37f * static_cast<float>(i));
      xv.data<float>()[101] = special;
      auto got = fast.run({{"x", rt::Value(xv)}})[0].tensor();
      auto want = ref.run({{"x", rt::Value(xv)}})[0].tensor();
      EXPECT_EQ(fast.last_stats().events.at(0).kernel, "dnnl");
      for (int64_t i = 0; i < got.numel(); ++i) {
        const float g = got.data<float>()[i], r = want.data<float>()[i];
        ASSERT_EQ(std::isnan(g), std::isnan(r)) << "x[101]=" << special << " at " << i;
        if (!std::isnan(r)) {
          EXPECT_NEAR(g, r, 1e-4f * (1 + std::fabs(r)));
        }
      }
    }
    EXPECT_EQ(cpu::FiniteSums::weight_reads(), reads)
        << (symbolic ? "input size known at run time" : "static input") << ": "
        << fast.last_stats().events.at(0).path;
  }
}

namespace {

// A chain of `n` blocked 1x1 Relu convolutions over 16 channels whose weights alternate +a and -a: over
// an input of equal channels every sum is exactly 0, while the bound each convolution hands the next
// grows by 16a.
ir::Model alternating_chain(int n, float a, bool pool_between) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.tessera", 1}};
  ir::GraphBuilder b(m.graph);
  std::string v = b.input("x", ir::Type::tensor(DataType::kFloat, dims_of({1, 1, 4, 4, 16})));
  std::vector<float> wv(16 * 16);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = i % 2 ? -a : a;
  std::string w = b.initializer(ir::make_tensor<float>("w", DataType::kFloat, {16, 16, 1, 1}, wv));
  std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", "Relu"),
                                      ir::Attribute::of_int("block", 16)};
  for (int i = 0; i < n; ++i) {
    v = b.nodes("BlockedConv", {v, w}, attrs, "conv" + std::to_string(i), 1, "com.tessera")[0];
    if (pool_between && i == 0)
      v = b.nodes("BlockedMaxPool", {v}, {ir::Attribute::of_ints("kernel_shape", {1, 1})}, "pool", 1,
                  "com.tessera")[0];
  }
  b.output(v, ir::Type::tensor(DataType::kFloat));
  return m;
}

}  // namespace

// A bound grown too large over a chain says nothing of the data: the convolution reads its input then,
// finds it small and still fuses (its output is then known again), instead of running unfused.
TEST(ConvActivation, GrownBoundIsReadAgainNotRefused) {
  // 16a = 1e6: from x's 1, the bound the 6th and last convolution meets is 1e36, past FLT_MAX / 1024.
  rt::Session s(alternating_chain(6, 62500.f, false), {.optimization = rt::OptLevel::kNone, .threads = 2});
  rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, {1, 1, 4, 4, 16});
  for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = 1.f;
  const int64_t reads = cpu::FiniteSums::data_reads();
  auto y = s.run({{"x", rt::Value(xv)}})[0].tensor();
  EXPECT_EQ(cpu::FiniteSums::data_reads() - reads, 2);  // x by conv0, conv4's output by conv5
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_EQ(y.data<float>()[i], 0.f) << i;
  // The last convolution fused (and remembered its output); unfused, it would have left it unknown.
  auto known = cpu::KnownMagnitudes::instance().find(y);
  ASSERT_TRUE(known) << "the last convolution ran unfused";
  EXPECT_LT(known->bits, 0x3f800000u);  // its bound: under 1, from the read zeros
}

// A pooling's output is bounded by what is known of its input (the next convolution need not read it),
// and a NaN before the pool still reaches the output.
TEST(ConvActivation, PoolPassesWhatIsKnownOn) {
  ir::Model m = alternating_chain(2, 0.25f, true);
  rt::Session fast(m, {.optimization = rt::OptLevel::kNone, .threads = 2});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .reference_kernels = true});
  rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, {1, 1, 4, 4, 16});
  for (float special : {0.5f, kNaN}) {
    for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = static_cast<float>(i % 16) * 0.1f;
    xv.data<float>()[33] = special;
    const int64_t reads = cpu::FiniteSums::data_reads();
    auto got = fast.run({{"x", rt::Value(xv)}})[0].tensor();
    // Finite input: x read by conv0, its output bounded, the pool's output bounded from it (conv1 reads
    // nothing), and conv1's output bounded in turn (asked before the next run, which forgets it).
    if (!std::isnan(special)) {
      EXPECT_EQ(cpu::FiniteSums::data_reads() - reads, 1);
      EXPECT_TRUE(cpu::KnownMagnitudes::instance().find(got));
    }
    auto want = ref.run({{"x", rt::Value(xv)}})[0].tensor();
    int nans = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
      const float g = got.data<float>()[i], r = want.data<float>()[i];
      ASSERT_EQ(std::isnan(g), std::isnan(r)) << "x[33]=" << special << " at " << i;
      nans += std::isnan(r);
      if (!std::isnan(r)) {
        EXPECT_NEAR(g, r, 1e-5f * (1 + std::fabs(r)));
      }
    }
    EXPECT_EQ(nans > 0, std::isnan(special));
  }
}

// With 8 threads or more, 1x1 convolutions run on Tessera's own kernel, whose clip keeps NaN and needs
// no check: it still hands the bound of its output to the next convolution, which then reads nothing.
TEST(ConvActivation, OwnPointwiseKernelPassesItsBoundOn) {
  if (!cpu::pointwise_supported()) GTEST_SKIP() << "no AVX-512 on this CPU";
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.tessera", 1}};
  ir::GraphBuilder b(m.graph);
  std::string v = b.input("x", ir::Type::tensor(DataType::kFloat, dims_of({1, 2, 6, 6, 16})));
  std::vector<ir::Attribute> relu = {ir::Attribute::of_string("activation", "Relu"),
                                     ir::Attribute::of_int("block", 16)};
  std::vector<ir::Attribute> relu_padded = relu;
  relu_padded.push_back(ir::Attribute::of_ints("pads", {1, 1, 1, 1}));
  v = b.nodes("BlockedConv", {v, b.random_normal("wa", {32, 32, 3, 3}, 0.1f)}, relu_padded, "a", 1,
              "com.tessera")[0];
  v = b.nodes("BlockedConv", {v, b.random_normal("wb", {32, 32, 1, 1}, 0.2f)}, relu, "b", 1,
              "com.tessera")[0];
  v = b.nodes("BlockedConv", {v, b.random_normal("wc", {32, 32, 3, 3}, 0.1f)}, relu_padded, "c", 1,
              "com.tessera")[0];
  b.output(v, ir::Type::tensor(DataType::kFloat));
  rt::Session fast(m, {.optimization = rt::OptLevel::kNone, .threads = 8, .profile = true});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .reference_kernels = true});
  rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, {1, 2, 6, 6, 16});
  for (float special : {0.5f, kNaN}) {
    for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::sin(0.11f * static_cast<float>(i));
    xv.data<float>()[40] = special;
    const int64_t reads = cpu::FiniteSums::data_reads();
    auto got = fast.run({{"x", rt::Value(xv)}})[0].tensor();
    EXPECT_EQ(fast.last_stats().events.at(1).path, "own pointwise");
    if (!std::isnan(special)) {
      EXPECT_EQ(cpu::FiniteSums::data_reads() - reads, 1);  // x, by a
    }
    auto want = ref.run({{"x", rt::Value(xv)}})[0].tensor();
    int nans = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
      const float g = got.data<float>()[i], r = want.data<float>()[i];
      ASSERT_EQ(std::isnan(g), std::isnan(r)) << "x[40]=" << special << " at " << i;
      nans += std::isnan(r);
      if (!std::isnan(r)) {
        EXPECT_NEAR(g, r, 1e-4f * (1 + std::fabs(r)));
      }
    }
    EXPECT_EQ(nans > 0, std::isnan(special));
  }
}

namespace {

// A ResNet bottleneck as the plain NCHW path runs it (no layout pass): FusedConv 7x7 stride 2 + Relu,
// MaxPool 3x3, then FusedConv 1x1 + Relu, FusedConv 3x3 + Relu, Conv 1x1, the residual Add and its Relu,
// and a last FusedConv + Relu reading that Relu's output.
ir::Model plain_bottleneck() {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.microsoft", 1}};
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", ir::Type::tensor(DataType::kFloat, dims_of({1, 3, 32, 32})));
  auto conv = [&](const std::string& in, const std::string& name, int64_t cin, int64_t cout, int64_t k,
                  int64_t stride, bool relu) {
    const int64_t pad = k / 2;
    std::vector<ir::Attribute> attrs = {ir::Attribute::of_ints("pads", {pad, pad, pad, pad}),
                                        ir::Attribute::of_ints("strides", {stride, stride})};
    if (relu) attrs.push_back(ir::Attribute::of_string("activation", "Relu"));
    std::vector<std::string> ins = {in, b.random_normal("w_" + name, {cout, cin, k, k}, 0.2f),
                                    b.random_normal("b_" + name, {cout}, 0.1f)};
    return relu ? b.nodes("FusedConv", ins, attrs, name, 1, "com.microsoft")[0]
                : b.nodes("Conv", ins, attrs, name)[0];
  };
  std::string stem = conv(x, "stem", 3, 16, 7, 2, true);
  std::string pool =
      b.nodes("MaxPool", {stem},
              {ir::Attribute::of_ints("kernel_shape", {3, 3}), ir::Attribute::of_ints("pads", {1, 1, 1, 1}),
               ir::Attribute::of_ints("strides", {2, 2})},
              "pool")[0];
  std::string v = conv(pool, "c1", 16, 8, 1, 1, true);
  v = conv(v, "c2", 8, 8, 3, 1, true);
  v = conv(v, "c3", 8, 16, 1, 1, false);
  v = b.nodes("Add", {v, pool}, {}, "add")[0];
  v = b.nodes("Relu", {v}, {}, "relu")[0];
  v = conv(v, "next", 16, 16, 3, 1, true);
  b.output(v, ir::Type::tensor(DataType::kFloat));
  return m;
}

}  // namespace

// The plain NCHW path reads only the model's input for the finite-sums check: each FusedConv's input is
// bounded from what made it (a convolution's sums, the pool, the residual Add of two bounded values and
// its Relu), as on the blocked path. A NaN in the input still reaches the output as NaN: the first
// convolution finds it and runs unfused, and nothing after it is bounded.
TEST(ConvActivation, PlainPathReadsOnlyTheModelInput) {
  ir::Model m = plain_bottleneck();
  rt::Session fast(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .profile = true});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .reference_kernels = true});
  rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, {1, 3, 32, 32});
  for (float special : {0.5f, kNaN, 2.f}) {
    for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::sin(0.13f * static_cast<float>(i));
    xv.data<float>()[500] = special;
    const int64_t reads = cpu::FiniteSums::data_reads();
    auto got = fast.run({{"x", rt::Value(xv)}})[0].tensor();
    const int64_t read = cpu::FiniteSums::data_reads() - reads;
    for (const auto& e : fast.last_stats().events)
      if (e.op_type == "FusedConv" || e.op_type == "Conv") {
        EXPECT_EQ(e.kernel, "dnnl") << e.node_name;
      }
    if (std::isnan(special)) {
      EXPECT_GE(read, 1);  // x, found to hold a NaN: every convolution after it reads its input
    } else {
      EXPECT_EQ(read, 1) << "x[500]=" << special;  // x, by the stem
      EXPECT_TRUE(cpu::KnownMagnitudes::instance().find(got));
    }
    auto want = ref.run({{"x", rt::Value(xv)}})[0].tensor();
    int nans = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
      const float g = got.data<float>()[i], r = want.data<float>()[i];
      ASSERT_EQ(std::isnan(g), std::isnan(r)) << "x[500]=" << special << " at " << i;
      nans += std::isnan(r);
      if (!std::isnan(r)) {
        EXPECT_NEAR(g, r, 1e-4f * (1 + std::fabs(r)));
      }
    }
    EXPECT_EQ(nans > 0, std::isnan(special));
  }
}

// Pass-through kernels bound their outputs only from what is known of their inputs: from a convolution's
// output y (known from its sums), a Relu and a max pool are known; an Add of y and an input nothing is
// known of, or a max pool whose windows can be padding alone, are not.
TEST(ConvActivation, PassThroughNeedsEveryInputKnown) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.microsoft", 1}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", ir::Type::tensor(DataType::kFloat, dims_of({1, 2, 4, 4})));
  auto u = b.input("u", ir::Type::tensor(DataType::kFloat, dims_of({1, 2, 4, 4})));
  auto y = b.nodes("FusedConv", {x, b.random_normal("w", {2, 2, 1, 1}, 0.5f)},
                   {ir::Attribute::of_string("activation", "Relu")}, "conv", 1, "com.microsoft")[0];
  auto out = [&](const std::string& v) { b.output(v, ir::Type::tensor(DataType::kFloat)); };
  out(b.nodes("Add", {y, u}, {}, "add")[0]);
  out(b.nodes("Relu", {y}, {}, "relu")[0]);
  out(b.nodes("MaxPool", {y},
              {ir::Attribute::of_ints("kernel_shape", {2, 2}), ir::Attribute::of_ints("pads", {2, 2, 2, 2})},
              "padded_pool")[0]);
  out(b.nodes("MaxPool", {y}, {ir::Attribute::of_ints("kernel_shape", {2, 2})}, "pool")[0]);
  out(b.nodes("Add", {y, y}, {}, "double")[0]);
  rt::Session s(m, {.optimization = rt::OptLevel::kNone, .threads = 2});
  rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, {1, 2, 4, 4});
  rt::Tensor uv = rt::Tensor::zeros(DataType::kFloat, {1, 2, 4, 4});
  for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = 0.25f * static_cast<float>(i % 5);
  auto outs = s.run({{"x", rt::Value(xv)}, {"u", rt::Value(uv)}});
  auto& known = cpu::KnownMagnitudes::instance();
  EXPECT_FALSE(known.find(outs[0].tensor())) << "y + u";
  EXPECT_TRUE(known.find(outs[1].tensor())) << "relu(y)";
  EXPECT_FALSE(known.find(outs[2].tensor())) << "a max pool with windows of padding alone";
  EXPECT_TRUE(known.find(outs[3].tensor())) << "max pool";
  ASSERT_TRUE(known.find(outs[4].tensor())) << "y + y";
  // Each bound holds: |y + y| <= its bound, and the bound is y's doubled (rounded up).
  const float bound = std::bit_cast<float>(known.find(outs[4].tensor())->bits);
  const float y_bound = std::bit_cast<float>(known.find(outs[1].tensor())->bits);
  EXPECT_GE(bound, 2 * y_bound * 0.999f);
  for (int64_t i = 0; i < outs[4].tensor().numel(); ++i)
    EXPECT_LE(std::fabs(outs[4].tensor().data<float>()[i]), bound);
}
// oneDNN's max pooling drops a NaN in its window (max(NaN, v) = v); the reference kernel keeps it, as
// PyTorch does. An input that may hold a NaN goes to the reference (plain and blocked); one known finite
// stays on oneDNN without being read.
TEST(ConvActivation, MaxPoolKeepsNaN) {
  for (bool blocked : {false, true}) {
    ir::Model m;
    m.ir_version = 9;
    m.opset_imports = {{"", 17}, {"com.tessera", 1}};
    ir::GraphBuilder b(m.graph);
    const rt::Shape xs = blocked ? rt::Shape{1, 1, 8, 8, 16} : rt::Shape{1, 16, 8, 8};
    ir::Shape dims;
    for (int64_t d : xs) dims.push_back(ir::Dim::of(d));
    auto x = b.input("x", ir::Type::tensor(DataType::kFloat, dims));
    std::vector<ir::Attribute> attrs = {ir::Attribute::of_ints("kernel_shape", {3, 3}),
                                        ir::Attribute::of_ints("pads", {1, 1, 1, 1}),
                                        ir::Attribute::of_ints("strides", {2, 2})};
    b.output(blocked ? b.nodes("BlockedMaxPool", {x}, attrs, "pool", 1, "com.tessera")[0]
                     : b.nodes("MaxPool", {x}, attrs, "pool")[0],
             ir::Type::tensor(DataType::kFloat));
    rt::Session fast(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .profile = true});
    rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .reference_kernels = true});
    rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, xs);
    for (float special : {kNaN, 1.f}) {
      for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::sin(0.13f * static_cast<float>(i));
      for (int i : {9, 18, 27, 100, 333}) xv.data<float>()[i] = special;
      auto got = fast.run({{"x", rt::Value(xv)}})[0].tensor();
      auto want = ref.run({{"x", rt::Value(xv)}})[0].tensor();
      const std::string what = std::string(blocked ? "blocked" : "plain") + " x=" + std::to_string(special);
      EXPECT_EQ(fast.last_stats().events.at(0).kernel, "dnnl") << what;
      int nans = 0;
      for (int64_t i = 0; i < got.numel(); ++i) {
        const float g = got.data<float>()[i], r = want.data<float>()[i];
        ASSERT_EQ(std::isnan(g), std::isnan(r)) << what << " at " << i;
        nans += std::isnan(r);
        if (!std::isnan(r)) {
          EXPECT_EQ(g, r) << what << " at " << i;
        }
      }
      EXPECT_EQ(nans > 0, std::isnan(special)) << what;
    }
  }
}

// Session build lays constant weights out from the primitive descriptor alone; the primitive (oneDNN's
// generated code, the costly part: made twice, 0.2 s more in ResNet-50's session build) is made once, by
// the first run, for plain and blocked convolutions alike, and later runs reuse it.
TEST(ConvActivation, ConvolutionPrimitivesAreCreatedOnce) {
  for (bool blocked : {false, true}) {
    ir::Model m;
    m.ir_version = 9;
    m.opset_imports = {{"", 17}, {"com.microsoft", 1}, {"com.tessera", 1}};
    ir::GraphBuilder b(m.graph);
    const rt::Shape xs = blocked ? rt::Shape{1, 1, 8, 8, 16} : rt::Shape{1, 16, 8, 8};
    ir::Shape dims;
    for (int64_t d : xs) dims.push_back(ir::Dim::of(d));
    std::string v = b.input("x", ir::Type::tensor(DataType::kFloat, dims));
    std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", "Relu"),
                                        ir::Attribute::of_ints("pads", {1, 1, 1, 1})};
    if (blocked) attrs.push_back(ir::Attribute::of_int("block", 16));
    for (int i = 0; i < 3; ++i) {
      const std::string name = "conv" + std::to_string(i);
      auto w = b.random_normal("w" + std::to_string(i), {16, 16, 3, 3}, 0.1f);
      v = blocked ? b.nodes("BlockedConv", {v, w}, attrs, name, 1, "com.tessera")[0]
                  : b.nodes("FusedConv", {v, w}, attrs, name, 1, "com.microsoft")[0];
    }
    b.output(v, ir::Type::tensor(DataType::kFloat));
    const int64_t before = cpu::conv_primitives_created();
    rt::Session s(m, {.optimization = rt::OptLevel::kNone, .threads = 2, .profile = true});
    EXPECT_EQ(cpu::conv_primitives_created() - before, 0) << (blocked ? "blocked" : "plain");
    rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, xs);
    for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::cos(0.3f * static_cast<float>(i));
    for (int run = 0; run < 3; ++run) s.run({{"x", rt::Value(xv)}});
    EXPECT_EQ(s.last_stats().events.at(0).kernel, "dnnl");
    EXPECT_EQ(cpu::conv_primitives_created() - before, 3) << (blocked ? "blocked" : "plain");
    // The weights were laid out at session build (the originals released) from those descriptors.
    EXPECT_GT(s.last_stats().prepared_weight_bytes, 0u);
  }
}

// Relu on the own kernels (8 threads and more, AVX-512) is a clip to [0, +inf]: +inf stays +inf (the
// upper bound was FLT_MAX, which made Relu(+inf) FLT_MAX), NaN stays NaN.
TEST(ConvActivation, OwnKernelsReluKeepsInfinity) {
  if (!cpu::pointwise_supported()) GTEST_SKIP() << "no AVX-512 on this CPU";
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.tessera", 1}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", ir::Type::tensor(DataType::kFloat, dims_of({1, 1, 1, 4, 16})));
  auto w = b.constant_floats("w", {16, 1, 1, 1}, 1.f);  // depthwise 1x1 of weight 1: y = relu(x)
  std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", "Relu"),
                                      ir::Attribute::of_int("group", 16), ir::Attribute::of_int("block", 16)};
  b.output(b.nodes("BlockedConv", {x, w}, attrs, "conv", 1, "com.tessera")[0],
           ir::Type::tensor(DataType::kFloat));
  rt::Session s(m, {.optimization = rt::OptLevel::kNone, .threads = 8, .profile = true});
  rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, {1, 1, 1, 4, 16});
  xv.data<float>()[0] = kInf;
  xv.data<float>()[1] = -kInf;
  xv.data<float>()[2] = kNaN;
  xv.data<float>()[3] = FLT_MAX;
  xv.data<float>()[4] = -2.f;
  auto y = s.run({{"x", rt::Value(xv)}})[0].tensor();
  EXPECT_EQ(s.last_stats().events.at(0).path, "own depthwise");
  EXPECT_EQ(y.data<float>()[0], kInf);
  EXPECT_EQ(y.data<float>()[1], 0.f);
  EXPECT_TRUE(std::isnan(y.data<float>()[2]));
  EXPECT_EQ(y.data<float>()[3], FLT_MAX);
  EXPECT_EQ(y.data<float>()[4], 0.f);
}
