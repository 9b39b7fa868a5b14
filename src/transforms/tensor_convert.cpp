#include "transforms/tensor_convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/half.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessera::transforms {

using ir::DataType;

void ConversionStats::merge(const ConversionStats& o) {
  elements += o.elements;
  changed += o.changed;
  clamped += o.clamped;
  underflowed += o.underflowed;
  non_finite += o.non_finite;
  max_change = std::max(max_change, o.max_change);
}

bool convertible_dtype(DataType t) {
  switch (t) {
    case DataType::kBool:
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat:
    case DataType::kDouble:
      return true;
    default:
      return false;
  }
}

namespace {

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

double read_element(DataType t, const std::byte* p) {
  switch (t) {
    case DataType::kBool:
    case DataType::kUint8:
      return static_cast<double>(load<uint8_t>(p));
    case DataType::kInt8:
      return load<int8_t>(p);
    case DataType::kUint16:
      return load<uint16_t>(p);
    case DataType::kInt16:
      return load<int16_t>(p);
    case DataType::kInt32:
      return load<int32_t>(p);
    case DataType::kInt64:
      return static_cast<double>(load<int64_t>(p));
    case DataType::kUint32:
      return load<uint32_t>(p);
    case DataType::kUint64:
      return static_cast<double>(load<uint64_t>(p));
    case DataType::kFloat16:
      return rt::half_bits_to_float(load<uint16_t>(p));
    case DataType::kBFloat16:
      return rt::bf16_bits_to_float(load<uint16_t>(p));
    case DataType::kFloat:
      return load<float>(p);
    case DataType::kDouble:
      return load<double>(p);
    default:
      return 0;
  }
}

template <class I>
I saturate(double v, ConversionStats& s) {
  if (!std::isfinite(v)) {
    ++s.non_finite;
    return 0;
  }
  double lo = static_cast<double>(std::numeric_limits<I>::lowest());
  double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (v < lo) return std::numeric_limits<I>::lowest();
  if (v >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(std::trunc(v));
}

double finite_max(DataType t) {
  switch (t) {
    case DataType::kFloat16:
      return 65504.0;
    case DataType::kBFloat16:
      return 3.3895313892515355e38;
    case DataType::kFloat:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

// Writes `v` as type `to` and returns the value stored (as a double), for the statistics.
double write_element(DataType to, double v, std::byte* p, ConversionStats& s) {
  auto store = [&](auto x) {
    std::memcpy(p, &x, sizeof(x));
    return static_cast<double>(x);
  };
  if (to == DataType::kFloat16 || to == DataType::kBFloat16 || to == DataType::kFloat) {
    double m = finite_max(to);
    if (std::isfinite(v) && std::fabs(v) > m) {
      ++s.clamped;
      v = std::copysign(m, v);
    }
  }
  switch (to) {
    case DataType::kBool:
      return store(static_cast<uint8_t>(v != 0));
    case DataType::kUint8:
      return store(saturate<uint8_t>(v, s));
    case DataType::kInt8:
      return store(saturate<int8_t>(v, s));
    case DataType::kUint16:
      return store(saturate<uint16_t>(v, s));
    case DataType::kInt16:
      return store(saturate<int16_t>(v, s));
    case DataType::kInt32:
      return store(saturate<int32_t>(v, s));
    case DataType::kInt64:
      return store(saturate<int64_t>(v, s));
    case DataType::kUint32:
      return store(saturate<uint32_t>(v, s));
    case DataType::kUint64:
      return store(saturate<uint64_t>(v, s));
    case DataType::kFloat16: {
      uint16_t h = rt::float_to_half_bits(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return rt::half_bits_to_float(h);
    }
    case DataType::kBFloat16: {
      uint16_t h = rt::float_to_bf16_bits(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return rt::bf16_bits_to_float(h);
    }
    case DataType::kFloat:
      return store(static_cast<float>(v));
    case DataType::kDouble:
      return store(v);
    default:
      return 0;
  }
}

void note(double before, double after, ConversionStats& s) {
  ++s.elements;
  if (before == after || (std::isnan(before) && std::isnan(after))) return;
  ++s.changed;
  if (before != 0 && after == 0) ++s.underflowed;
  double d = std::fabs(after - before);
  if (std::isfinite(d)) s.max_change = std::max(s.max_change, d);
}

void convert_range(DataType from, DataType to, const std::byte* src, std::byte* dst, size_t begin, size_t end,
                   ConversionStats& s) {
  size_t in = static_cast<size_t>(ir::dtype_bits(from) / 8),
         out = static_cast<size_t>(ir::dtype_bits(to) / 8);
  for (size_t i = begin; i < end; ++i) {
    double v = read_element(from, src + i * in);
    note(v, write_element(to, v, dst + i * out, s), s);
  }
}

// The hot path of float16/bfloat16 conversion of large models: float32 in, 16 bits out, no doubles.
void float_to_16(bool half, const std::byte* src, std::byte* dst, size_t begin, size_t end,
                 ConversionStats& s) {
  const float m = half ? 65504.0f : 3.38953139e38f;
  for (size_t i = begin; i < end; ++i) {
    float v = load<float>(src + i * 4);
    float c = v;
    if (std::fabs(v) > m && std::isfinite(v)) {
      ++s.clamped;
      c = std::copysign(m, v);
    }
    uint16_t h = half ? rt::float_to_half_bits(c) : rt::float_to_bf16_bits(c);
    std::memcpy(dst + i * 2, &h, 2);
    float back = half ? rt::half_bits_to_float(h) : rt::bf16_bits_to_float(h);
    ++s.elements;
    if (back == v || v != v) continue;
    ++s.changed;
    if (back == 0) ++s.underflowed;
    float d = std::fabs(back - v);
    if (d > s.max_change && std::isfinite(d)) s.max_change = d;
  }
}

#if defined(__x86_64__)
// The same with the F16C instructions, eight elements at a time (round to nearest even, as
// float_to_half_bits), for CPUs that have them: memory-bound instead of compute-bound.
__attribute__((target("avx2,f16c"))) void float_to_half_f16c(const std::byte* src, std::byte* dst,
                                                             size_t begin, size_t end, ConversionStats& s) {
  const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 maxv = _mm256_set1_ps(65504.0f);
  const __m256 inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  const __m256 zero = _mm256_setzero_ps();
  __m256 worst = zero;
  int64_t clamped = 0, changed = 0, under = 0;
  size_t i = begin;
  for (; i + 8 <= end; i += 8) {
    __m256 v = _mm256_loadu_ps(reinterpret_cast<const float*>(src) + i);
    __m256 a = _mm256_and_ps(v, absmask);
    __m256 big = _mm256_and_ps(_mm256_cmp_ps(a, maxv, _CMP_GT_OQ), _mm256_cmp_ps(a, inf, _CMP_LT_OQ));
    __m256 c = _mm256_blendv_ps(v, _mm256_or_ps(_mm256_andnot_ps(absmask, v), maxv), big);
    __m128i h = _mm256_cvtps_ph(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), h);
    __m256 back = _mm256_cvtph_ps(h);
    __m256 diff = _mm256_cmp_ps(back, v, _CMP_NEQ_OQ);  // NaN in, NaN out: not a change
    __m256 flushed =
        _mm256_and_ps(_mm256_cmp_ps(back, zero, _CMP_EQ_OQ), _mm256_cmp_ps(v, zero, _CMP_NEQ_OQ));
    clamped += __builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(big)));
    changed += __builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(diff)));
    under += __builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(flushed)));
    worst = _mm256_max_ps(worst, _mm256_and_ps(_mm256_and_ps(_mm256_sub_ps(back, v), absmask), diff));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, worst);
  s.clamped += clamped;
  s.changed += changed;
  s.underflowed += under;
  s.elements += static_cast<int64_t>(i - begin);
  for (float l : lanes) s.max_change = std::max(s.max_change, static_cast<double>(l));
  float_to_16(true, src, dst, i, end, s);
}

