// Models that make the runtime fail: each must end in a RunError that names what is wrong, never in a
// crash, a sanitizer report or an out-of-memory kill. Regression tests for what the load+run fuzzer
// (tests/fuzz/fuzz_load_run.cpp) found; scripts/sanitize.sh runs them under ASan and UBSan (ctest label
// "malformed").
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/builder.h"
#include "runtime/kernel.h"
#include "runtime/session.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::Type;

namespace {

ir::Model empty_model(int opset = 17) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", opset}};
  return m;
}

// Runs `m` (both optimisation extremes) and returns the RunError's message; "" when it ran.
std::string run_error(const ir::Model& m, std::vector<std::pair<std::string, rt::Value>> feeds = {},
                      rt::OptLevel level = rt::OptLevel::kNone) {
  try {
    rt::Session s(m, {.optimization = level, .threads = 1});
    (void)s.run(feeds);
  } catch (const rt::InternalError& e) {
    ADD_FAILURE() << "internal error: " << e.what();
    return e.what();
  } catch (const rt::RunError& e) {
    return e.what();
  }
  return "";
}

// Restores the default tensor limit after a test that lowers it.
struct TensorLimit {
  explicit TensorLimit(size_t bytes) { rt::set_max_tensor_bytes(bytes); }
  ~TensorLimit() { rt::set_max_tensor_bytes(0); }
};

}  // namespace

TEST(MalformedRun, AbsurdShapeIsRefusedBeforeAllocating) {
  // ConstantOfShape of [2^20, 2^20, 64]: 256 TiB of float, refused by name, not attempted.
  ir::Model m = empty_model();
  ir::GraphBuilder b(m.graph);
  auto shape = b.input("shape", Type::tensor(DataType::kInt64, ir::Shape{Dim::of(3)}));
  b.output(b.node("ConstantOfShape", {shape}));
  int64_t big = int64_t{1} << 20;
  auto feed = rt::Tensor::from_vector<int64_t>(DataType::kInt64, {3}, {big, big, 64});
  std::string err = run_error(m, {{"shape", feed}});
  EXPECT_NE(err.find("more than the limit"), std::string::npos) << err;
  EXPECT_NE(err.find("[1048576,1048576,64]"), std::string::npos) << err;
}

TEST(MalformedRun, TensorLimitCanBeLowered) {
  TensorLimit limit(1 << 20);
  ir::Model m = empty_model();
  ir::GraphBuilder b(m.graph);
  auto shape = b.input("shape", Type::tensor(DataType::kInt64, ir::Shape{Dim::of(1)}));
  b.output(b.node("ConstantOfShape", {shape}));
  auto small = rt::Tensor::from_vector<int64_t>(DataType::kInt64, {1}, {1000});
  EXPECT_EQ(run_error(m, {{"shape", small}}), "");
  auto large = rt::Tensor::from_vector<int64_t>(DataType::kInt64, {1}, {1 << 20});
  EXPECT_NE(run_error(m, {{"shape", large}}).find("4194304 bytes, more than the limit of 1048576"),
            std::string::npos);
}

namespace {

// Loop(M) whose body passes the condition through and emits the iteration number as a scan output.
ir::Model counting_loop() {
  ir::Model m = empty_model();
  ir::Graph body;
  {
    ir::GraphBuilder bb(body);
    auto iter = bb.input("iter", Type::tensor(DataType::kInt64, ir::Shape{}));
    auto cond = bb.input("cond", Type::tensor(DataType::kBool, ir::Shape{}));
    bb.output(bb.node("Identity", {cond}, {}, "cond_out"), Type::tensor(DataType::kBool, ir::Shape{}));
    bb.output(bb.node("Identity", {iter}, {}, "slice"), Type::tensor(DataType::kInt64, ir::Shape{}));
  }
  ir::GraphBuilder b(m.graph);
  auto trips = b.input("M", Type::tensor(DataType::kInt64, ir::Shape{}));
  auto cond = b.input("cond", Type::tensor(DataType::kBool, ir::Shape{}));
  b.output(b.node("Loop", {trips, cond}, {Attribute::of_graph("body", std::move(body))}, "loop"));
  return m;
}

std::vector<std::pair<std::string, rt::Value>> loop_feeds(int64_t trips) {
  return {{"M", rt::Tensor::scalar<int64_t>(DataType::kInt64, trips)},
          {"cond", rt::Tensor::scalar<bool>(DataType::kBool, true)}};
}

}  // namespace

TEST(MalformedRun, LoopScanOutputStopsAtTheTensorLimit) {
  // Found by fuzzing (Range expanded into a Loop, fed limit 1e30 and delta 1e-30): the trip count comes
  // from the data and the scan slices piled up without bound. Now the loop stops once the slices hold
  // more than one tensor may.
  TensorLimit limit(1 << 20);
  std::string err = run_error(counting_loop(), loop_feeds(int64_t{1} << 40));
  EXPECT_NE(err.find("scan output 0 holds"), std::string::npos) << err;
  EXPECT_NE(err.find("more than the limit of 1048576 bytes"), std::string::npos) << err;
  // Under the limit the same loop runs.
  EXPECT_EQ(run_error(counting_loop(), loop_feeds(1000)), "");
}

