// Shape-inference tests of the src/ops/nn operators: convolution, pooling, normalization, softmax,
// dropout, matrix products, Einsum and the detection ops.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "ops/registry.h"

namespace tessera::testing {
namespace {

using ir::Attribute;
using ir::DataType;

Attribute ints(const char* name, std::vector<int64_t> v) {
  return Attribute::of_ints(name, std::move(v));
}
Attribute i1(const char* name, int64_t v) {
  return Attribute::of_int(name, v);
}
Attribute str(const char* name, const char* v) {
  return Attribute::of_string(name, v);
}

// Whether any diagnostic mentions `text`.
bool mentions(const OpResult& r, const std::string& text) {
  return r.errors().find(text) != std::string::npos;
}
// Whether inference failed, for the reason `text` names.
bool fails_with(const OpResult& r, const std::string& text) {
  return !r.ok() && mentions(r, text);
}

// ---- Conv ----

TEST(ConvTest, PaddedStridedSymbolicBatch) {
  auto r = infer({.op = "Conv",
                  .opset = 11,
                  .inputs = {T(kFloat, {"N", 3, 32, 32}), T(kFloat, {8, 3, 3, 3}), T(kFloat, {8})},
                  .attrs = {ints("pads", {1, 1, 1, 1}), ints("strides", {2, 2})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"N", 8, 16, 16}));
}

TEST(ConvTest, SymbolicSpatialKeptByPointwiseConv) {
  auto r =
      infer({.op = "Conv", .opset = 22, .inputs = {T(kFloat, {1, 4, "h", "w"}), T(kFloat, {2, 4, 1, 1})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, 2, "h", "w"}));
}

TEST(ConvTest, AutoPadSameAndValidAndDilations) {
  auto same = infer({.op = "Conv",
                     .opset = 11,
                     .inputs = {T(kFloat, {1, 1, 7, 5}), T(kFloat, {1, 1, 3, 3})},
                     .attrs = {str("auto_pad", "SAME_LOWER"), ints("strides", {2, 2})}});
  ASSERT_TRUE(same.ok()) << same.errors();
  EXPECT_EQ(same.outputs[0], T(kFloat, {1, 1, 4, 3}));
  auto valid = infer({.op = "Conv",
                      .opset = 1,
                      .inputs = {T(kFloat, {1, 1, 7, 7}), T(kFloat, {1, 1, 3, 3})},
                      .attrs = {str("auto_pad", "VALID"), ints("dilations", {2, 2})}});
  ASSERT_TRUE(valid.ok()) << valid.errors();
  EXPECT_EQ(valid.outputs[0], T(kFloat, {1, 1, 3, 3}));
}

TEST(ConvTest, GroupedDepthwise) {
  auto r = infer({.op = "Conv",
                  .opset = 11,
                  .inputs = {T(kFloat, {2, 6, 10}), T(kFloat, {6, 1, 3})},
                  .attrs = {i1("group", 6)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 6, 8}));
}

TEST(ConvTest, ChannelMismatchNamesTheValues) {
  auto r = infer({.op = "Conv", .opset = 11, .inputs = {T(kFloat, {1, 4, 8, 8}), T(kFloat, {8, 3, 3, 3})}});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r, "has 3 input channels per group but X has 4 channels and group is 1"))
      << r.errors();
}

TEST(ConvTest, KernelShapeLengthMismatch) {
  auto r = infer({.op = "Conv",
                  .opset = 11,
                  .inputs = {T(kFloat, {1, 3, 8, 8}), T(kFloat)},
                  .attrs = {ints("kernel_shape", {3, 3, 3})}});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r, "kernel_shape has 3 entries but X has 2 spatial dimensions")) << r.errors();
}

TEST(ConvTest, BadBiasAndBadPads) {
  auto bias = infer({.op = "Conv",
                     .opset = 11,
                     .inputs = {T(kFloat, {1, 3, 8, 8}), T(kFloat, {8, 3, 3, 3}), T(kFloat, {4})}});
  EXPECT_TRUE(fails_with(bias, "('B') must have one value per output channel")) << bias.errors();
  auto pads = infer({.op = "Conv",
                     .opset = 11,
                     .inputs = {T(kFloat, {1, 3, 8, 8}), T(kFloat, {8, 3, 3, 3})},
                     .attrs = {ints("pads", {1, 1})}});
  EXPECT_FALSE(pads.ok());
  EXPECT_TRUE(mentions(pads, "pads has 2 entries")) << pads.errors();
}