bool have_f16c() {
#if defined(__clang__)
  // Clang's builtin knows no "f16c"; every x86 processor with AVX2 has F16C (Haswell, Zen on).
  static const bool have = __builtin_cpu_supports("avx2");
#else
  static const bool have = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx2");
#endif
  return have;
}
#endif

void float_to_16_fast(bool half, const std::byte* src, std::byte* dst, size_t begin, size_t end,
                      ConversionStats& s) {
#if defined(__x86_64__)
  if (half && have_f16c()) return float_to_half_f16c(src, dst, begin, end, s);
#endif
  float_to_16(half, src, dst, begin, end, s);
}

// Converted bytes, allocated without the zero fill a std::string would do: every byte is written.
class ConvertedBytes : public ir::Buffer {
 public:
  explicit ConvertedBytes(size_t n) : data_(new std::byte[n]), size_(n) {}
  std::span<const std::byte> bytes() const override { return {data_.get(), size_}; }
  std::byte* data() { return data_.get(); }

 private:
  std::unique_ptr<std::byte[]> data_;
  size_t size_;
};

}  // namespace

ir::Tensor convert_tensor(const ir::Tensor& t, DataType to, ConversionStats* stats) {
  if (!convertible_dtype(t.dtype) || !convertible_dtype(to)) {
    throw std::invalid_argument(fmt::format("tensor '{}': cannot convert {} to {}", t.name,
                                            ir::dtype_name(t.dtype), ir::dtype_name(to)));
  }
  ir::Tensor out;
  out.name = t.name;
  out.dtype = to;
  out.dims = t.dims;
  out.doc_string = t.doc_string;
  out.metadata_props = t.metadata_props;
  if (t.external) out.external = ir::ExternalData{t.external->location, 0, -1, {}};
  auto n = t.numel();
  size_t count = n ? static_cast<size_t>(*n) : 0;
  std::span<const std::byte> src = t.bytes();
  size_t in_size = static_cast<size_t>(ir::dtype_bits(t.dtype) / 8);
  if (src.size() < count * in_size) {
    throw std::invalid_argument(fmt::format("tensor '{}' holds {} bytes, fewer than its shape needs ({})",
                                            t.name, src.size(), count * in_size));
  }
  auto buffer = std::make_shared<ConvertedBytes>(count * static_cast<size_t>(ir::dtype_bits(to) / 8));
  std::byte* dst = buffer->data();
  bool fast = t.dtype == DataType::kFloat && (to == DataType::kFloat16 || to == DataType::kBFloat16);
  // Large tensors are split over the hardware threads: converting a 1 GiB model is memory-bound work.
  size_t workers = count < (size_t{1} << 20) ? 1 : std::max(1u, std::thread::hardware_concurrency());
  std::vector<ConversionStats> parts(workers);
  auto work = [&](size_t w) {
    size_t begin = count * w / workers, end = count * (w + 1) / workers;
    if (fast) {
      float_to_16_fast(to == DataType::kFloat16, src.data(), dst, begin, end, parts[w]);
    } else {
      convert_range(t.dtype, to, src.data(), dst, begin, end, parts[w]);
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (auto& th : threads) th.join();
  if (stats)
    for (const auto& p : parts) stats->merge(p);
  out.data = std::move(buffer);
  return out;
}

}  // namespace tessera::transforms
