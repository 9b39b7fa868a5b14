// Every transformation on the bundled sample models (build/samples, written by the build): the results
// pass Tessera's checker and ONNX's; float32-preserving ones compute the same bits.
#include <gtest/gtest.h>

#include <filesystem>

#include "check/checker.h"
#include "ir/commands/history.h"
#include "onnx/onnx_io.h"
#include "transforms/float16.h"
#include "transforms/sanitize.h"
#include "transforms/set_shapes.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> samples() {
  std::vector<fs::path> out;
  fs::path dir = fs::path(TESSERA_TEST_DATA) / ".." / ".." / "build" / "samples";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".onnx") out.push_back(e.path());
  return out;
}

TEST(Samples, TransformationsCheckAndSanitizeIsExact) {
  auto files = samples();
  if (files.empty()) GTEST_SKIP() << "build/samples has no models (run scripts/build.sh)";
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    ir::Model m = onnx::load_model(f);
    for (auto to : {ir::DataType::kFloat16, ir::DataType::kBFloat16}) {
      Report r;
      FloatConvertOptions o;
      o.to = to;
      o.keep_io_types = true;
      ir::Model low = convert_float_copy(m, o, r);
      EXPECT_FALSE(check::check_model(low).diagnostics.has_errors());
      EXPECT_TRUE(test::onnx_checker_accepts(low));
      EXPECT_TRUE(test::no_cast_pairs(low));
    }
    Report r;
    ir::Model clean = sanitize_copy(m, {}, r);
    EXPECT_FALSE(check::check_model(clean).diagnostics.has_errors());
    EXPECT_TRUE(test::onnx_checker_accepts(clean));
    auto feeds = test::feeds_for(m);
    EXPECT_EQ(test::run_model(m, feeds), test::run_model(clean, feeds));
  }
}

}  // namespace
}  // namespace tessera::transforms
