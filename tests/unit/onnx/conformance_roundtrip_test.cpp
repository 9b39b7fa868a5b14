// Every model of the ONNX node conformance suite survives load -> save -> load unchanged. The suite
// is looked for in $TESSERA_CONFORMANCE_NODE_DIR, else /tmp/conf/node; the test skips without it.
#include <gtest/gtest.h>

#include <cstdlib>

#include "onnx_test_util.h"

namespace tessera::onnx {
namespace {

using namespace testing;  // NOLINT

TEST(OnnxConformance, NodeModelsRoundTrip) {
  const char* env = std::getenv("TESSERA_CONFORMANCE_NODE_DIR");
  fs::path root = env ? env : "/tmp/conf/node";
  if (!fs::is_directory(root)) GTEST_SKIP() << root << " not found";
  int count = 0;
  for (const auto& entry : fs::directory_iterator(root)) {
    fs::path file = entry.path() / "model.onnx";
    if (!fs::exists(file)) continue;
    SCOPED_TRACE(file.string());
    try {
      ir::Model m = load_model(file);
      ir::Model back = load_model_from_memory(as_bytes(serialize_model(m)));
      EXPECT_TRUE(back == m);
      ++count;
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  std::cout << "round-tripped " << count << " conformance models\n";
  RecordProperty("models", count);
}

}  // namespace
}  // namespace tessera::onnx
