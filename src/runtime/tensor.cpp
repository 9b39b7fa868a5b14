#include "runtime/tensor.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "runtime/half.h"
#include "runtime/kernel.h"
#include "util/mapped_file.h"

namespace tessera::rt {

int64_t shape_numel(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw KernelError(fmt::format("negative dimension in shape {}", shape_str(shape)));
    if (__builtin_mul_overflow(n, d, &n))
      throw KernelError(fmt::format("shape {} has more elements than int64 can count", shape_str(shape)));
  }
  return n;
}

size_t dtype_bytes(DataType dt, int64_t n) {
  if (dt == DataType::kString) return static_cast<size_t>(n) * sizeof(std::string);
  int bits = ir::dtype_bits(dt);
  int64_t total = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(bits), &total) || total > (int64_t{1} << 62))
    throw KernelError(fmt::format("{} elements of {} do not fit in memory", n, ir::dtype_name(dt)));
  return static_cast<size_t>((total + 7) / 8);
}

std::string shape_str(std::span<const int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

namespace {

size_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return size_t{1} << 40;  // unknown: 1 TiB still refuses the absurd
  return static_cast<size_t>(pages) * static_cast<size_t>(page);
}

std::atomic<size_t> g_max_tensor_bytes{0};  // 0: physical memory

}  // namespace

size_t max_tensor_bytes() {
  size_t v = g_max_tensor_bytes.load(std::memory_order_relaxed);
  if (v) return v;
  static const size_t phys = physical_memory();
  return phys;
}

void set_max_tensor_bytes(size_t bytes) {
  g_max_tensor_bytes.store(bytes, std::memory_order_relaxed);
}

void check_tensor_bytes(DataType dtype, std::span<const int64_t> shape, size_t bytes) {
  size_t limit = max_tensor_bytes();
  if (bytes > limit)
    throw KernelError(
        fmt::format("a {} tensor of shape {} needs {} bytes, more than the limit of {} bytes "
                    "for one tensor",
                    ir::dtype_name(dtype), shape_str(shape), bytes, limit));
}

void check_scratch(DataType dtype, std::span<const int64_t> shape) {
  check_tensor_bytes(dtype, shape, dtype_bytes(dtype, shape_numel(shape)));
}

namespace {

// 64-byte aligned host memory: what vector instructions and oneDNN want.
std::shared_ptr<void> host_alloc(size_t bytes) {
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return {p, [](void* q) { std::free(q); }};
}

std::shared_ptr<void> string_alloc(int64_t n) {
  auto* arr = new std::string[static_cast<size_t>(std::max<int64_t>(n, 1))];
  return {arr, [](void* q) { delete[] static_cast<std::string*>(q); }};
}

}  // namespace

Tensor::Tensor(DataType dtype, Shape shape, std::shared_ptr<void> data, Device device)
    : dtype_(dtype), shape_(std::move(shape)), data_(std::move(data)), device_(device) {
  numel_ = shape_numel(shape_);
}

Tensor Tensor::zeros(DataType dtype, Shape shape) {
  int64_t n = shape_numel(shape);
  check_tensor_bytes(dtype, shape, dtype_bytes(dtype, n));
  auto data = dtype == DataType::kString ? string_alloc(n) : host_alloc(dtype_bytes(dtype, n));
  return Tensor(dtype, std::move(shape), std::move(data));
}

size_t Tensor::nbytes() const {
  return dtype_bytes(dtype_, numel_);
}

Tensor Tensor::from_ir(const ir::Tensor& t) {
  if (t.dtype == DataType::kString) {
    Tensor r = zeros(t.dtype, t.dims);
    if (static_cast<int64_t>(t.strings.size()) != r.numel())
      throw KernelError(fmt::format("string tensor '{}' has {} strings for shape {}", t.name,
                                    t.strings.size(), shape_str(t.dims)));
    std::copy(t.strings.begin(), t.strings.end(), r.data<std::string>());
    return r;
  }
  auto bytes = t.bytes();
  int64_t n = shape_numel(t.dims);
  if (bytes.size() < dtype_bytes(t.dtype, n))
    throw KernelError(fmt::format("tensor '{}' holds {} bytes, its shape {} needs {}", t.name, bytes.size(),
                                  shape_str(t.dims), dtype_bytes(t.dtype, n)));
  if (n == 0 || !t.data) return zeros(t.dtype, t.dims);
  // Keep the ir buffer alive through the aliasing constructor; kernels never write their inputs.
  std::shared_ptr<void> alias(t.data, const_cast<std::byte*>(bytes.data()));
  // Misaligned bytes (a raw_data field inside a mapped protobuf) are copied: kernels may assume the
  // natural alignment of their element type.
  // The file's pages go back once copied (read again from the file if the source is read after all),
  // so a large model is not resident twice while the session is built.
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 16 != 0) {
    Tensor r = zeros(t.dtype, t.dims);
    std::memcpy(r.raw(), bytes.data(), r.nbytes());
    util::discard_mapped(bytes.data(), bytes.size());
    return r;
  }
  return Tensor(t.dtype, t.dims, std::move(alias));
}

