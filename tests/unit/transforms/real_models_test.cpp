// Every transformation over the real models of tests/models (ResNet-50, MobileNetV2, EfficientNet-B0,
// ViT-B/16, the BERT-style encoder), from the folder TESSERA_MODELS_DIR names (the layout
// export_models.py writes; the ctest entry `transforms_models` points it at build/models, which the
// `models` entry fills). Skipped when the variable is unset.
//
// Each result must type-check. The value-preserving ones (sanitize, set-shapes, extract of the whole
// graph) must give the original's outputs bit for bit on the model's own inputs; float16 (with float32
// inputs and outputs) within a relative error of 5e-2 of the output's scale (max |got - want| /
// max |want|): float16 keeps 11 significant bits (2^-11 = 4.9e-4 per rounding) and these networks chain
// 50 to 160 rounding layers; measured 2.2e-3 (BERT-style) to 2.8e-2 (ResNet-50, 53 convolutions whose
// float16 activations feed one another), as docs/transforms.md lists.
// bfloat16 must type-check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "check/checker.h"
#include "onnx/data_value.h"
#include "onnx/onnx_io.h"
#include "runtime/session.h"
#include "transforms/extract.h"
#include "transforms/float16.h"
#include "transforms/sanitize.h"
#include "transforms/set_shapes.h"

namespace tessera::transforms {
namespace {

namespace fs = std::filesystem;
using Feeds = std::vector<std::pair<std::string, rt::Value>>;

std::vector<fs::path> model_dirs() {
  const char* root = std::getenv("TESSERA_MODELS_DIR");
  std::vector<fs::path> dirs;
  if (!root || !fs::is_directory(root)) return dirs;
  for (const auto& e : fs::directory_iterator(root))
    if (fs::exists(e.path() / "model.onnx") && fs::exists(e.path() / "test_data_set_0" / "input_0.pb"))
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// The model's own inputs, in the order of its graph inputs (those that are not initializers).
Feeds inputs_of(const ir::Model& m, const fs::path& dir) {
  Feeds feeds;
  size_t k = 0;
  for (const auto& in : m.graph.inputs) {
    if (m.graph.find_initializer(in.name)) continue;
    fs::path file = dir / "test_data_set_0" / ("input_" + std::to_string(k++) + ".pb");
    feeds.emplace_back(in.name, rt::Tensor::from_ir(onnx::read_data_value(file, in.type).tensor));
  }
  return feeds;
}

std::vector<rt::Tensor> run(const ir::Model& m, const Feeds& feeds) {
  rt::Session s(m, {.optimization = rt::OptLevel::kNone});
  std::vector<rt::Tensor> out;
  for (const auto& v : s.run(feeds)) out.push_back(v.tensor());
  return out;
}

::testing::AssertionResult same_bits(const std::vector<rt::Tensor>& want,
                                     const std::vector<rt::Tensor>& got) {
  if (want.size() != got.size())
    return ::testing::AssertionFailure() << got.size() << " outputs, not " << want.size();
  for (size_t k = 0; k < want.size(); ++k) {
    if (want[k].shape() != got[k].shape() || want[k].dtype() != got[k].dtype() ||
        want[k].nbytes() != got[k].nbytes() ||
        std::memcmp(want[k].raw(), got[k].raw(), want[k].nbytes()) != 0)
      return ::testing::AssertionFailure() << "output " << k << " differs";
  }
  return ::testing::AssertionSuccess();
}

// max |got - want| / max |want| over each output; the worst output's.
double relative_error(const std::vector<rt::Tensor>& want, const std::vector<rt::Tensor>& got) {
  double worst = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    double err = 0, scale = 1e-30;
    for (int64_t i = 0; i < want[k].numel(); ++i) {
      err = std::max(err, std::fabs(got[k].to_double(i) - want[k].to_double(i)));
      scale = std::max(scale, std::fabs(want[k].to_double(i)));
    }
    worst = std::max(worst, std::isnan(err) ? INFINITY : err / scale);
  }
  return worst;
}

bool type_checks(const ir::Model& m, std::string* first) {
  auto d = check::check_model(m).diagnostics;
  for (const auto& item : d.items)
    if (item.severity == check::Severity::kError) {
      *first = item.to_string();
      return false;
    }
  return true;
}

// The inputs' sizes as the data files give them, written into the model.
SetShapesOptions shapes_of(const Feeds& feeds) {
  SetShapesOptions o;
  for (const auto& [name, v] : feeds) {
    InputShape s{name, {}};
    for (int64_t d : v.tensor().shape()) s.dims.push_back(ir::Dim::of(d));
    o.shapes.push_back(std::move(s));
  }
  return o;
}

TEST(RealModels, EveryTransformTypeChecksAndPreservesOutputs) {
  auto dirs = model_dirs();
  if (dirs.empty()) GTEST_SKIP() << "TESSERA_MODELS_DIR is not set or holds no exported model";
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir.filename().string());
    ir::Model m = onnx::load_model(dir / "model.onnx");
    Feeds feeds = inputs_of(m, dir);
    std::vector<rt::Tensor> want = run(m, feeds);
    std::string error;
    Report r;

    ir::Model sanitized = sanitize_copy(m, {}, r);
    EXPECT_TRUE(type_checks(sanitized, &error)) << "sanitize: " << error;
    EXPECT_TRUE(same_bits(want, run(sanitized, feeds))) << "sanitize";

    ir::Model shaped = set_shapes_copy(m, shapes_of(feeds), r);
    EXPECT_TRUE(type_checks(shaped, &error)) << "set-shapes: " << error;
    EXPECT_TRUE(same_bits(want, run(shaped, feeds))) << "set-shapes";

    ExtractOptions whole;
    for (const auto& [name, v] : feeds) whole.inputs.push_back(name);
    for (const auto& o : m.graph.outputs) whole.outputs.push_back(o.name);
    ir::Model extracted = extract(m, whole, r);
    EXPECT_TRUE(type_checks(extracted, &error)) << "extract: " << error;
    EXPECT_TRUE(same_bits(want, run(extracted, feeds))) << "extract";

    FloatConvertOptions half;
    half.keep_io_types = true;
    ir::Model fp16 = convert_float_copy(m, half, r);
    EXPECT_TRUE(type_checks(fp16, &error)) << "fp16: " << error;
    double err = relative_error(want, run(fp16, feeds));
    EXPECT_LE(err, 5e-2) << "fp16";
    std::printf("  %-16s fp16 relative error %.2e, %lld Casts added, %lld removed as redundant\n",
                dir.filename().c_str(), err, static_cast<long long>(r.get("Casts added")),
                static_cast<long long>(r.get("redundant Casts removed")));

    FloatConvertOptions bf16 = half;
    bf16.to = ir::DataType::kBFloat16;
    ir::Model b = convert_float_copy(m, bf16, r);
    EXPECT_TRUE(type_checks(b, &error)) << "bf16: " << error;
  }
}

}  // namespace
}  // namespace tessera::transforms
