// The oneDNN convolutions reorder constant weights when the session is built and release the original
// (issue 13: a weight held once). oneDNN picks the weights' layout by the OpenMP threads of the moment,
// which at session build need not be the session's: a run with other threads (or another batch) must
// still run, from the prepared copy, and match the reference kernels. Winograd's weights cannot be
// reordered out of, so those convolutions keep their original.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ir/builder.h"
#include "runtime/session.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;

namespace {

// Conv (plain NCHW) or BlockedConv (16-blocked input) with a 3x3 filter of `channels` in and out over
// a `size` x `size` image, batch symbolic.
ir::Model conv_model(bool blocked, int64_t channels, int64_t size) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.tessera", 1}};
  ir::GraphBuilder b(m.graph);
  ir::Shape dims = {ir::Dim::symbol("n")};
  if (blocked) {
    for (int64_t d : {channels / 16, size, size, int64_t{16}}) dims.push_back(ir::Dim::of(d));
  } else {
    for (int64_t d : {channels, size, size}) dims.push_back(ir::Dim::of(d));
  }
  auto x = b.input("x", ir::Type::tensor(DataType::kFloat, dims));
  auto w = b.random_normal("w", {channels, channels, 3, 3}, 0.2f);
  std::vector<ir::Attribute> attrs = {ir::Attribute::of_ints("pads", {1, 1, 1, 1})};
  if (blocked) attrs.push_back(ir::Attribute::of_int("block", 16));
  b.output(
      b.nodes(blocked ? "BlockedConv" : "Conv", {x, w}, attrs, "conv", 1, blocked ? "com.tessera" : "")[0],
      ir::Type::tensor(DataType::kFloat));
  return m;
}

rt::Tensor input(bool blocked, int64_t n, int64_t channels, int64_t size) {
  rt::Shape s = blocked ? rt::Shape{n, channels / 16, size, size, 16} : rt::Shape{n, channels, size, size};
  rt::Tensor x = rt::Tensor::zeros(DataType::kFloat, s);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::cos(0.31f * static_cast<float>(i));
  return x;
}

// Builds the session under `build_threads` OpenMP threads (a session of that many ran just before) and
// runs it with `run_threads`, batches 1 and 2, against the reference kernels.
void check(bool blocked, int64_t channels, int64_t size, int build_threads, int run_threads,
           bool expect_released) {
  SCOPED_TRACE(::testing::Message() << (blocked ? "BlockedConv" : "Conv") << " " << channels << "ch " << size
                                    << "px, built at " << build_threads << " threads, run at "
                                    << run_threads);
  ir::Model m = conv_model(blocked, channels, size);
  rt::Session warm(m, {.optimization = rt::OptLevel::kNone, .threads = build_threads});
  warm.run({{"x", rt::Value(input(blocked, 1, channels, size))}});  // leaves OpenMP at build_threads
  rt::Session fast(m, {.optimization = rt::OptLevel::kNone, .threads = run_threads, .profile = true});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  const size_t weight_bytes = static_cast<size_t>(channels * channels * 9) * sizeof(float);
  EXPECT_EQ(fast.last_stats().released_weight_bytes, expect_released ? weight_bytes : 0u);
  for (int64_t n : {1, 2}) {
    rt::Tensor x = input(blocked, n, channels, size);
    auto got = fast.run({{"x", rt::Value(x)}})[0].tensor();
    auto want = ref.run({{"x", rt::Value(x)}})[0].tensor();
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_EQ(fast.last_stats().events.at(0).kernel, "dnnl");
    for (int64_t i = 0; i < got.numel(); ++i)
      ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-3f) << "n=" << n << " i=" << i;
  }
}

}  // namespace

TEST(ConvPrepare, WeightsPreparedUnderOtherThreadsStillRun) {
  for (bool blocked : {false, true})
    for (auto [build, run] : {std::pair{2, 1}, std::pair{1, 2}}) {
      // 8x8: direct convolution, weights released; BlockedConv 32 channels over 16x16: Winograd, kept.
      check(blocked, 32, 8, build, run, true);
      if (blocked) check(blocked, 32, 16, build, run, false);
    }
}