TEST(ConvTest, UnknownWeightLeavesSpatialUnknown) {
  auto r = infer({.op = "Conv", .opset = 11, .inputs = {T(kFloat, {1, 3, 8, 8}), T(kFloat)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0],
            ir::Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(1), ir::Dim::unknown(),
                                                         ir::Dim::unknown(), ir::Dim::unknown()}));
}

TEST(ConvTest, IntegerAndQuantized) {
  auto ci = infer({.op = "ConvInteger",
                   .opset = 10,
                   .inputs = {T(kUint8, {1, 1, 3, 3}), T(kUint8, {1, 1, 2, 2})},
                   .attrs = {ints("pads", {1, 1, 1, 1})}});
  ASSERT_TRUE(ci.ok()) << ci.errors();
  EXPECT_EQ(ci.outputs[0], T(kInt32, {1, 1, 4, 4}));
  auto q = infer({.op = "QLinearConv",
                  .opset = 10,
                  .inputs = {T(kUint8, {1, 1, 7, 7}), T(kFloat, {}), T(kUint8, {}), T(kUint8, {1, 1, 1, 1}),
                             T(kFloat, {1}), T(kUint8, {1}), T(kFloat, {}), T(kUint8, {})}});
  ASSERT_TRUE(q.ok()) << q.errors();
  EXPECT_EQ(q.outputs[0], T(kUint8, {1, 1, 7, 7}));
}

// ---- ConvTranspose ----

TEST(ConvTransposeTest, StridesOutputPaddingAndGroups) {
  auto r = infer({.op = "ConvTranspose",
                  .opset = 11,
                  .inputs = {T(kFloat, {1, 4, 3, 3}), T(kFloat, {4, 2, 3, 3})},
                  .attrs = {ints("strides", {3, 2}), ints("output_padding", {1, 1}), i1("group", 2)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, 4, 10, 8}));
}

TEST(ConvTransposeTest, OutputShapeAndAutoPad) {
  auto os = infer({.op = "ConvTranspose",
                   .opset = 22,
                   .inputs = {T(kFloat, {1, 1, 3, 3}), T(kFloat, {1, 2, 3, 3})},
                   .attrs = {ints("strides", {3, 2}), ints("output_shape", {10, 8})}});
  ASSERT_TRUE(os.ok()) << os.errors();
  EXPECT_EQ(os.outputs[0], T(kFloat, {1, 2, 10, 8}));
  auto same = infer({.op = "ConvTranspose",
                     .opset = 22,
                     .inputs = {T(kFloat, {1, 1, 3, 3}), T(kFloat, {1, 2, 3, 3})},
                     .attrs = {str("auto_pad", "SAME_UPPER"), ints("strides", {2, 2})}});
  ASSERT_TRUE(same.ok()) << same.errors();
  EXPECT_EQ(same.outputs[0], T(kFloat, {1, 2, 6, 6}));
}

TEST(ConvTransposeTest, WeightMustMatchInputChannels) {
  auto r = infer(
      {.op = "ConvTranspose", .opset = 11, .inputs = {T(kFloat, {1, 3, 3, 3}), T(kFloat, {4, 2, 3, 3})}});
  EXPECT_TRUE(fails_with(r, "is for 4 input channels (its first axis) but X has 3 channels")) << r.errors();
}

// ---- DeformConv, Col2Im, CausalConvWithState ----

TEST(DeformConvTest, OutputAndOffsetCheck) {
  auto r = infer({.op = "DeformConv",
                  .opset = 19,
                  .inputs = {T(kFloat, {1, 1, 3, 3}), T(kFloat, {1, 1, 2, 2}), T(kFloat, {1, 8, 2, 2})},
                  .attrs = {ints("kernel_shape", {2, 2})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, 1, 2, 2}));
  auto bad = infer({.op = "DeformConv",
                    .opset = 22,
                    .inputs = {T(kFloat, {1, 1, 3, 3}), T(kFloat, {1, 1, 2, 2}), T(kFloat, {1, 6, 2, 2})}});
  EXPECT_TRUE(fails_with(bad, "('offset') has 6 channels; with this kernel and offset_group it needs 8"))
      << bad.errors();
}

