// cuDNN execution plans kept for the process (cudnn_graph.h: shared_conv_graph_plan): a second session
// built in the same process over the same convolutions finalizes no plan; it takes the first session's
// from the process's cache (the disk cache keeps only the plan's place in cuDNN's list). Counted with the
// backend's own counter of finalized plans, read from the loaded libtessera_cuda.so. The graph path is
// chosen without timing (TESSERA_CUDA_CONV_GRAPH=first), and the disk cache lives in a fresh folder
// (XDG_CACHE_HOME), so the first session builds every plan and the second none, whatever the GPU's
// timings. Both sessions' outputs match the CPU's reference kernels.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "conv_test_util.h"

namespace cuda_test {
namespace {

// The backend's counter, or null where the library is not loaded (yet).
using Counter = uint64_t (*)();

int find_cuda_library(struct dl_phdr_info* info, size_t, void* out) {
  const std::string name = info->dlpi_name ? info->dlpi_name : "";
  if (name.size() >= 18 && name.compare(name.size() - 18, 18, "libtessera_cuda.so") == 0) {
    *static_cast<std::string*>(out) = name;
    return 1;
  }
  return 0;
}

Counter plans_counter() {
  std::string path;
  dl_iterate_phdr(find_cuda_library, &path);
  if (path.empty()) return nullptr;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return nullptr;
  return reinterpret_cast<Counter>(dlsym(h, "tessera_cuda_conv_plans_finalized"));
}

// An environment variable set for the test's lifetime.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old) {
      setenv(name.c_str(), old->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
};

// Three channels-last convolutions with bias and Clip(0, 6) (MobileNetV2's 1x1 expand, a 3x3 and a
// 1x1 project with the residual Z): com.tessera NhwcConv in float16, static shapes (plans at session build).
ir::Model convs() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}, {"com.tessera", 1}};
  ir::GraphBuilder b(m.graph);
  auto ty = [](std::vector<int64_t> dims) {
    ir::Shape s;
    for (int64_t d : dims) s.push_back(ir::Dim::of(d));
    return ir::Type::tensor(DataType::kFloat16, s);
  };
  auto x = b.input("x", ty({4, 28, 28, 32}));
  auto w1 = b.input("w1", ty({96, 1, 1, 32})), b1 = b.input("b1", ty({96}));
  auto w2 = b.input("w2", ty({96, 3, 3, 96})), b2 = b.input("b2", ty({96}));
  auto w3 = b.input("w3", ty({32, 1, 1, 96})), b3 = b.input("b3", ty({32}));
  const std::vector<ir::Attribute> clip = {ir::Attribute::of_string("activation", "Clip"),
                                           ir::Attribute::of_floats("activation_params", {0.f, 6.f})};
  auto h1 = b.node("NhwcConv", {x, w1, b1}, clip, "expand");
  std::vector<ir::Attribute> pad = clip;
  pad.push_back(ir::Attribute::of_ints("pads", {1, 1, 1, 1}));
  auto h2 = b.node("NhwcConv", {h1, w2, b2}, pad, "conv3x3");
  auto y = b.node("NhwcConv", {h2, w3, b3, x}, {}, "project");
  for (auto& n : m.graph.nodes) n.domain = "com.tessera";
  b.output(y, ty({4, 28, 28, 32}));
  return m;
}

Feeds conv_feeds() {
  return {{"x", rt::Value(random_tensor(DataType::kFloat16, {4, 28, 28, 32}, 1))},
          {"w1", rt::Value(random_tensor(DataType::kFloat16, {96, 1, 1, 32}, 2))},
          {"b1", rt::Value(random_tensor(DataType::kFloat16, {96}, 3))},
          {"w2", rt::Value(random_tensor(DataType::kFloat16, {96, 3, 3, 96}, 4))},
          {"b2", rt::Value(random_tensor(DataType::kFloat16, {96}, 5))},
          {"w3", rt::Value(random_tensor(DataType::kFloat16, {32, 1, 1, 96}, 6))},
          {"b3", rt::Value(random_tensor(DataType::kFloat16, {32}, 7))}};
}

rt::SessionOptions gpu_options() {
  return {.optimization = rt::OptLevel::kNone,
          .backend = "cuda",
          .profile = true,
          .precision = tessera::passes::Precision::kFp32};
}

class CudaConvPlanCache : public CudaBackendTest {};

TEST_F(CudaConvPlanCache, ASecondSessionBuildsNoPlan) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera-plan-cache-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ScopedEnv cache("XDG_CACHE_HOME", dir.string());
  ScopedEnv mode("TESSERA_CUDA_CONV_GRAPH", "first");
  const ir::Model m = convs();
  using Clock = std::chrono::steady_clock;

  auto t0 = Clock::now();
  rt::Session first(m, gpu_options());
  const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  Counter finalized = plans_counter();
  ASSERT_NE(finalized, nullptr) << "tessera_cuda_conv_plans_finalized not found in libtessera_cuda.so";
  const auto a = first.run(conv_feeds());
  std::map<std::string, std::string> paths;
  for (const auto& ev : first.last_stats().events) paths[ev.node_name] = ev.path;
  int graphs = 0;
  for (const auto& [name, path] : paths) graphs += path.find("cuDNN graph") != std::string::npos;
  ASSERT_GE(graphs, 1) << "cuDNN took none of the graphs; paths: " << paths["expand"] << " / "
                       << paths["conv3x3"] << " / " << paths["project"];

  const uint64_t before = finalized();
  t0 = Clock::now();
  rt::Session second(m, gpu_options());
  const double second_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  EXPECT_EQ(finalized() - before, 0u) << "the second session build finalized plans";
  const auto b = second.run(conv_feeds());
  for (const auto& ev : second.last_stats().events) {
    const std::string& was = paths[ev.node_name];
    if (was.find("cuDNN graph") == std::string::npos) continue;
    EXPECT_NE(ev.path.find("plan reused"), std::string::npos) << ev.node_name << ": " << ev.path;
  }
  fmt::print("[conv-plan-cache] session build {:.1f} ms, then {:.1f} ms with {} plan(s) reused\n", first_ms,
             second_ms, graphs);

  // The same plans on the same inputs: the same outputs (cuDNN's forward engines are deterministic; a few
  // units allowed). Against the reference (float16 intermediates on both sides, rounded at different
  // places: the older path stores the convolution before the epilogue, the graph keeps it in float32):
  // within 1% of the output's largest magnitude.
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  expect_close(b[0].tensor(), a[0].tensor(), 4, "second session vs first");
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .reference_kernels = true});
  const rt::Tensor want = ref.run(conv_feeds())[0].tensor();
  const rt::Tensor& got = a[0].tensor();
  double peak = 0, worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    peak = std::max(peak, std::fabs(want.to_double(i)));
    worst = std::max(worst, std::fabs(got.to_double(i) - want.to_double(i)));
  }
  EXPECT_LE(worst, 0.01 * peak) << "largest error " << worst << " of outputs up to " << peak;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace cuda_test