TEST(MalformedRun, FailedRunIsNotPlanned) {
  // Found by fuzzing: a run that failed (or was cancelled) after thousands of loop iterations still
  // computed a memory plan for them, for minutes, only to discard it.
  rt::MemoryPlanner p;
  p.begin_run(true);
  { auto t = p.allocate(DataType::kFloat, {16}); }
  p.abort_run();
  EXPECT_FALSE(p.has_plan());
  p.begin_run(true);
  { auto t = p.allocate(DataType::kFloat, {16}); }
  p.end_run();
  EXPECT_TRUE(p.has_plan());
}

namespace {

// One node `op` over a float input `x` of `x_shape` and an int64 vector input `v` with `values`.
std::string run_with_int_input(const std::string& op, const std::vector<int64_t>& x_shape,
                               const std::vector<int64_t>& values, int opset = 18) {
  ir::Model m = empty_model(opset);
  ir::GraphBuilder b(m.graph);
  ir::Shape xs;
  for (int64_t d : x_shape) xs.push_back(Dim::of(d));
  auto x = b.input("x", Type::tensor(DataType::kFloat, xs));
  auto v =
      b.input("v", Type::tensor(DataType::kInt64, ir::Shape{Dim::of(static_cast<int64_t>(values.size()))}));
  b.output(b.node(op, {x, v}));
  auto n = static_cast<int64_t>(values.size());
  return run_error(m, {{"x", rt::Tensor::zeros(DataType::kFloat, rt::Shape(x_shape))},
                       {"v", rt::Tensor::from_vector<int64_t>(DataType::kInt64, {n}, values)}});
}

}  // namespace

TEST(MalformedRun, ValueDrivenAxisLengthsAreCheckedBeforeTheIndexMaps) {
  // Found by fuzzing: Tile built its per-axis index maps (8 bytes per output position of each axis)
  // before allocating, and so before checking, the output; repeats of 2^31 asked for 32 GiB there.
  // Pad and CenterCropPad had the same order. Now the output's size is checked first, by name.
  TensorLimit limit(1 << 20);
  const int64_t big = int64_t{1} << 31;
  std::string err = run_with_int_input("Tile", {2, 3}, {1, big});
  EXPECT_NE(err.find("more than the limit"), std::string::npos) << err;
  err = run_with_int_input("Pad", {2, 3}, {0, 0, 0, big});
  EXPECT_NE(err.find("more than the limit"), std::string::npos) << err;
  err = run_with_int_input("CenterCropPad", {2, 3}, {2, big});
  EXPECT_NE(err.find("more than the limit"), std::string::npos) << err;
  // A huge axis next to an empty one makes an empty output, not a huge map.
  EXPECT_EQ(run_with_int_input("Tile", {0, 3}, {1, big}), "");
  // Pads whose sum overflows int64 are refused by name (it was signed overflow).
  err = run_with_int_input("Pad", {2, 3}, {0, 1, 0, std::numeric_limits<int64_t>::max()});
  EXPECT_NE(err.find("overflow"), std::string::npos) << err;
  // Under the limit the same kernels run.
  EXPECT_EQ(run_with_int_input("Tile", {2, 3}, {2, 2}), "");
  EXPECT_EQ(run_with_int_input("Pad", {2, 3}, {1, 1, 1, 1}), "");
  EXPECT_EQ(run_with_int_input("CenterCropPad", {2, 3}, {4, 1}), "");
}

TEST(MalformedRun, SignalScratchIsCheckedBeforeAllocating) {
  // The signal kernels compute in double: DFT held a double copy of its output and a complex line of
  // dft_length samples per thread, allocated before any size check. A huge dft_length (or window size)
  // is now refused by name instead of failing an allocation.
  TensorLimit limit(1 << 20);
  const int64_t big = int64_t{1} << 40;
  std::string err = run_with_int_input("DFT", {1, 8, 1}, {big}, 20);
  EXPECT_NE(err.find("more than the limit"), std::string::npos) << err;
  ir::Model m = empty_model(17);
  ir::GraphBuilder b(m.graph);
  auto size = b.input("size", Type::tensor(DataType::kInt64, ir::Shape{}));
  b.output(b.node("HannWindow", {size}));
  err = run_error(m, {{"size", rt::Tensor::scalar<int64_t>(DataType::kInt64, big)}});
  EXPECT_NE(err.find("more than the limit"), std::string::npos) << err;
  // Reasonable sizes run.
  EXPECT_EQ(run_with_int_input("DFT", {1, 8, 1}, {16}, 20), "");
  EXPECT_EQ(run_error(m, {{"size", rt::Tensor::scalar<int64_t>(DataType::kInt64, 64)}}), "");
}

TEST(MalformedRun, FloatsReadAsIntegersMustBeInRange) {
  // Found by fuzzing: ReduceMax read its axes through Tensor::to_int64 from a float tensor holding
  // -inf, and the float-to-int64 conversion was undefined. Now it fails naming the element.
  auto t = rt::Tensor::from_vector<float>(DataType::kFloat, {3}, {1.0f, -INFINITY, NAN});
  EXPECT_EQ(t.to_int64(0), 1);
  try {
    (void)t.to_int64(1);
    ADD_FAILURE() << "-inf became an integer";
  } catch (const rt::KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("element 1 of a float tensor is -inf"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)t.to_int64(2), rt::KernelError);
  auto big = rt::Tensor::from_vector<double>(DataType::kDouble, {1}, {1e300});
  EXPECT_THROW((void)big.to_int64(0), rt::KernelError);
}