TEST(Col2ImTest, ConstantImageAndBlock) {
  auto r = infer({.op = "Col2Im",
                  .opset = 18,
                  .inputs = {T(kFloat, {1, 5, 5})},
                  .constants = {{1, ints_tensor({5, 5})}, {2, ints_tensor({1, 5})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, 1, 5, 5}));
  auto bad = infer({.op = "Col2Im",
                    .opset = 18,
                    .inputs = {T(kFloat, {1, 5, 6})},
                    .constants = {{1, ints_tensor({5, 5})}, {2, ints_tensor({1, 5})}}});
  EXPECT_TRUE(fails_with(bad, "has 6 blocks (its last axis)")) << bad.errors();
}

TEST(CausalConvWithStateTest, StateHoldsKernelMinusOne) {
  auto r = infer({.op = "CausalConvWithState",
                  .opset = 27,
                  .inputs = {T(kFloat, {"B", 4, "L"}), T(kFloat, {4, 1, 4})},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"B", 4, "L"}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {"B", 4, 3}));
  auto bad =
      infer({.op = "CausalConvWithState",
             .opset = 27,
             .inputs = {T(kFloat, {2, 4, 8}), T(kFloat, {4, 1, 4}), std::nullopt, T(kFloat, {2, 4, 2})},
             .num_outputs = 2});
  EXPECT_TRUE(fails_with(bad, "must hold kernel size - 1 positions")) << bad.errors();
}

// ---- Pooling ----

TEST(PoolTest, MaxPoolWithIndicesAndCeil) {
  auto r = infer({.op = "MaxPool",
                  .opset = 12,
                  .inputs = {T(kFloat, {1, 1, 4, 4})},
                  .attrs = {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), i1("ceil_mode", 1)},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, 1, 2, 2}));
  EXPECT_EQ(r.outputs[1], T(kInt64, {1, 1, 2, 2}));
}

TEST(PoolTest, AveragePoolPadsAndDilations) {
  auto r =
      infer({.op = "AveragePool",
             .opset = 19,
             .inputs = {T(kFloat, {"N", 3, 32, 32})},
             .attrs = {ints("kernel_shape", {2, 2}), ints("dilations", {2, 2}), ints("pads", {1, 1, 1, 1})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"N", 3, 32, 32}));
}

TEST(PoolTest, LpPoolSameUpper) {
  auto r = infer(
      {.op = "LpPool",
       .opset = 11,
       .inputs = {T(kFloat, {1, 3, 32, 31})},
       .attrs = {ints("kernel_shape", {2, 2}), str("auto_pad", "SAME_UPPER"), ints("strides", {2, 2})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, 3, 16, 16}));
}

TEST(PoolTest, WindowLargerThanInputFails) {
  auto r = infer({.op = "MaxPool",
                  .opset = 11,
                  .inputs = {T(kFloat, {1, 1, 2, 2})},
                  .attrs = {ints("kernel_shape", {3, 3})}});
  EXPECT_TRUE(fails_with(r, "the window spans 3 along spatial axis 0")) << r.errors();
  auto rank = infer({.op = "AveragePool",
                     .opset = 11,
                     .inputs = {T(kFloat, {1, 1, 8, 8})},
                     .attrs = {ints("kernel_shape", {3})}});
  EXPECT_TRUE(fails_with(rank, "kernel_shape has 1 entries but X has 2 spatial dimensions")) << rank.errors();
}

TEST(PoolTest, MaxPoolInt8FromOpset12) {
  EXPECT_TRUE(infer({.op = "MaxPool",
                     .opset = 12,
                     .inputs = {T(DataType::kInt8, {1, 1, 4, 4})},
                     .attrs = {ints("kernel_shape", {2, 2})}})
                  .ok());
  EXPECT_FALSE(infer({.op = "MaxPool",
                      .opset = 11,
                      .inputs = {T(DataType::kInt8, {1, 1, 4, 4})},
                      .attrs = {ints("kernel_shape", {2, 2})}})
                   .ok());
}

