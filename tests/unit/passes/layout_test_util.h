// Shared by the layout passes' tests (blocked_layout_test.cpp, nhwc_layout_test.cpp): float types, seeded
// random inputs, counting a graph's ops, and comparing a rewritten model's outputs with the plain run's
// (1e-4 relative + 1e-5 absolute: float32 sums in another order, since the passes reorder weights but
// never round them).
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ir/model.h"
#include "runtime/tensor.h"
#include "runtime/value.h"
#include "runtime/value_io.h"

namespace tessera::passes::layout_test {

inline ir::Type F(std::vector<ir::Dim> dims) {
  return ir::Type::tensor(ir::DataType::kFloat, std::move(dims));
}

// Standard normal float32 values of `dims` from `seed`.
inline rt::Value random_tensor(std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(rng);
  return rt::Tensor::from_vector<float>(ir::DataType::kFloat, dims, v);
}

// How many nodes of `g` are `op`.
inline size_t count(const ir::Graph& g, const std::string& op) {
  size_t k = 0;
  for (const auto& n : g.nodes) k += n.op_type == op;
  return k;
}

inline void expect_same(const std::vector<rt::Value>& want, const std::vector<rt::Value>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(rt::compare_values(want[i], got[i], {1e-4, 1e-5}), "") << i;
}

}  // namespace tessera::passes::layout_test
