#include "transforms/tensor_convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/half.h"

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
  std::string bytes(count * static_cast<size_t>(ir::dtype_bits(to) / 8), '\0');
  auto* dst = reinterpret_cast<std::byte*>(bytes.data());
  bool fast = t.dtype == DataType::kFloat && (to == DataType::kFloat16 || to == DataType::kBFloat16);
  // Large tensors are split over the hardware threads: converting a 1 GiB model is memory-bound work.
  size_t workers = count < (size_t{1} << 20) ? 1 : std::max(1u, std::thread::hardware_concurrency());
  std::vector<ConversionStats> parts(workers);
  auto work = [&](size_t w) {
    size_t begin = count * w / workers, end = count * (w + 1) / workers;
    if (fast) {
      float_to_16(to == DataType::kFloat16, src.data(), dst, begin, end, parts[w]);
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
  out.data = ir::make_buffer(std::move(bytes));
  return out;
}

}  // namespace tessera::transforms