TEST(PoolTest, GlobalPoolsKeepSpatialAxesAsOnes) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) {
    auto r = infer({.op = op, .opset = 22, .inputs = {T(kFloat, {"N", 16, "h", "w"})}});
    ASSERT_TRUE(r.ok()) << op << ": " << r.errors();
    EXPECT_EQ(r.outputs[0], T(kFloat, {"N", 16, 1, 1})) << op;
  }
}

TEST(PoolTest, MaxUnpoolComputedAndGiven) {
  auto r = infer({.op = "MaxUnpool",
                  .opset = 11,
                  .inputs = {T(kFloat, {1, 1, 2, 2}), T(kInt64, {1, 1, 2, 2})},
                  .attrs = {ints("kernel_shape", {2, 2}), ints("strides", {2, 2})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, 1, 4, 4}));
  auto given = infer({.op = "MaxUnpool",
                      .opset = 22,
                      .inputs = {T(kFloat, {1, 1, 2, 2}), T(kInt64, {1, 1, 2, 2})},
                      .attrs = {ints("kernel_shape", {2, 2}), ints("strides", {2, 2})},
                      .constants = {{2, ints_tensor({1, 1, 5, 5})}}});
  ASSERT_TRUE(given.ok()) << given.errors();
  EXPECT_EQ(given.outputs[0], T(kFloat, {1, 1, 5, 5}));
}

TEST(PoolTest, RoiPooling) {
  auto r = infer({.op = "MaxRoiPool",
                  .opset = 1,
                  .inputs = {T(kFloat, {1, 8, 20, 20}), T(kFloat, {"R", 5})},
                  .attrs = {ints("pooled_shape", {7, 7})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"R", 8, 7, 7}));
  auto a = infer({.op = "RoiAlign",
                  .opset = 16,
                  .inputs = {T(kFloat, {1, 8, 20, 20}), T(kFloat, {3, 4}), T(kInt64, {3})},
                  .attrs = {i1("output_height", 5), i1("output_width", 6)}});
  ASSERT_TRUE(a.ok()) << a.errors();
  EXPECT_EQ(a.outputs[0], T(kFloat, {3, 8, 5, 6}));
  auto bad = infer({.op = "RoiAlign",
                    .opset = 22,
                    .inputs = {T(kFloat, {1, 8, 20, 20}), T(kFloat, {3, 4}), T(kInt64, {2})}});
  EXPECT_TRUE(fails_with(bad, "must have one entry per region")) << bad.errors();
}

// ---- Normalization ----

TEST(NormTest, BatchNormTrainingOutputs) {
  auto r = infer(
      {.op = "BatchNormalization",
       .opset = 15,
       .inputs = {T(kFloat, {"N", 3, 4, 5}), T(kFloat, {3}), T(kFloat, {3}), T(kFloat, {3}), T(kFloat, {3})},
       .attrs = {i1("training_mode", 1)},
       .num_outputs = 3});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"N", 3, 4, 5}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {3}));
  EXPECT_EQ(r.outputs[2], T(kFloat, {3}));
}

TEST(NormTest, BatchNormParameterSizeMismatch) {
  auto r = infer(
      {.op = "BatchNormalization",
       .opset = 9,
       .inputs = {T(kFloat, {1, 3, 4}), T(kFloat, {3}), T(kFloat, {4}), T(kFloat, {3}), T(kFloat, {3})}});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r, "('B') has 4 values but X's channel count is 3")) << r.errors();
}

