// Reference kernel of NonZero: the coordinates of the non-zero elements, as a [rank, count] int64
// tensor in row-major order (a scalar counts as rank 1, like numpy and ONNX Runtime). NaN is non-zero;
// a string is non-zero when it is not empty.
#include <fmt/format.h>

#include "ops/tensor/float8_kernel_util.h"
#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;
namespace ir = tessera::ir;

// Whether each element is non-zero, for every element type.
std::vector<uint8_t> non_zero_flags(const Tensor& x) {
  const int64_t n = x.numel();
  std::vector<uint8_t> nz(static_cast<size_t>(n));
  const DataType dt = x.dtype();
  if (dt == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) nz[i] = !x.data<std::string>()[i].empty();
    return nz;
  }
  if (is_packed(dt)) {
    std::vector<uint8_t> codes = unpack_codes(x);
    // float4e2m1 has a negative zero (0x8); the integers' only zero is 0.
    const uint8_t mask = dt == DataType::kFloat4E2M1 ? 0x7 : 0xFF;
    for (int64_t i = 0; i < n; ++i) nz[i] = (codes[i] & mask) != 0;
    return nz;
  }
  if (ir::dtype_is_float(dt) && ir::dtype_bits(dt) == 8) {
    const uint8_t* p = static_cast<const uint8_t*>(x.raw());
    const bool uz = dt == DataType::kFloat8E4M3FNUZ || dt == DataType::kFloat8E5M2FNUZ;
    for (int64_t i = 0; i < n; ++i) {
      if (dt == DataType::kFloat8E8M0)
        nz[i] = 1;  // no zero in e8m0
      else
        nz[i] = uz ? p[i] != 0 : (p[i] & 0x7F) != 0;
    }
    return nz;
  }
  rt::dispatch(rt::NumericBoolTypes{}, dt, "NonZero", [&]<class T>() {
    const T* p = x.data<T>();
    for (int64_t i = 0; i < n; ++i) nz[i] = static_cast<rt::compute_t<T>>(p[i]) != 0;
  });
  return nz;
}

void non_zero(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<uint8_t> nz = non_zero_flags(x);
  int64_t count = 0;
  for (uint8_t f : nz) count += f;
  Shape dims = x.rank() == 0 ? Shape{1} : x.shape();
  const int64_t rank = static_cast<int64_t>(dims.size());
  Tensor& y = ctx.output(0, DataType::kInt64, {rank, count});
  int64_t* out = y.data<int64_t>();
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  int64_t col = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (nz[i]) {
      for (int64_t d = 0; d < rank; ++d) out[d * count + col] = idx[d];
      ++col;
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_non_zero) {
  reg.add(tessera::rt::KernelDef::fn("NonZero", non_zero));
}
