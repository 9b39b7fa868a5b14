// The lean 16-bit row-norm kernel (norm_rows.cu: held to 64 registers, 32 warps an SM) at the row sizes
// transformers use, not only BERT's 768: 384 and 512 (ViT-S, BERT-small), 1024 (GPT-2 medium, BERT-large),
// 4096 (Llama-7B), 8192 (Llama-70B), and odd multiples of 8 (1032 = 129 x 8, 2056, 8184), in float16 and
// bfloat16, for LayerNormalization (with and without B), SimplifiedLayerNormalization, SkipLayerNormalization
// (with and without beta, with the sum output) and SkipSimplifiedLayerNormalization: the forms without
// a bias before the normalisation and without mean/inverse-deviation outputs, which the lean
// instantiation takes. Many rows (a row a team, the last block part-empty) and 3 rows (batch 1: more
// warps a row). Against the CPU's reference kernels: the outputs are up to ~4 in magnitude and both
// sides compute in float32 (two-pass statistics, ~1e-6 relative) and round once to the 16-bit type, so
// they differ by at most one unit at a rounding boundary: 2 units (type eps) relative plus 4 units absolute
// for values near zero, whose error scales with the row's spread rather than with the value.
// CudaNormLean.Bandwidth prints the time and the achieved bandwidth of each size (best of 20 runs,
// per-node CUDA-event timing; H100 HBM3 ~3.35 TB/s peak): what the GPU run measures.
//   tessera_cuda_tests --gtest_filter='CudaNormLean.*'
#include <fmt/format.h>

#include <cstdio>

#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

const int64_t kSizes[] = {384, 512, 768, 1024, 1032, 2056, 4096, 8184, 8192};
const DataType kHalfTypes[] = {DataType::kFloat16, DataType::kBFloat16};

double rtol_for(DataType t) {
  return 2 * type_eps(t);
}
double atol_for(DataType t) {
  return 4 * type_eps(t);
}

// About 131k elements in rows of n (an odd count, so the last block of 4 one-warp teams is part-empty).
int64_t many_rows(int64_t n) {
  return (131072 / n) | 1;
}

class CudaNormLean : public CudaOps {};

TEST_F(CudaNormLean, LayerNormalizationAtEveryRowSize) {
  uint32_t seed = 9100;
  for (DataType t : kHalfTypes) {
    for (int64_t n : kSizes) {
      for (int64_t rows : {many_rows(n), int64_t{3}}) {
        const rt::Shape shape{rows, n};
        for (bool with_b : {true, false}) {
          OneNode c = node("LayerNormalization", 17, {ir::Attribute::of_int("axis", -1)});
          c.inputs = {random_tensor(t, shape, -3.0f, 5.0f, seed++),
                      random_tensor(t, {n}, -2.0f, 2.0f, seed++)};
          if (with_b) c.inputs.push_back(random_tensor(t, {n}, -1.0f, 1.0f, seed++));
          expect_matches(
              c, rtol_for(t), atol_for(t),
              label("LayerNormalization", type_name(t), rt::shape_str(shape), with_b ? "B" : "no B"));
        }
        OneNode s = node("SimplifiedLayerNormalization", 17, {ir::Attribute::of_float("epsilon", 1e-6f)});
        s.domain = "com.microsoft";
        s.inputs = {random_tensor(t, shape, -3.0f, 5.0f, seed++), random_tensor(t, {n}, -2.0f, 2.0f, seed++)};
        expect_matches(s, rtol_for(t), atol_for(t),
                       label("SimplifiedLayerNormalization", type_name(t), rt::shape_str(shape)));
      }
    }
  }
}

// Skip forms with the output alone: a full skip and one repeating a row block (broadcast over the batch).
TEST_F(CudaNormLean, SkipLayerNormalizationAtEveryRowSize) {
  uint32_t seed = 9300;
  for (DataType t : kHalfTypes) {
    for (int64_t n : kSizes) {
      const int64_t rows = (65536 / n) | 1;
      const rt::Shape shape{2, rows, n}, row_skip{rows, n};
      for (const rt::Shape& skip : {shape, row_skip}) {
        for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
          const bool simplified = std::string(op) == "SkipSimplifiedLayerNormalization";
          for (bool beta : {true, false}) {
            if (simplified && beta) continue;  // the simplified form has no beta
            OneNode c = node(op, 17, {ir::Attribute::of_float("epsilon", 1e-5f)});
            c.domain = "com.microsoft";
            c.inputs = {random_tensor(t, shape, -3.0f, 5.0f, seed++),
                        random_tensor(t, skip, -1.0f, 1.0f, seed++),
                        random_tensor(t, {n}, -2.0f, 2.0f, seed++)};
            if (beta) c.inputs.push_back(random_tensor(t, {n}, -1.0f, 1.0f, seed++));
            expect_matches(c, rtol_for(t), atol_for(t),
                           label(op, type_name(t), rt::shape_str(shape), "skip", rt::shape_str(skip),
                                 beta ? "beta" : "no beta"));
          }
        }
      }
    }
  }
}

