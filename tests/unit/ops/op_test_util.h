// Runs one operator through the type checker, for shape-inference tests:
//
//   auto r = infer({.op = "Conv", .opset = 11,
//                   .inputs = {T(kFloat, {1, 3, 32, "w"}), T(kFloat, {8, 3, 3, 3})},
//                   .attrs = {ir::Attribute::of_ints("pads", {1, 1, 1, 1})}});
//   ASSERT_TRUE(r.ok()) << r.errors();
//   EXPECT_EQ(r.outputs[0], T(kFloat, {1, 8, 32, "w"}));
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "check/checker.h"
#include "ir/model.h"

namespace tessera::testing {

using ir::DataType::kBool;
using ir::DataType::kDouble;
using ir::DataType::kFloat;
using ir::DataType::kFloat16;
using ir::DataType::kInt32;
using ir::DataType::kInt64;
using ir::DataType::kString;
using ir::DataType::kUint8;

struct OpCase {
  std::string op;
  std::string domain;  // "" = ai.onnx
  int opset = 21;      // version imported for `domain` (ai.onnx is always imported too)
  // Input types; nullopt leaves the input unconnected-but-omitted (""), a Type with kind kNone makes
  // an input of unknown type.
  std::vector<std::optional<ir::Type>> inputs;
  std::vector<ir::Attribute> attrs;
  std::map<size_t, ir::Tensor> constants;  // inputs given as initializers (their type comes from the tensor)
  size_t num_outputs = 1;
};

struct OpResult {
  std::vector<ir::Type> outputs;  // kind kNone where nothing was inferred
  check::Diagnostics diags;
  bool ok() const { return !diags.has_errors(); }
  std::string errors() const;  // every diagnostic, one a line
};

OpResult infer(const OpCase& c);

// Tensor type with a shape from numbers and symbol names: T(kFloat, {1, "batch", 3}).
ir::Type T(ir::DataType elem, std::vector<std::variant<int64_t, std::string>> dims);
// Tensor type of unknown rank.
ir::Type T(ir::DataType elem);
// 1-D int64 constant tensor, e.g. a Reshape target or Slice starts.
ir::Tensor ints_tensor(std::vector<int64_t> values);
ir::Tensor float_tensor(std::vector<int64_t> dims, std::vector<float> values);

}  // namespace tessera::testing
