// Sizes near int64's limit, from hostile files: shape inference must answer with "unknown" or an
// error, never with undefined behaviour (the UBSan build runs these; the first was found by the fuzzer).
#include <gtest/gtest.h>

#include "check/checker.h"
#include "ir/builder.h"

namespace tessera::check {
namespace {

using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::Type;

constexpr int64_t kHuge = int64_t{1} << 57;

ir::Model one_node(const std::string& op, Type input, std::vector<Attribute> attrs,
                   std::vector<int64_t> target = {}) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports.push_back({"", 17});
  ir::GraphBuilder b(m.graph);
  std::vector<std::string> inputs{b.input("x", std::move(input))};
  if (!target.empty()) inputs.push_back(b.constant_ints("target", target));
  b.output(b.node(op, inputs, std::move(attrs), "n"));
  return m;
}

Type huge_tensor(std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return Type::tensor(DataType::kFloat, s);
}

TEST(Overflow, ReshapeOfHugeDimensions) {
  // Found by fuzzing: 144115188075855871 * 639 overflowed while cancelling factors.
  auto r = check_model(one_node("Reshape", huge_tensor({kHuge - 1, 639}), {}, {-1, 7}));
  EXPECT_LE(r.diagnostics.items.size(), 1u);
}

TEST(Overflow, ConvWithHostilePadsAndDilations) {
  auto m = one_node(
      "MaxPool", huge_tensor({1, 1, kHuge}),
      {Attribute::of_ints("kernel_shape", {INT64_MAX}), Attribute::of_ints("pads", {INT64_MAX, INT64_MAX}),
       Attribute::of_ints("dilations", {INT64_MAX}), Attribute::of_ints("strides", {1})});
  (void)check_model(m);  // any verdict; no undefined behaviour
}

TEST(Overflow, FlattenAndTileOfHugeDimensions) {
  (void)check_model(one_node("Flatten", huge_tensor({kHuge, kHuge, 3}), {Attribute::of_int("axis", 2)}));
  (void)check_model(one_node("Tile", huge_tensor({kHuge, 2}), {}, {kHuge, kHuge}));
  (void)check_model(one_node("Expand", huge_tensor({1, 1}), {}, {kHuge, kHuge}));
}

}  // namespace
}  // namespace tessera::check