TEST(NormTest, LayerNormStatistics) {
  auto r = infer({.op = "LayerNormalization",
                  .opset = 17,
                  .inputs = {T(kFloat16, {"B", "S", 64}), T(kFloat16, {64}), T(kFloat16, {64})},
                  .num_outputs = 3});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat16, {"B", "S", 64}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {"B", "S", 1}));
  EXPECT_EQ(r.outputs[2], T(kFloat, {"B", "S", 1}));
  auto bad = infer({.op = "LayerNormalization", .opset = 17, .inputs = {T(kFloat, {2, 8}), T(kFloat, {4})}});
  EXPECT_TRUE(fails_with(bad, "does not broadcast to X's normalized axes")) << bad.errors();
  auto axis = infer({.op = "LayerNormalization",
                     .opset = 17,
                     .inputs = {T(kFloat, {2, 8}), T(kFloat, {8})},
                     .attrs = {i1("axis", 2)}});
  EXPECT_TRUE(fails_with(axis, "attribute 'axis' is 2")) << axis.errors();
}

TEST(NormTest, RmsAndGroupAndInstance) {
  auto rms = infer({.op = "RMSNormalization",
                    .opset = 23,
                    .inputs = {T(kFloat, {2, 3, 5}), T(kFloat, {3, 5})},
                    .attrs = {i1("axis", 1)}});
  ASSERT_TRUE(rms.ok()) << rms.errors();
  EXPECT_EQ(rms.outputs[0], T(kFloat, {2, 3, 5}));
  auto g21 = infer({.op = "GroupNormalization",
                    .opset = 21,
                    .inputs = {T(kFloat, {3, 4, 2, 2}), T(kFloat, {4}), T(kFloat, {4})},
                    .attrs = {i1("num_groups", 2)}});
  ASSERT_TRUE(g21.ok()) << g21.errors();
  EXPECT_EQ(g21.outputs[0], T(kFloat, {3, 4, 2, 2}));
  // Opset 18 took one scale per group.
  auto g18 = infer({.op = "GroupNormalization",
                    .opset = 18,
                    .inputs = {T(kFloat, {3, 4, 2, 2}), T(kFloat, {4}), T(kFloat, {4})},
                    .attrs = {i1("num_groups", 2)}});
  EXPECT_TRUE(fails_with(g18, "('scale') has 4 values but num_groups is 2")) << g18.errors();
  auto groups = infer({.op = "GroupNormalization",
                       .opset = 21,
                       .inputs = {T(kFloat, {3, 4, 2, 2}), T(kFloat, {4}), T(kFloat, {4})},
                       .attrs = {i1("num_groups", 3)}});
  EXPECT_TRUE(fails_with(groups, "X has 4 channels, which num_groups 3 does not divide")) << groups.errors();
  auto inst = infer({.op = "InstanceNormalization",
                     .opset = 6,
                     .inputs = {T(kFloat, {2, 3, "h"}), T(kFloat, {3}), T(kFloat, {2})}});
  EXPECT_TRUE(fails_with(inst, "('B') has 2 values")) << inst.errors();
}

TEST(NormTest, ShapePreservingNorms) {
  for (const char* op : {"LpNormalization", "MeanVarianceNormalization"}) {
    auto r = infer({.op = op, .opset = 13, .inputs = {T(kFloat, {"N", 3, 8, 8})}});
    ASSERT_TRUE(r.ok()) << op << ": " << r.errors();
    EXPECT_EQ(r.outputs[0], T(kFloat, {"N", 3, 8, 8}));
  }
  auto lrn = infer({.op = "LRN", .opset = 13, .inputs = {T(kFloat, {1, 5, 4, 4})}, .attrs = {i1("size", 3)}});
  ASSERT_TRUE(lrn.ok()) << lrn.errors();
  EXPECT_EQ(lrn.outputs[0], T(kFloat, {1, 5, 4, 4}));
  auto p = infer({.op = "LpNormalization", .opset = 1, .inputs = {T(kFloat, {3})}, .attrs = {i1("p", 3)}});
  EXPECT_TRUE(fails_with(p, "p is 3")) << p.errors();
}

// ---- Softmax family, Dropout ----

