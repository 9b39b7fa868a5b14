// Run-time tensors: a dtype, a shape and a reference-counted pointer to the elements.
//
// Unlike ir::Tensor (a constant of the model file), a run-time tensor is written by kernels. Its bytes
// come from whoever allocated it: the session's memory plan, the heap, or an initializer of the model
// (shared, never written: kernels treat their inputs as read-only). String tensors hold std::string
// objects; sub-byte types (int4, uint4, float4e2m1, int2, uint2) are packed, low bits first, as in ONNX.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/tensor.h"

namespace tessera::rt {

using ir::DataType;
using Shape = std::vector<int64_t>;

// kSimulated: a device whose memory is host memory kept apart (tests of placement and copies without a GPU).
enum class DeviceKind : int32_t { kCpu = 0, kCuda = 1, kSimulated = 2 };
struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;
  bool operator==(const Device&) const = default;
};

// Element count of a shape; throws KernelError on a negative dimension or int64 overflow.
int64_t shape_numel(std::span<const int64_t> shape);
// Bytes that `n` elements of `dt` take (sub-byte types rounded up); throws KernelError on overflow.
size_t dtype_bytes(DataType dt, int64_t n);
std::string shape_str(std::span<const int64_t> shape);  // "[1,3,224,224]"

// The most bytes one run-time tensor may take. Shapes come from the model and its inputs (Expand,
// ConstantOfShape, Tile, Range...), so an absurd one must be refused with an error naming the shape
// before anything is allocated, not end in an out-of-memory kill. Default: the machine's physical
// memory; `set_max_tensor_bytes(0)` restores it (the fuzzers set a small limit).
size_t max_tensor_bytes();
void set_max_tensor_bytes(size_t bytes);
// Throws KernelError when a tensor of `dtype` and `shape` taking `bytes` would exceed max_tensor_bytes().
void check_tensor_bytes(DataType dtype, std::span<const int64_t> shape, size_t bytes);
// The same check for a kernel's scratch of `shape` in `dtype` (a double copy of the signal, say), made
// before allocating it: the limit applies to what a kernel holds, not only to its outputs.
void check_scratch(DataType dtype, std::span<const int64_t> shape);

class Tensor {
 public:
  Tensor() = default;
  Tensor(DataType dtype, Shape shape, std::shared_ptr<void> data, Device device = {});

  // A fresh host tensor, zero-filled (empty strings for kString).
  static Tensor zeros(DataType dtype, Shape shape);
  // A host tensor copying `values` (whose element type must match dtype's storage).
  template <class T>
  static Tensor from_vector(DataType dtype, Shape shape, const std::vector<T>& values);
  template <class T>
  static Tensor scalar(DataType dtype, T v) {
    return from_vector<T>(dtype, {}, {v});
  }
  // Shares the constant's buffer: no copy, even for a memory-mapped initializer of several GiB.
  static Tensor from_ir(const ir::Tensor& t);
  ir::Tensor to_ir(std::string name = {}) const;

  bool defined() const { return dtype_ != DataType::kUndefined; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_[static_cast<size_t>(i < 0 ? i + rank() : i)]; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const;
  Device device() const { return device_; }

  void* raw() { return data_.get(); }
  const void* raw() const { return data_.get(); }
  template <class T>
  T* data() {
    return static_cast<T*>(data_.get());
  }
  template <class T>
  const T* data() const {
    return static_cast<const T*>(data_.get());
  }
  template <class T>
  std::span<T> span() {
    return {data<T>(), static_cast<size_t>(numel_)};
  }
  template <class T>
  std::span<const T> span() const {
    return {data<T>(), static_cast<size_t>(numel_)};
  }
  const std::shared_ptr<void>& storage() const { return data_; }

  // Same elements, another shape of equal element count (shares the storage).
  Tensor reshaped(Shape shape) const;
  // A deep copy on the host.
  Tensor clone() const;
  // Element i converted to double / int64 (any numeric or bool dtype); for attributes-as-inputs.
  double to_double(int64_t i) const;
  int64_t to_int64(int64_t i) const;
  // All elements as int64 (numeric dtypes); for shape-like inputs such as Reshape's `shape`.
  std::vector<int64_t> to_int64_vector() const;

 private:
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<void> data_;
  Device device_;
};

template <class T>
Tensor Tensor::from_vector(DataType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t = zeros(dtype, std::move(shape));
  if (static_cast<size_t>(t.numel()) != values.size() || t.nbytes() != values.size() * sizeof(T))
    throw std::invalid_argument("Tensor::from_vector: value count or element size does not match");
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace tessera::rt
