// BiasGelu's 16-byte kernels on the GPU, each one forced (TESSERA_GELU_BIAS, gelu.cu): the row kernel
// with 2 rows an iteration on 2112 blocks (the kernel of 2026-11-25 07:00) or on one wave of blocks (the
// count the occupancy query gives), with 4 rows an iteration on one wave, and the flat kernel with 4 or 8
// vectors a thread, against the reference kernels (double, rounded once) in float32, float16 and bfloat16
// on shapes with a ragged last row block (rows not a multiple of the grid's), a column count that leaves
// the last block of columns part-empty, and flat blocks cut by the end; then their memory bandwidth at the
// transformer benchmarks' sizes ([32,128,3072] BERT/GPT-2, [32,197,3072] ViT; float16; bytes read and
// written over the best per-node device time of 20 runs; H100 HBM3 ~3.35 TB/s peak):
//   tessera_cuda_tests --gtest_filter='CudaGeluBias*:CudaOps.GeluBias*'
// Tolerance: one unit of the type (what CudaGeluMath checks the erf GELU's float32 math against over every
// 16-bit input: the exact value's rounding or its neighbour); float32 4 ulp (double math rounded once).
#include <fmt/format.h>

#include <cstdlib>
#include <optional>

#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

constexpr const char* kVariants[] = {"rows2", "rows2w", "rows4w", "rows2f", "flat4", "flat8"};
const DataType kFloatTypes[] = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16};

// TESSERA_GELU_BIAS set for the scope, then restored.
class ForcedGelu {
 public:
  explicit ForcedGelu(const char* v) {
    if (const char* o = std::getenv("TESSERA_GELU_BIAS")) old_ = o;
    setenv("TESSERA_GELU_BIAS", v, 1);
  }
  ~ForcedGelu() {
    if (old_)
      setenv("TESSERA_GELU_BIAS", old_->c_str(), 1);
    else
      unsetenv("TESSERA_GELU_BIAS");
  }

 private:
  std::optional<std::string> old_;
};

OneNode bias_gelu(DataType t, const rt::Shape& shape, uint32_t seed) {
  OneNode c = node("BiasGelu", 17);
  c.domain = "com.microsoft";
  c.inputs = {random_tensor(t, shape, -9.0f, 9.0f, seed),
              random_tensor(t, {shape.back()}, -1.0f, 1.0f, seed + 1)};
  return c;
}

TEST_F(CudaOps, GeluBiasEveryKernelMatchesTheReference) {
  uint32_t seed = 8100;
  for (const char* v : kVariants) {
    ForcedGelu forced(v);
    for (DataType t : kFloatTypes) {
      // 3 x 37 rows of 3072 (ragged row blocks), 129 x 256 (the row kernel's smallest bias), 33 x 1032
      // (129 vectors: a part-empty last column block; flat blocks cut inside a row).
      for (const rt::Shape& shape : {rt::Shape{3, 37, 3072}, rt::Shape{129, 256}, rt::Shape{33, 1032}}) {
        const OneNode c = bias_gelu(t, shape, seed);
        seed += 2;
        const std::string what = label("BiasGelu", v, type_name(t), rt::shape_str(shape));
        const double eps = t == DataType::kFloat ? 4 * 0x1p-23 : type_eps(t);
        Outputs r = run_both(c);
        EXPECT_EQ(r.gpu_nodes, 1u) << what << " did not run on the GPU";
        ASSERT_EQ(r.gpu.size(), 1u) << what;
        expect_near(r.gpu[0], r.ref[0], eps, eps * (t == DataType::kFloat ? 1e-6 : 0x1p-14), what);
      }
    }
  }
}

class CudaGeluBiasBench : public CudaOps {};

TEST_F(CudaGeluBiasBench, Bandwidth) {
  for (const rt::Shape& s : {rt::Shape{32, 128, 3072}, rt::Shape{32, 197, 3072}}) {
    const OneNode c = bias_gelu(DataType::kFloat16, s, 40);
    double elems = 1;
    for (int64_t d : s) elems *= static_cast<double>(d);
    const double bytes = 2 * 2 * elems;  // x read, y written (the bias stays in cache)
    for (const char* v : kVariants) {
      ForcedGelu forced(v);
      const Timed t = time_node(c, 20);
      EXPECT_TRUE(t.on_gpu) << v;
      fmt::print("[gelu-bias] BiasGelu f16 {:<16} {:<6} {:8.2f} us {:6.2f} TB/s\n", rt::shape_str(s), v,
                 t.best_us, bytes / (t.best_us * 1e6));
    }
  }
}

}  // namespace
}  // namespace tessera::cuda_test
