// The attention of nn.MultiheadAttention (batch_first=False) as PyTorch's dynamo exporter writes it, shared
// by the tests of the passes that rewrite it (fuse_attention_test.cpp, token_transpose_test.cpp). On the
// sequence-first x [S, B, E]:
//   -MatMul w_in + b_in-> proj [S,B,3E] -Reshape-> [S,B,3,E] -Unsqueeze(0)-> [1,S,B,3,E]
//   -Transpose(3,1,2,0,4)-> [3,S,B,1,E] -Squeeze(3)-> [3,S,B,E] -Gather(0|1|2)-> [S,B,E]
//   -Reshape-> [S,B*H,D] -Transpose(1,0,2)-> [B*H,S,D] -Reshape-> [B,H,S,D]
// then torchlib's scaled_dot_product_attention: K -Reshape-> [B*H,S,D] -Transpose(0,2,1)-> -Reshape->
// [B,H,D,S], Q and K^T each multiplied by sqrt(1/sqrt(D)), MatMul, Softmax, MatMul with V, and the output
// -Transpose(2,0,1,3)-> [S,B,H,D] -Reshape-> [S*B,E], which it returns (the out-projection is the caller's).
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ir/builder.h"

namespace tessera::passes::dynamo_mha {

struct Dims {
  int64_t S, B, H, D;
};

// `fresh` names the constants; `w_in` [E, 3E] and `b_in` [3E] are the packed in-projection's weights.
inline std::string attention(ir::GraphBuilder& b, const std::string& x, Dims d, const std::string& w_in,
                             const std::string& b_in, const std::function<std::string()>& fresh) {
  using ir::Attribute;
  const int64_t S = d.S, B = d.B, E = d.H * d.D;
  auto ints = [&](std::vector<int64_t> v) { return b.constant_ints(fresh(), std::move(v)); };
  auto tr = [&](const std::string& v, std::vector<int64_t> perm) {
    return b.node("Transpose", {v}, {Attribute::of_ints("perm", std::move(perm))});
  };
  auto proj = b.node("Add", {b.node("MatMul", {x, w_in}), b_in});
  auto packed = b.node("Reshape", {proj, ints({S, B, 3, E})});
  packed = b.node("Unsqueeze", {packed, ints({0})});
  packed = tr(packed, {3, 1, 2, 0, 4});
  packed = b.node("Squeeze", {packed, ints({3})});
  auto head = [&](int64_t which) {
    auto idx = b.initializer(ir::make_tensor(fresh(), ir::DataType::kInt64, {}, std::vector<int64_t>{which}));
    auto sel = b.node("Gather", {packed, idx}, {Attribute::of_int("axis", 0)});
    auto t = tr(b.node("Reshape", {sel, ints({S, B * d.H, d.D})}), {1, 0, 2});
    return b.node("Reshape", {t, ints({B, d.H, S, d.D})});
  };
  auto q = head(0), k = head(1), v = head(2);
  auto kt = tr(b.node("Reshape", {k, ints({-1, S, d.D})}), {0, 2, 1});
  kt = b.node("Reshape", {kt, ints({B, d.H, d.D, S})});
  const float root = std::sqrt(1.0f / std::sqrt(static_cast<float>(d.D)));
  q = b.node("Mul", {q, b.constant_floats(fresh(), {}, root)});
  kt = b.node("Mul", {kt, b.constant_floats(fresh(), {}, root)});
  auto p = b.node("Softmax", {b.node("MatMul", {q, kt})}, {Attribute::of_int("axis", -1)});
  auto o = tr(b.node("MatMul", {p, v}), {2, 0, 1, 3});
  return b.node("Reshape", {o, ints({S * B, E})});
}

}  // namespace tessera::passes::dynamo_mha
