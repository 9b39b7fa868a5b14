// Shared by every CUDA test file: the fixture that loads the CUDA backend (or skips the test, saying why,
// where there is no GPU), small builders of attributes and float tensors, and the comparison within ulps.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/model.h"
#include "runtime/backend.h"
#include "runtime/backend_loader.h"
#include "runtime/half.h"
#include "runtime/tensor.h"

namespace cuda_test {

// A test that needs the CUDA backend: skipped where it cannot be loaded.
class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      backend_ = tessera::rt::load_backend("cuda");
    } catch (const tessera::rt::BackendUnavailable& e) {
      GTEST_SKIP() << e.what();
    }
  }
  std::unique_ptr<tessera::rt::Backend> backend_;
};

inline tessera::ir::Attribute ints(const char* name, std::vector<int64_t> v) {
  return tessera::ir::Attribute::of_ints(name, std::move(v));
}

// `v` as a tensor of float32, float16 or bfloat16 (rounded once), of `shape`.
inline tessera::rt::Tensor floats(tessera::ir::DataType t, tessera::rt::Shape shape,
                                  const std::vector<float>& v) {
  namespace rt = tessera::rt;
  using tessera::ir::DataType;
  rt::Tensor out = rt::Tensor::zeros(t, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DataType::kFloat) out.data<float>()[i] = v[i];
    if (t == DataType::kFloat16) out.data<rt::Float16>()[i] = rt::Float16(v[i]);
    if (t == DataType::kBFloat16) out.data<rt::BFloat16>()[i] = rt::BFloat16(v[i]);
  }
  return out;
}

// Within `ulps` units in the last place of the element type (at the reference's magnitude), or both NaN,
// or equal infinities.
inline void expect_close(const tessera::rt::Tensor& got, const tessera::rt::Tensor& want, double ulps,
                         const std::string& what) {
  using tessera::ir::DataType;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const double eps = got.dtype() == DataType::kFloat     ? 0x1p-23
                     : got.dtype() == DataType::kFloat16 ? 0x1p-10
                                                         : 0x1p-7;
  const double tiny = got.dtype() == DataType::kFloat16 ? 6e-8 : 1e-37;
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    const double g = got.to_double(i), w = want.to_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    const double tol = ulps * eps * std::max(std::fabs(w), tiny / eps) + tiny;
    if (std::fabs(g - w) <= tol) continue;
    ++bad;
    ADD_FAILURE() << what << " element " << i << ": cuda " << g << ", reference " << w;
  }
}

}  // namespace cuda_test