TEST(SoftmaxTest, AxisDefaultsChangeAtOpset13) {
  const auto& reg = ops::OpRegistry::global();
  EXPECT_EQ(reg.find("", "Softmax", 12)->find_attr("axis")->default_value->i, 1);
  EXPECT_EQ(reg.find("", "Softmax", 13)->find_attr("axis")->default_value->i, -1);
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    auto r = infer({.op = op, .opset = 13, .inputs = {T(kFloat, {"B", 10})}});
    ASSERT_TRUE(r.ok()) << op << ": " << r.errors();
    EXPECT_EQ(r.outputs[0], T(kFloat, {"B", 10}));
  }
  auto bad = infer({.op = "Softmax", .opset = 13, .inputs = {T(kFloat, {2, 3})}, .attrs = {i1("axis", 2)}});
  EXPECT_TRUE(fails_with(bad, "attribute 'axis' is 2")) << bad.errors();
}

TEST(DropoutTest, MaskTypeByVersion) {
  auto r12 =
      infer({.op = "Dropout", .opset = 12, .inputs = {T(kFloat, {3, 4}), T(kFloat, {})}, .num_outputs = 2});
  ASSERT_TRUE(r12.ok()) << r12.errors();
  EXPECT_EQ(r12.outputs[1], T(kBool, {3, 4}));
  auto r7 = infer({.op = "Dropout", .opset = 7, .inputs = {T(kFloat, {3, 4})}, .num_outputs = 2});
  ASSERT_TRUE(r7.ok()) << r7.errors();
  EXPECT_EQ(r7.outputs[1], T(kFloat, {3, 4}));
  auto bad = infer({.op = "Dropout", .opset = 13, .inputs = {T(kFloat, {3, 4}), T(kFloat, {2})}});
  EXPECT_TRUE(fails_with(bad, "('ratio') must be a scalar")) << bad.errors();
}

// ---- Matrix products ----

TEST(MatMulTest, BroadcastBatchesAndVectors) {
  auto r = infer({.op = "MatMul", .opset = 13, .inputs = {T(kFloat, {"B", 1, 4, 5}), T(kFloat, {3, 5, 6})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"B", 3, 4, 6}));
  auto vec = infer({.op = "MatMul", .opset = 9, .inputs = {T(kFloat, {5}), T(kFloat, {2, 5, 6})}});
  ASSERT_TRUE(vec.ok()) << vec.errors();
  EXPECT_EQ(vec.outputs[0], T(kFloat, {2, 6}));
  auto dot = infer({.op = "MatMul", .opset = 13, .inputs = {T(kFloat, {5}), T(kFloat, {5})}});
  ASSERT_TRUE(dot.ok()) << dot.errors();
  EXPECT_EQ(dot.outputs[0], T(kFloat, {}));
}

TEST(MatMulTest, InnerDimensionMismatch) {
  auto r = infer({.op = "MatMul", .opset = 13, .inputs = {T(kFloat, {4, 5}), T(kFloat, {4, 6})}});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r, "has 5 columns")) << r.errors();
}

TEST(MatMulTest, IntegerAndQuantized) {
  auto i = infer({.op = "MatMulInteger", .opset = 10, .inputs = {T(kUint8, {4, 3}), T(kUint8, {3, 2})}});
  ASSERT_TRUE(i.ok()) << i.errors();
  EXPECT_EQ(i.outputs[0], T(kInt32, {4, 2}));
  auto q = infer({.op = "QLinearMatMul",
                  .opset = 21,
                  .inputs = {T(kUint8, {2, 4}), T(kFloat16, {}), T(kUint8, {}), T(kUint8, {4, 3}),
                             T(kFloat16, {}), T(kUint8, {}), T(kFloat16, {}), T(kUint8, {})}});
  ASSERT_TRUE(q.ok()) << q.errors();
  EXPECT_EQ(q.outputs[0], T(kUint8, {2, 3}));
}

