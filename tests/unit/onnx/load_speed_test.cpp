// Loading a 1 GB single-file model should cost about as much as reading the file once. Disabled by
// default (it writes 1 GB to the temp folder); run with --gtest_also_run_disabled_tests.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "onnx_test_util.h"

namespace tessera::onnx {
namespace {

using namespace testing;  // NOLINT

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(OnnxLoadSpeed, DISABLED_OneGigabyteSingleFile) {
  TempDir dir;
  {
    ir::Model m;
    m.ir_version = 10;
    std::string chunk(128 << 20, '\x11');
    for (int i = 0; i < 8; ++i) {
      ir::Tensor t;
      t.name = "w" + std::to_string(i);
      t.dtype = ir::DataType::kUint8;
      t.dims = {static_cast<int64_t>(chunk.size())};
      t.data = ir::make_buffer(chunk);
      m.graph.initializers.push_back(std::move(t));
    }
    SaveOptions inline_all;
    inline_all.external_data = SaveOptions::ExternalData::kInline;
    auto t0 = std::chrono::steady_clock::now();
    save_model(m, dir / "big.onnx", inline_all);
    std::cout << "save: " << seconds_since(t0) << " s\n";
  }
  auto t0 = std::chrono::steady_clock::now();
  std::string raw = read_file(dir / "big.onnx");
  std::cout << "plain read of " << raw.size() << " bytes: " << seconds_since(t0) << " s\n";
  raw = {};
  for (int i = 0; i < 3; ++i) {
    t0 = std::chrono::steady_clock::now();
    ir::Model m = load_model(dir / "big.onnx");
    double s = seconds_since(t0);
    std::cout << "load: " << s << " s\n";
    EXPECT_EQ(m.graph.initializers.size(), 8u);
    EXPECT_LT(s, 1.0);
  }
  // The weights stay in the file's mapping until first read: loading and then touching every byte
  // costs about one pass over the page cache.
  t0 = std::chrono::steady_clock::now();
  ir::Model m = load_model(dir / "big.onnx");
  uint64_t sum = 0;
  for (const ir::Tensor& t : m.graph.initializers) {
    for (std::byte b : t.bytes()) sum += static_cast<uint8_t>(b);
  }
  std::cout << "load and read every weight: " << seconds_since(t0) << " s (sum " << sum << ")\n";
  EXPECT_EQ(sum, uint64_t{0x11} * (1u << 30));
}

}  // namespace
}  // namespace tessera::onnx
