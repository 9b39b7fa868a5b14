// The ulp arithmetic of tests/accuracy/ulp.h, and Tessera's own elementwise math (own_eltwise.h) on
// every instruction set this CPU runs (the accuracy sweep measures only the one a session picks):
// within 4 ulp of a float64 oracle over the whole float line, specials right, nothing flushed.
#include "backends/cpu/own_eltwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "accuracy/ulp.h"

namespace acc = tessera::accuracy;
namespace cpu = tessera::cpu;

namespace {

TEST(Ulp, DistancesAndClasses) {
  EXPECT_EQ(acc::compare(1.0f, 1.0).ulps, 0);
  EXPECT_EQ(acc::compare(std::nextafter(1.0f, 2.0f), 1.0).ulps, 1);
  EXPECT_EQ(acc::compare(std::nextafter(1.0f, 0.0f), 1.0).ulps, 1);
  // Across zero: -denorm_min, 0, +denorm_min are consecutive.
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(acc::compare(tiny, -static_cast<double>(tiny)).ulps, 2);
  // The oracle is rounded to the type first: 1 + 2^-30 is 1 in float32.
  EXPECT_EQ(acc::compare(1.0f, 1.0 + std::ldexp(1.0, -30)).ulps, 0);
  // A subnormal expected, zero returned: flushed.
  auto flushed = acc::compare(0.0f, 6.05e-39);
  EXPECT_TRUE(flushed.flushed);
  EXPECT_EQ(flushed.expected, acc::Kind::kSubnormal);
  // NaN and infinities must match exactly; FLT_MAX is not infinity.
  EXPECT_TRUE(acc::compare(0.0f, std::nan("")).special_wrong);
  EXPECT_FALSE(acc::compare(std::numeric_limits<float>::quiet_NaN(), std::nan("")).special_wrong);
  EXPECT_TRUE(acc::compare(std::numeric_limits<float>::max(), INFINITY).special_wrong);
  EXPECT_TRUE(acc::compare(0.0f, -0.0).zero_sign_wrong);
  // float16: 1 + 2^-10 is the next value after 1.
  EXPECT_EQ(acc::compare(tessera::rt::Float16(1.0f), 1.0 + std::ldexp(1.0, -10)).ulps, 1);
  EXPECT_EQ(acc::kind_of(tessera::rt::Float16(1e-5f)), acc::Kind::kSubnormal);  // below 2^-14
  EXPECT_EQ(acc::all_values<tessera::rt::BFloat16>().size(), 65536u);
}

TEST(Ulp, SweepCoversTheLine) {
  auto v = acc::float_sweep(4, {1.0});
  bool sub = false, inf = false, nan = false, near_one = false, huge = false;
  for (float x : v) {
    sub |= x != 0 && std::fabs(x) < std::numeric_limits<float>::min();
    inf |= std::isinf(x);
    nan |= std::isnan(x);
    near_one |= x == std::nextafter(1.0f, 2.0f);
    huge |= std::fabs(x) > 1e38f && std::isfinite(x);
  }
  EXPECT_TRUE(sub && inf && nan && near_one && huge);
}

struct Fn {
  const char* name;
  cpu::EltwiseOp op;
  std::function<double(double)> f;
};

double sigmoid(double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}

TEST(OwnEltwise, EveryIsaWithinFourUlpOverTheWholeLine) {
  const double k = std::sqrt(2 / 3.14159265358979323846);
  const std::vector<Fn> fns = {
      {"Exp", {cpu::EltwiseKind::kExp}, [](double x) { return std::exp(x); }},
      {"Log", {cpu::EltwiseKind::kLog}, [](double x) { return std::log(x); }},
      {"Sigmoid", {cpu::EltwiseKind::kSigmoid}, sigmoid},
      {"Softplus",
       {cpu::EltwiseKind::kSoftplus},
       [](double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }},
      {"Tanh", {cpu::EltwiseKind::kTanh}, [](double x) { return std::tanh(x); }},
      {"Elu",
       {cpu::EltwiseKind::kElu, 0.7f},
       [](double x) { return x >= 0 ? x : double(0.7f) * std::expm1(x); }},
      {"QuickGelu",
       {cpu::EltwiseKind::kQuickGelu, 1.702f},
       [](double x) { return x * sigmoid(double(1.702f) * x); }},
      {"Gelu",
       {cpu::EltwiseKind::kGeluErf},
       [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }},
      {"Gelu tanh",
       {cpu::EltwiseKind::kGeluTanh},
       [k](double x) { return x / (1 + std::exp(-2 * k * (x + 0.044715 * x * x * x))); }},
      {"Relu", {cpu::EltwiseKind::kRelu}, [](double x) { return x < 0 ? 0.0 : x; }},
      {"HardSigmoid",
       {cpu::EltwiseKind::kHardSigmoid, 0.25f, 0.4f},
       [](double x) {
         return std::isnan(x) ? x : std::max(0.0, std::min(1.0, double(0.25f) * x + double(0.4f)));
       }},
  };
  using Run = void (*)(const cpu::EltwiseOp&, const float*, float*, int64_t);
  std::vector<std::pair<const char*, Run>> isas = {{"scalar", cpu::scalar::eltwise_run}};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    isas.push_back({"avx2", cpu::avx2::eltwise_run});
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
    isas.push_back({"avx512", cpu::avx512::eltwise_run});
  const std::vector<float> xs = acc::float_sweep(32, {0, 1, -1, -88, -5, -14});
  for (const auto& [isa, run] : isas) {
    for (const Fn& fn : fns) {
      std::vector<float> y(xs.size());
      run(fn.op, xs.data(), y.data(), static_cast<int64_t>(xs.size()));
      int64_t worst = 0;
      int bad = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        auto c = acc::compare(y[i], fn.f(xs[i]));
        worst = std::max(worst, c.ulps);
        if ((c.special_wrong || c.flushed || c.ulps > 4) && bad++ < 3)
          ADD_FAILURE() << isa << " " << fn.name << "(" << xs[i] << ") = " << y[i] << ", want "
                        << fn.f(xs[i]);
      }
      EXPECT_LE(worst, 4) << isa << " " << fn.name;
    }
  }
}

// The last partial vector goes through a padded copy: an element's result does not depend on where it
// sits, and nothing past n is written.
TEST(OwnEltwise, TailsGiveTheSameResultsAndStayInBounds) {
  std::vector<float> x(40);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -3.0f + 0.15f * static_cast<float>(i);
  std::vector<float> full(40);
  cpu::eltwise({cpu::EltwiseKind::kGeluErf}, x.data(), full.data(), 40);
  for (int64_t n : {1, 7, 16, 17, 33}) {
    std::vector<float> y(41, 123.0f);
    cpu::eltwise({cpu::EltwiseKind::kGeluErf}, x.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(y[static_cast<size_t>(i)], full[static_cast<size_t>(i)]) << n << " " << i;
    EXPECT_EQ(y[static_cast<size_t>(n)], 123.0f) << "wrote past " << n;
  }
}

}  // namespace
