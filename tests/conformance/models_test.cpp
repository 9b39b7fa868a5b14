// The ONNX node conformance suite as a test of the model core: every case's model must load, check
// without error diagnostics, and round-trip (load, save, load: structurally equal).
// Cases listed in skip_check.txt are exempt from the error-free check, each with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>

#include "check/checker.h"
#include "onnx/onnx_io.h"

namespace fs = std::filesystem;

namespace {

std::map<std::string, std::string> read_skips() {
  std::map<std::string, std::string> skips;
  std::ifstream in(TESSERA_CONFORMANCE_SKIPS);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto sp = line.find_first_of(" \t");
    std::string name = line.substr(0, sp);
    std::string reason = sp == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", sp));
    skips[name] = reason;
  }
  return skips;
}

std::vector<fs::path> cases() {
  const char* dir = std::getenv("TESSERA_CONFORMANCE_DIR");
  std::vector<fs::path> out;
  if (!dir || !fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (fs::exists(e.path() / "model.onnx")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Conformance, EveryModelLoadsChecksAndRoundTrips) {
  auto all = cases();
  ASSERT_FALSE(all.empty()) << "no cases: set TESSERA_CONFORMANCE_DIR to the unpacked suite's node/ folder";
  auto skips = read_skips();
  size_t passed = 0, skipped = 0;
  std::vector<std::string> failures;
  for (const fs::path& dir : all) {
    std::string name = dir.filename().string();
    tessera::ir::Model m;
    try {
      m = tessera::onnx::load_model(dir / "model.onnx");
    } catch (const std::exception& e) {
      failures.push_back(name + ": load: " + e.what());
      continue;
    }
    std::string bytes = tessera::onnx::serialize_model(m);
    tessera::ir::Model again = tessera::onnx::load_model_from_memory(
        std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), dir);
    if (!(again == m)) {
      failures.push_back(name + ": round trip changed the model");
      continue;
    }
    auto result = tessera::check::check_model(m);
    if (result.diagnostics.has_errors()) {
      if (skips.count(name)) {
        ++skipped;
        continue;
      }
      std::string first;
      for (const auto& d : result.diagnostics.items) {
        if (d.severity == tessera::check::Severity::kError) {
          first = d.to_string();
          break;
        }
      }
      failures.push_back(name + ": " + first);
      continue;
    }
    ++passed;
  }
  std::string list;
  for (const auto& f : failures) list += "  " + f + "\n";
  std::printf("conformance models: %zu passed, %zu failed, %zu skipped (of %zu)\n", passed, failures.size(),
              skipped, all.size());
  EXPECT_TRUE(failures.empty()) << list;
  EXPECT_EQ(all.size(), 1884u) << "the suite should hold 1,884 cases";
}

}  // namespace