// The skip form's outputs y and sum (mean and inverse deviation left out: GPT-2 and ViT's pre-LN
// residual), few rows and many.
TEST_F(CudaNormLean, SkipLayerNormalizationWithTheSumAtEveryRowSize) {
  uint32_t seed = 9500;
  for (DataType t : kHalfTypes) {
    for (int64_t n : kSizes) {
      for (int64_t rows : {many_rows(n), int64_t{3}}) {
        const rt::Shape shape{rows, n};
        ir::Model m;
        m.ir_version = 9;
        m.opset_imports = {{"", 17}, {"com.microsoft", 1}};
        ir::GraphBuilder b(m.graph);
        auto ty = [&](const rt::Shape& s) {
          ir::Shape d;
          for (int64_t v : s) d.push_back(ir::Dim::of(v));
          return ir::Type::tensor(t, d);
        };
        ir::Node node_;
        node_.op_type = "SkipLayerNormalization";
        node_.domain = "com.microsoft";
        node_.name = "op";
        node_.inputs = {b.input("x", ty(shape)), b.input("skip", ty(shape)), b.input("gamma", ty({n})),
                        b.input("beta", ty({n}))};
        node_.outputs = {"y", "", "", "sum"};
        node_.attributes = {ir::Attribute::of_float("epsilon", 1e-5f)};
        m.graph.add_node(std::move(node_));
        b.output("y", ty(shape));
        b.output("sum", ty(shape));
        const std::vector<std::pair<std::string, rt::Value>> feeds = {
            {"x", rt::Value(random_tensor(t, shape, -3.0f, 5.0f, seed++))},
            {"skip", rt::Value(random_tensor(t, shape, -1.0f, 1.0f, seed++))},
            {"gamma", rt::Value(random_tensor(t, {n}, -2.0f, 2.0f, seed++))},
            {"beta", rt::Value(random_tensor(t, {n}, -1.0f, 1.0f, seed++))}};
        rt::Session gpu(m, {.optimization = rt::OptLevel::kNone,
                            .backend = "cuda",
                            .precision = tessera::passes::Precision::kFp32});
        rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
        size_t on_gpu = 0;
        for (const auto& bi : gpu.backends())
          if (bi.name == "cuda") on_gpu += bi.nodes;
        const std::string what = label("SkipLayerNormalization +sum", type_name(t), rt::shape_str(shape));
        EXPECT_EQ(on_gpu, 1u) << what;
        const auto got = gpu.run(feeds), want = ref.run(feeds);
        ASSERT_EQ(got.size(), 2u) << what;
        expect_near(got[0].tensor(), want[0].tensor(), rtol_for(t), atol_for(t), label(what, "y"));
        // The sum x + skip rounded once on both sides: within one unit.
        expect_near(got[1].tensor(), want[1].tensor(), type_eps(t), 0, label(what, "sum"));
      }
    }
  }
}

void report(const std::string& what, const OneNode& c, double bytes) {
  const Timed t = time_node(c, 20);
  EXPECT_TRUE(t.on_gpu) << what << " did not run on the GPU";
  fmt::print("[norm-lean] {:<58} {:8.2f} us {:6.2f} TB/s\n", what, t.best_us, bytes / (t.best_us * 1e6));
  std::fflush(stdout);  // each line as it is measured, whatever the log keeps of the end
}

// Each size at about BERT-base batch 32's element count (4096 x 768 = 3.1M), float16 and bfloat16:
// SkipLayerNormalization (x and skip read, y written) and LayerNormalization (x read, y written).
TEST_F(CudaNormLean, Bandwidth) {
  for (DataType t : kHalfTypes) {
    for (int64_t n : kSizes) {
      const int64_t rows = 4096 * 768 / n;
      const rt::Shape shape{rows, n};
      const double elems = static_cast<double>(rows * n);
      OneNode s = node("SkipLayerNormalization", 17, {ir::Attribute::of_float("epsilon", 1e-5f)});
      s.domain = "com.microsoft";
      s.inputs = {random_tensor(t, shape, -2, 2, 10), random_tensor(t, shape, -1, 1, 11),
                  random_tensor(t, {n}, -1, 1, 12), random_tensor(t, {n}, -1, 1, 13)};
      report(fmt::format("SkipLayerNormalization {} {}", type_name(t), rt::shape_str(shape)), s,
             3 * 2 * elems);
      OneNode l = node("LayerNormalization", 17, {ir::Attribute::of_int("axis", -1)});
      l.inputs = {random_tensor(t, shape, -2, 2, 20), random_tensor(t, {n}, -1, 1, 21),
                  random_tensor(t, {n}, -1, 1, 22)};
      report(fmt::format("LayerNormalization {} {}", type_name(t), rt::shape_str(shape)), l, 2 * 2 * elems);
    }
  }
}

}  // namespace
}  // namespace tessera::cuda_test