ir::Tensor Tensor::to_ir(std::string name) const {
  ir::Tensor t;
  t.name = std::move(name);
  t.dtype = dtype_;
  t.dims = shape_;
  if (dtype_ == DataType::kString) {
    t.strings.assign(data<std::string>(), data<std::string>() + numel_);
    return t;
  }
  t.data = ir::make_buffer(std::span<const std::byte>(static_cast<const std::byte*>(raw()), nbytes()));
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (shape_numel(shape) != numel_)
    throw KernelError(fmt::format("cannot view {} elements as shape {}", numel_, shape_str(shape)));
  return Tensor(dtype_, std::move(shape), data_, device_);
}

Tensor Tensor::clone() const {
  Tensor r = zeros(dtype_, shape_);
  if (dtype_ == DataType::kString)
    std::copy(data<std::string>(), data<std::string>() + numel_, r.data<std::string>());
  else if (numel_ > 0)
    std::memcpy(r.raw(), raw(), nbytes());
  return r;
}

double Tensor::to_double(int64_t i) const {
  switch (dtype_) {
    case DataType::kFloat:
      return data<float>()[i];
    case DataType::kDouble:
      return data<double>()[i];
    case DataType::kFloat16:
      return static_cast<float>(data<Float16>()[i]);
    case DataType::kBFloat16:
      return static_cast<float>(data<BFloat16>()[i]);
    case DataType::kInt8:
      return data<int8_t>()[i];
    case DataType::kInt16:
      return data<int16_t>()[i];
    case DataType::kInt32:
      return data<int32_t>()[i];
    case DataType::kInt64:
      return static_cast<double>(data<int64_t>()[i]);
    case DataType::kUint8:
      return data<uint8_t>()[i];
    case DataType::kUint16:
      return data<uint16_t>()[i];
    case DataType::kUint32:
      return data<uint32_t>()[i];
    case DataType::kUint64:
      return static_cast<double>(data<uint64_t>()[i]);
    case DataType::kBool:
      return data<bool>()[i] ? 1.0 : 0.0;
    default:
      throw KernelError(fmt::format("a {} tensor has no numeric value", ir::dtype_name(dtype_)));
  }
}

int64_t Tensor::to_int64(int64_t i) const {
  switch (dtype_) {
    case DataType::kInt64:
      return data<int64_t>()[i];
    case DataType::kInt32:
      return data<int32_t>()[i];
    case DataType::kInt16:
      return data<int16_t>()[i];
    case DataType::kInt8:
      return data<int8_t>()[i];
    case DataType::kUint8:
      return data<uint8_t>()[i];
    case DataType::kUint16:
      return data<uint16_t>()[i];
    case DataType::kUint32:
      return data<uint32_t>()[i];
    case DataType::kUint64:
      return static_cast<int64_t>(data<uint64_t>()[i]);
    case DataType::kBool:
      return data<bool>()[i] ? 1 : 0;
    default: {
      // A float where an integer is wanted (axes, sizes): NaN, infinities and values past int64 have
      // no integer to truncate to (the conversion would be undefined).
      const double d = to_double(i);
      if (!(d > -9.2e18 && d < 9.2e18))
        throw KernelError(fmt::format("element {} of a {} tensor is {}, which is not an integer in range", i,
                                      ir::dtype_name(dtype_), d));
      return static_cast<int64_t>(d);
    }
  }
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[static_cast<size_t>(i)] = to_int64(i);
  return v;
}

}  // namespace tessera::rt