TEST(GemmTest, TransposesAndBias) {
  auto r = infer({.op = "Gemm",
                  .opset = 13,
                  .inputs = {T(kFloat, {5, "M"}), T(kFloat, {"N", 5}), T(kFloat, {1, "N"})},
                  .attrs = {i1("transA", 1), i1("transB", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"M", "N"}));
  auto nobias = infer({.op = "Gemm", .opset = 11, .inputs = {T(kFloat, {2, 3}), T(kFloat, {3, 4})}});
  ASSERT_TRUE(nobias.ok()) << nobias.errors();
  EXPECT_EQ(nobias.outputs[0], T(kFloat, {2, 4}));
  EXPECT_FALSE(infer({.op = "Gemm", .opset = 13, .inputs = {T(kFloat, {2, 3}), T(kFloat, {4, 5})}}).ok());
  EXPECT_FALSE(
      infer({.op = "Gemm", .opset = 13, .inputs = {T(kFloat, {2, 3}), T(kFloat, {3, 4}), T(kFloat, {3})}})
          .ok());
}

TEST(EinsumTest, ExplicitImplicitAndEllipsis) {
  auto bmm = infer({.op = "Einsum",
                    .opset = 12,
                    .inputs = {T(kFloat, {5, 2, 3}), T(kFloat, {5, 3, 4})},
                    .attrs = {str("equation", "bij, bjk -> bik")}});
  ASSERT_TRUE(bmm.ok()) << bmm.errors();
  EXPECT_EQ(bmm.outputs[0], T(kFloat, {5, 2, 4}));
  auto implicit =
      infer({.op = "Einsum", .opset = 12, .inputs = {T(kFloat, {3, 4})}, .attrs = {str("equation", "ji")}});
  ASSERT_TRUE(implicit.ok()) << implicit.errors();
  EXPECT_EQ(implicit.outputs[0], T(kFloat, {4, 3}));
  auto diag = infer({.op = "Einsum",
                     .opset = 12,
                     .inputs = {T(kDouble, {"B", 5, 5})},
                     .attrs = {str("equation", "...ii ->...i")}});
  ASSERT_TRUE(diag.ok()) << diag.errors();
  EXPECT_EQ(diag.outputs[0], T(kDouble, {"B", 5}));
  auto bad = infer({.op = "Einsum",
                    .opset = 12,
                    .inputs = {T(kFloat, {2, 3}), T(kFloat, {4, 5})},
                    .attrs = {str("equation", "ij,jk->ik")}});
  EXPECT_TRUE(fails_with(bad, "subscript 'j' has different sizes")) << bad.errors();
  auto terms = infer(
      {.op = "Einsum", .opset = 12, .inputs = {T(kFloat, {2, 3})}, .attrs = {str("equation", "ij,jk")}});
  EXPECT_TRUE(fails_with(terms, "has 2 operand terms but the node has 1 inputs")) << terms.errors();
}

TEST(LinalgTest, DetAndCumulative) {
  auto det = infer({.op = "Det", .opset = 11, .inputs = {T(kFloat, {"B", 3, 3})}});
  ASSERT_TRUE(det.ok()) << det.errors();
  EXPECT_EQ(det.outputs[0], T(kFloat, {"B"}));
  EXPECT_FALSE(infer({.op = "Det", .opset = 11, .inputs = {T(kFloat, {3, 4})}}).ok());
  auto cum = infer(
      {.op = "CumProd", .opset = 26, .inputs = {T(kDouble, {2, 3})}, .constants = {{1, ints_tensor({-1})}}});
  ASSERT_TRUE(cum.ok()) << cum.errors();
  EXPECT_EQ(cum.outputs[0], T(kDouble, {2, 3}));
  auto bad = infer(
      {.op = "CumSum", .opset = 14, .inputs = {T(kDouble, {2, 3})}, .constants = {{1, ints_tensor({2})}}});
  EXPECT_TRUE(fails_with(bad, "attribute 'axis (input 1)' is 2")) << bad.errors();
}

TEST(DetectionTest, NonMaxSuppressionCountIsDynamic) {
  auto r =
      infer({.op = "NonMaxSuppression", .opset = 11, .inputs = {T(kFloat, {1, 6, 4}), T(kFloat, {1, 2, 6})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  ASSERT_TRUE(r.outputs[0].shape);
  EXPECT_EQ(r.outputs[0].elem, DataType::kInt64);
  EXPECT_EQ(r.outputs[0].shape->size(), 2u);
  EXPECT_EQ((*r.outputs[0].shape)[1], ir::Dim::of(3));
  EXPECT_FALSE(
      infer({.op = "NonMaxSuppression", .opset = 11, .inputs = {T(kFloat, {1, 6, 4}), T(kFloat, {1, 2, 5})}})
          .ok());
}

}  // namespace
}  // namespace tessera::testing
