// Generators of the random-number reference kernels. With the `seed` attribute the stream is
// std::mt19937 seeded from it (the same values on every run of the node); without it, a fresh
// std::random_device seed per run. The values cannot match other runtimes' (or numpy's) streams.
#pragma once

#include <fmt/format.h>

#include <bit>
#include <random>

#include "ops/reduce/reduce_kernel_util.h"

namespace tessera::ops::kernels {

inline std::mt19937 random_engine(const rt::KernelInfo& info) {
  if (!info.has_attr("seed")) return std::mt19937(std::random_device{}());
  // The seed is a float attribute; its bits keep distinct seeds (0.5 and 0.25) distinct.
  const float seed = info.get_float("seed");
  return std::mt19937(std::bit_cast<uint32_t>(seed));
}

// The output element type from attribute 'dtype' (or `fallback` without it); KernelError unless it is
// one of the floating-point types the random generators produce.
inline rt::DataType random_float_dtype(const rt::KernelContext& ctx, rt::DataType fallback) {
  const auto dt =
      ctx.info().has_attr("dtype") ? static_cast<rt::DataType>(ctx.info().get_int("dtype")) : fallback;
  if (dt != rt::DataType::kFloat && dt != rt::DataType::kDouble && dt != rt::DataType::kFloat16 &&
      dt != rt::DataType::kBFloat16)
    ctx.fail(fmt::format(
        "the output type must be float, double, float16 or bfloat16, got {} (attribute 'dtype' {})",
        ir::dtype_name(dt), static_cast<int>(dt)));
  return dt;
}

// Fills a float tensor with draw() (double) rounded to its element type.
template <class Draw>
void fill_random(rt::Tensor& t, Draw&& draw) {
  rt::dispatch(rt::FloatTypes{}, t.dtype(), "random", [&]<class T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) store_d(p, i, draw());
  });
}

// RandomNormal(Like) and RandomUniform(Like) fill `t` from the node's attributes.
inline void fill_distribution(const rt::KernelContext& ctx, rt::Tensor& t, bool normal) {
  std::mt19937 gen = random_engine(ctx.info());
  if (normal) {
    const double mean = ctx.info().get_float("mean", 0.0f), scale = ctx.info().get_float("scale", 1.0f);
    if (!(scale >= 0)) ctx.fail(fmt::format("attribute 'scale' is {}; it must not be negative", scale));
    std::normal_distribution<double> dist(mean, scale);
    fill_random(t, [&] { return dist(gen); });
    return;
  }
  const double low = ctx.info().get_float("low", 0.0f), high = ctx.info().get_float("high", 1.0f);
  if (!(low <= high)) ctx.fail(fmt::format("attribute 'low' {} is above 'high' {}", low, high));
  std::uniform_real_distribution<double> dist(low, high);
  fill_random(t, [&] { return dist(gen); });
}

}  // namespace tessera::ops::kernels
