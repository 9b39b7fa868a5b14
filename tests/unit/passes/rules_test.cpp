// Numerical-equivalence tests of the rewrite rules: each builds a tiny model, runs it with no
// optimisation and at the rule's level on the same seeded random inputs, checks that the rule fired (by
// the op types left in the optimised graph) and that the outputs agree. A test whose model needs a
// kernel that is not registered yet is skipped, naming the kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>

#include "check/checker.h"
#include "ir/builder.h"
#include "onnx/onnx_io.h"
#include "passes/inline_functions.h"
#include "passes/pipeline.h"
#include "runtime/pass_target.h"
#include "runtime/session.h"
#include "runtime/value_io.h"

namespace tessera::passes {
namespace {

using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::GraphBuilder;
using rt::OptLevel;

ir::Type F(std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return ir::Type::tensor(DataType::kFloat, s);
}

ir::Model make_model(int64_t opset, const std::function<void(GraphBuilder&)>& body,
                     std::vector<ir::OpsetImport> extra = {}) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", opset}};
  for (auto& o : extra) m.opset_imports.push_back(o);
  GraphBuilder b(m.graph);
  body(b);
  return m;
}

std::string floats(GraphBuilder& b, const std::string& name, std::vector<int64_t> dims,
                   std::vector<float> v) {
  return b.initializer(ir::make_tensor(name, DataType::kFloat, std::move(dims), v));
}
std::string ints(GraphBuilder& b, const std::string& name, std::vector<int64_t> v) {
  return b.constant_ints(name, std::move(v));
}
std::string scalar(GraphBuilder& b, const std::string& name, float v) {
  return floats(b, name, {}, {v});
}

// Seeded normal values for every float graph input with a static shape.
std::vector<std::pair<std::string, rt::Value>> feeds(const ir::Model& m) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<std::pair<std::string, rt::Value>> out;
  for (const auto& in : m.graph.inputs) {
    if (m.graph.find_initializer(in.name)) continue;
    std::vector<int64_t> dims;
    for (const auto& d : *in.type.shape) dims.push_back(d.value);
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    if (in.type.elem == DataType::kBool) {
      out.emplace_back(in.name,
                       rt::Tensor::from_vector<bool>(DataType::kBool, dims, std::vector<bool>(n, true)));
      continue;
    }
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = dist(rng);
    out.emplace_back(in.name, rt::Tensor::from_vector<float>(DataType::kFloat, dims, v));
  }
  return out;
}

struct Outcome {
  std::string skip;  // why the test cannot run yet (a kernel it needs is missing)
  ir::Model optimized;
  std::vector<Rewrite> log;
};

// Runs `m` at kNone and at `level` and compares every output (rtol 1e-4).
Outcome run_both(const ir::Model& m, OptLevel level) {
  Outcome o;
  std::vector<rt::Value> want, got;
  try {
    rt::Session ref(m, {.optimization = OptLevel::kNone, .threads = 1});
    want = ref.run(feeds(m));
    rt::Session opt(m, {.optimization = level, .threads = 1});
    got = opt.run(feeds(m));
    o.optimized = opt.model();
  } catch (const rt::RunError& e) {
    std::string what = e.what();
    if (what.find("no kernel for") != std::string::npos) {
      o.skip = what;
      return o;
    }
    ADD_FAILURE() << what;
    return o;
  }
  ir::Model copy = m;
  o.log = optimize(copy, rt::cpu_target(level));
  EXPECT_EQ(want.size(), got.size());
  for (size_t i = 0; i < std::min(want.size(), got.size()); ++i)
    EXPECT_EQ(rt::compare_values(want[i], got[i], {1e-4, 1e-5}), "") << "output " << i;
  // The interface never changes.
  EXPECT_EQ(o.optimized.graph.outputs.size(), m.graph.outputs.size());
  for (size_t i = 0; i < std::min(m.graph.outputs.size(), o.optimized.graph.outputs.size()); ++i)
    EXPECT_EQ(o.optimized.graph.outputs[i].name, m.graph.outputs[i].name);
  // A second run finds nothing left to do.
  ir::Model again = o.optimized;
  EXPECT_TRUE(optimize(again, rt::cpu_target(level)).empty()) << "optimize is not idempotent";
  EXPECT_TRUE(again == o.optimized);
  return o;
}

#define RUN_OR_SKIP(var, model, level)  \
  Outcome var = run_both(model, level); \
  if (!var.skip.empty()) GTEST_SKIP() << var.skip

int count(const ir::Graph& g, std::string_view op) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.op_type == op; }));
}

bool fired(const Outcome& o, std::string_view rule) {
  return std::any_of(o.log.begin(), o.log.end(), [&](const Rewrite& r) { return r.rule == rule; });
}

// ---- Basic level ------------------------------------------------------------------------------------

TEST(PassesFoldConstants, FoldsConstantSubgraphs) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    auto c1 = b.random_normal("c1", {2, 3}, 1.0f);
    auto c2 = b.node("Constant", {},
                     {Attribute::of_tensor("value", ir::make_tensor("", DataType::kFloat, {2, 3},
                                                                    std::vector<float>(6, 0.5f)))});
    auto k = b.node("Add", {c1, c2});
    auto k2 = b.node("Mul", {k, k});
    b.output(b.node("Mul", {x, k2}), F({2, 3}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_TRUE(fired(o, "fold_constants"));
  EXPECT_EQ(count(o.optimized.graph, "Constant"), 0);
  EXPECT_EQ(count(o.optimized.graph, "Add"), 0);
  EXPECT_EQ(count(o.optimized.graph, "Mul"), 1);
  // The inputs of folded nodes went with them.
  EXPECT_EQ(o.optimized.graph.initializers.size(), 1u);
}

TEST(PassesFoldConstants, LeavesRandomOpsAndOverridableInitializers) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    auto c = b.random_normal("c", {2, 3}, 1.0f);
    b.input("c", F({2, 3}));  // an initializer that is also an input is only a default
    b.output(b.node("Mul", {x, b.node("Neg", {c})}), F({2, 3}));
  });
  ir::Model copy = m;
  optimize(copy, rt::cpu_target(OptLevel::kBasic));
  EXPECT_EQ(count(copy.graph, "Neg"), 1);
}

TEST(PassesFoldShape, ShapeOfStaticValueBecomesConstant) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3, 4}));
    auto s = b.node("Shape", {x});
    auto r = b.node("Reshape", {x, s});
    auto n = b.node("Size", {x});
    auto nf = b.node("Cast", {n}, {Attribute::of_int("to", 1)});
    b.output(b.node("Mul", {b.node("Relu", {r}), nf}), F({2, 3, 4}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_TRUE(fired(o, "fold_shape"));
  EXPECT_EQ(count(o.optimized.graph, "Shape"), 0);
  EXPECT_EQ(count(o.optimized.graph, "Size"), 0);
  EXPECT_EQ(count(o.optimized.graph, "Reshape"), 0);  // then a no-op, removed by eliminate_nop
}

TEST(PassesEliminateIdentity, RemovesIdentityAndInferenceDropout) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    auto i1 = b.node("Identity", {x});
    auto d = b.node("Dropout", {i1}, {}, "drop");
    auto r = b.node("Relu", {d});
    b.output(b.node("Identity", {r}, {}, "y"), F({2, 3}));  // a graph output: its name stays
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_EQ(count(o.optimized.graph, "Identity"), 0);
  EXPECT_EQ(count(o.optimized.graph, "Dropout"), 0);
  ASSERT_EQ(o.optimized.graph.nodes.size(), 1u);
  EXPECT_EQ(o.optimized.graph.nodes[0].outputs[0], "y");
}

TEST(PassesEliminateIdentity, KeepsIdentityBetweenInputAndOutput) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    b.output(b.node("Identity", {x}, {}, "y"), F({2, 3}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_EQ(count(o.optimized.graph, "Identity"), 1);
}

TEST(PassesEliminateDeadNodes, RemovesUnreadNodes) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    auto w = b.random_normal("w", {2, 3}, 1.0f);
    b.node("Neg", {b.node("Add", {x, w})});  // read by nobody
    b.output(b.node("Relu", {x}), F({2, 3}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_EQ(o.optimized.graph.nodes.size(), 1u);
  EXPECT_TRUE(o.optimized.graph.initializers.empty());
}

// One no-op node between x and a Relu; after the basic level only the Relu is left.
void expect_nop_removed(const std::function<std::string(GraphBuilder&, const std::string&)>& nop,
                        int64_t opset = 17) {
  ir::Model m = make_model(opset, [&](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    b.output(b.node("Relu", {nop(b, x)}), F({2, 3}));
  });
  Outcome o = run_both(m, OptLevel::kBasic);
  if (!o.skip.empty()) GTEST_SKIP() << o.skip;
  EXPECT_TRUE(fired(o, "eliminate_nop"));
  EXPECT_EQ(o.optimized.graph.nodes.size(), 1u);
}

TEST(PassesEliminateNop, Transpose) {
  expect_nop_removed([](GraphBuilder& b, const std::string& x) {
    return b.node("Transpose", {x}, {Attribute::of_ints("perm", {0, 1})});
  });
}
TEST(PassesEliminateNop, Reshape) {
  expect_nop_removed([](GraphBuilder& b, const std::string& x) {
    return b.node("Reshape", {x, ints(b, "s", {2, -1})});
  });
}
TEST(PassesEliminateNop, Cast) {
  expect_nop_removed([](GraphBuilder& b, const std::string& x) {
    return b.node("Cast", {x}, {Attribute::of_int("to", static_cast<int64_t>(DataType::kFloat))});
  });
}
TEST(PassesEliminateNop, Pad) {
  expect_nop_removed([](GraphBuilder& b, const std::string& x) {
    return b.node("Pad", {x, ints(b, "p", {0, 0, 0, 0})});
  });
}
TEST(PassesEliminateNop, Slice) {
  expect_nop_removed([](GraphBuilder& b, const std::string& x) {
    return b.node("Slice", {x, ints(b, "st", {0, 0}), ints(b, "en", {INT64_MAX, 3}), ints(b, "ax", {0, -1})});
  });
}
TEST(PassesEliminateNop, Expand) {
  expect_nop_removed([](GraphBuilder& b, const std::string& x) {
    return b.node("Expand", {x, ints(b, "s", {2, 3})});
  });
}
TEST(PassesEliminateNop, ConcatOfOne) {
  expect_nop_removed([](GraphBuilder& b, const std::string& x) {
    return b.node("Concat", {x}, {Attribute::of_int("axis", 0)});
  });
}

TEST(PassesFoldUnsqueezeSqueeze, CancelsPair) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    auto u = b.node("Unsqueeze", {x, ints(b, "a1", {0, -1})});
    auto s = b.node("Squeeze", {u, ints(b, "a2", {3, 0})});
    b.output(b.node("Relu", {s}), F({2, 3}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_TRUE(fired(o, "fold_unsqueeze_squeeze"));
  EXPECT_EQ(o.optimized.graph.nodes.size(), 1u);
}

TEST(PassesFuseConsecutiveTransposes, Composes) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3, 4}));
    auto t1 = b.node("Transpose", {x}, {Attribute::of_ints("perm", {1, 0, 2})});
    auto t2 = b.node("Transpose", {t1}, {Attribute::of_ints("perm", {0, 2, 1})});
    b.output(b.node("Relu", {t2}), F({3, 4, 2}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_TRUE(fired(o, "fuse_consecutive_transposes"));
  EXPECT_EQ(count(o.optimized.graph, "Transpose"), 1);
}

TEST(PassesFuseConsecutiveTransposes, InversePairVanishes) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3, 4}));
    auto t1 = b.node("Transpose", {x}, {Attribute::of_ints("perm", {1, 2, 0})});
    auto t2 = b.node("Transpose", {t1}, {Attribute::of_ints("perm", {2, 0, 1})});
    b.output(b.node("Relu", {t2}), F({2, 3, 4}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_EQ(count(o.optimized.graph, "Transpose"), 0);
}

TEST(PassesFuseConsecutiveReshapes, KeepsLast) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3, 4}));
    auto r1 = b.node("Reshape", {x, ints(b, "s1", {6, 4})});
    auto r2 = b.node("Reshape", {r1, ints(b, "s2", {4, -1})});
    b.output(b.node("Relu", {r2}), F({4, 6}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_TRUE(fired(o, "fuse_consecutive_reshapes"));
  EXPECT_EQ(count(o.optimized.graph, "Reshape"), 1);
}

// x [1,3,6,6] -> Conv (4 filters 3x3, pad 1) -> `after` -> output.
ir::Model conv_then(const std::function<std::string(GraphBuilder&, const std::string&)>& after,
                    bool bias = true, int64_t opset = 17) {
  return make_model(opset, [&](GraphBuilder& b) {
    auto x = b.input("x", F({1, 3, 6, 6}));
    auto w = b.random_normal("W", {4, 3, 3, 3}, 0.5f);
    std::vector<std::string> in = {x, w};
    if (bias) in.push_back(b.random_normal("B", {4}, 0.5f));
    auto c = b.node("Conv", in, {Attribute::of_ints("pads", {1, 1, 1, 1})});
    b.output(after(b, c), F({1, 4, 6, 6}));
  });
}

TEST(PassesFoldConvBatchnorm, Folds) {
  ir::Model m = conv_then([](GraphBuilder& b, const std::string& c) {
    auto scale = floats(b, "scale", {4}, {1.5f, 0.5f, -1.0f, 2.0f});
    auto bias = floats(b, "bias", {4}, {0.1f, -0.2f, 0.3f, 0.0f});
    auto mean = floats(b, "mean", {4}, {0.2f, 0.1f, -0.3f, 1.0f});
    auto var = floats(b, "var", {4}, {1.0f, 0.25f, 2.0f, 0.5f});
    return b.node("BatchNormalization", {c, scale, bias, mean, var}, {Attribute::of_float("epsilon", 1e-3f)});
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_TRUE(fired(o, "fold_conv_batchnorm"));
  EXPECT_EQ(count(o.optimized.graph, "BatchNormalization"), 0);
  EXPECT_EQ(count(o.optimized.graph, "Conv"), 1);
}

TEST(PassesFoldConvAdd, FoldsPerChannelBias) {
  ir::Model m = conv_then(
      [](GraphBuilder& b, const std::string& c) {
        return b.node("Add", {floats(b, "c", {4, 1, 1}, {1, 2, 3, 4}), c});
      },
      false);
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_TRUE(fired(o, "fold_conv_add"));
  EXPECT_EQ(count(o.optimized.graph, "Add"), 0);
}

TEST(PassesFoldConvAdd, KeepsNonChannelBroadcast) {
  ir::Model m = conv_then([](GraphBuilder& b, const std::string& c) {
    return b.node("Add", {c, floats(b, "c", {6}, {1, 2, 3, 4, 5, 6})});  // along the width
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_EQ(count(o.optimized.graph, "Add"), 1);
}

TEST(PassesFoldConvMul, FoldsPerChannelScale) {
  ir::Model m = conv_then([](GraphBuilder& b, const std::string& c) {
    return b.node("Mul", {c, floats(b, "c", {1, 4, 1, 1}, {0.5f, -2, 3, 1})});
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_TRUE(fired(o, "fold_conv_mul"));
  EXPECT_EQ(count(o.optimized.graph, "Mul"), 0);
}

TEST(PassesEliminateCommonSubexpressions, MergesIdenticalNodes) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    auto a = b.node("LeakyRelu", {x}, {Attribute::of_float("alpha", 0.2f)});
    auto c = b.node("LeakyRelu", {x}, {Attribute::of_float("alpha", 0.2f)});
    auto d = b.node("LeakyRelu", {x}, {Attribute::of_float("alpha", 0.3f)});  // other attributes: kept
    b.output(b.node("Add", {b.node("Add", {a, c}), d}), F({2, 3}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kBasic);
  EXPECT_TRUE(fired(o, "eliminate_common_subexpressions"));
  EXPECT_EQ(count(o.optimized.graph, "LeakyRelu"), 2);
}

TEST(PassesEliminateCommonSubexpressions, KeepsRandomDraws) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    auto a = b.node("RandomNormalLike", {x});
    auto c = b.node("RandomNormalLike", {x});
    b.output(b.node("Sub", {a, c}), F({2, 3}));
  });
  optimize(m, rt::cpu_target(OptLevel::kBasic));
  EXPECT_EQ(count(m.graph, "RandomNormalLike"), 2);
}

TEST(PassesEliminateIdentity, KeepsDropoutInTrainingModeOrWithReadMask) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    auto on = b.initializer(ir::make_tensor("on", DataType::kBool, {}, std::vector<uint8_t>{1}));
    auto d1 = b.node("Dropout", {x, "", on});
    auto d2 = b.nodes("Dropout", {d1}, {}, "with_mask", 2);
    b.output(d2[0], F({2, 3}));
    b.output(d2[1], ir::Type::tensor(DataType::kBool));
  });
  optimize(m, rt::cpu_target(OptLevel::kBasic));
  EXPECT_EQ(count(m.graph, "Dropout"), 2);
}

// ---- Extended level ---------------------------------------------------------------------------------

TEST(PassesFuseMatMulAddToGemm, Fuses) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto a = b.input("a", F({3, 4}));
    auto w = b.random_normal("w", {4, 5}, 1.0f);
    auto bias = b.random_normal("bias", {5}, 1.0f);
    b.output(b.node("Add", {b.node("MatMul", {a, w}), bias}), F({3, 5}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kExtended);
  EXPECT_TRUE(fired(o, "fuse_matmul_add_to_gemm"));
  EXPECT_EQ(count(o.optimized.graph, "Gemm"), 1);
  EXPECT_EQ(o.optimized.graph.nodes.size(), 1u);
}

TEST(PassesFuseMatMulAddToGemm, KeepsBatchedMatMul) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto a = b.input("a", F({2, 3, 4}));
    auto w = b.random_normal("w", {4, 5}, 1.0f);
    auto bias = b.random_normal("bias", {5}, 1.0f);
    b.output(b.node("Add", {b.node("MatMul", {a, w}), bias}), F({2, 3, 5}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kExtended);
  EXPECT_EQ(count(o.optimized.graph, "Gemm"), 0);
}

// ---- Layout level -----------------------------------------------------------------------------------

TEST(PassesFuseMatMulBias, FusesBatchedLinearLayers) {
  // [2, 3, 4] x [4, 5] + bias, with the bias on either side of the Add and as a [1, 5] row too.
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant);
    ir::Model m = make_model(17, [&](GraphBuilder& b) {
      auto a = b.input("a", F({2, 3, 4}));
      auto w = b.random_normal("w", {4, 5}, 1.0f);
      auto bias =
          b.random_normal("bias", variant == 2 ? std::vector<int64_t>{1, 5} : std::vector<int64_t>{5}, 1.0f);
      auto mm = b.node("MatMul", {a, w});
      b.output(b.node("Add",
                      variant == 1 ? std::vector<std::string>{bias, mm} : std::vector<std::string>{mm, bias}),
               F({2, 3, 5}));
    });
    RUN_OR_SKIP(o, m, OptLevel::kLayout);
    EXPECT_TRUE(fired(o, "fuse_matmul_bias"));
    EXPECT_EQ(count(o.optimized.graph, "MatMulBias"), 1);
    EXPECT_EQ(o.optimized.graph.nodes.size(), 1u);
  }
}

TEST(PassesFuseMatMulBias, KeepsWhatItCannotTake) {
  // A product read twice, a bias per row (not per column), and non-constant weights stay as they are.
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto a = b.input("a", F({2, 3, 4}));
    auto w = b.random_normal("w", {4, 5}, 1.0f);
    auto mm = b.node("MatMul", {a, w});
    b.output(b.node("Add", {mm, b.random_normal("bias", {5}, 1.0f)}), F({2, 3, 5}));
    b.output(mm, F({2, 3, 5}));
    auto mm2 = b.node("MatMul", {a, b.random_normal("w2", {4, 3}, 1.0f)});
    b.output(b.node("Add", {mm2, b.random_normal("col", {3, 1}, 1.0f)}), F({2, 3, 3}));
    auto wi = b.input("w_in", F({4, 5}));
    b.output(b.node("Add", {b.node("MatMul", {a, wi}), b.random_normal("bias3", {5}, 1.0f)}), F({2, 3, 5}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kLayout);
  EXPECT_FALSE(fired(o, "fuse_matmul_bias"));
  EXPECT_EQ(count(o.optimized.graph, "MatMulBias"), 0);
}

TEST(PassesFuseMatMulBias, OnlyAtTheLayoutLevel) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto a = b.input("a", F({2, 3, 4}));
    b.output(b.node("Add", {b.node("MatMul", {a, b.random_normal("w", {4, 5}, 1.0f)}),
                            b.random_normal("bias", {5}, 1.0f)}),
             F({2, 3, 5}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kExtended);
  EXPECT_EQ(count(o.optimized.graph, "MatMulBias"), 0);
}

// x * 0.5 * (1 + erf(x / sqrt 2)), in the three arrangements exporters use.
ir::Model gelu_model(int64_t opset, int variant) {
  return make_model(opset, [&](GraphBuilder& b) {
    auto x = b.input("x", F({2, 8}));
    auto d = variant == 2 ? b.node("Mul", {x, scalar(b, "inv_sqrt2", 0.70710678f)})
                          : b.node("Div", {x, scalar(b, "sqrt2", 1.4142135f)});
    auto e = b.node("Add", {b.node("Erf", {d}), scalar(b, "one", 1.0f)});
    std::string y;
    if (variant == 0) y = b.node("Mul", {b.node("Mul", {x, e}), scalar(b, "half", 0.5f)});
    if (variant == 1) y = b.node("Mul", {x, b.node("Mul", {e, scalar(b, "half", 0.5f)})});
    if (variant == 2) y = b.node("Mul", {b.node("Mul", {x, scalar(b, "half", 0.5f)}), e});
    b.output(b.node("Relu", {y}), F({2, 8}));
  });
}

TEST(PassesFuseGelu, FusesEveryArrangement) {
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant);
    RUN_OR_SKIP(o, gelu_model(17, variant), OptLevel::kExtended);
    EXPECT_TRUE(fired(o, "fuse_gelu"));
    EXPECT_EQ(count(o.optimized.graph, "Gelu"), 1);
    EXPECT_EQ(count(o.optimized.graph, "Erf"), 0);
    EXPECT_EQ(o.optimized.graph.nodes.size(), 2u);
    EXPECT_EQ(o.optimized.graph.nodes[0].domain, "com.microsoft");  // opset 17 has no Gelu
  }
}

TEST(PassesFuseGelu, UsesStandardGeluFromOpset20) {
  RUN_OR_SKIP(o, gelu_model(20, 0), OptLevel::kExtended);
  EXPECT_EQ(count(o.optimized.graph, "Gelu"), 1);
}

// The decomposed layer normalisation over the last axis of x [2,3,8].
ir::Model layer_norm_model(bool mul_square) {
  return make_model(17, [&](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3, 8}));
    auto axes = Attribute::of_ints("axes", {-1});
    auto mean = b.node("ReduceMean", {x}, {axes});
    auto d = b.node("Sub", {x, mean});
    auto sq = mul_square ? b.node("Mul", {d, d}) : b.node("Pow", {d, scalar(b, "two", 2.0f)});
    auto var = b.node("ReduceMean", {sq}, {axes});
    auto s = b.node("Sqrt", {b.node("Add", {var, scalar(b, "eps", 1e-5f)})});
    auto n = b.node("Div", {d, s});
    auto g = b.node("Mul", {n, b.random_normal("gamma", {8}, 1.0f)});
    b.output(b.node("Add", {g, b.random_normal("beta", {8}, 1.0f)}), F({2, 3, 8}));
  });
}

TEST(PassesFuseLayerNorm, Fuses) {
  for (bool mul_square : {false, true}) {
    RUN_OR_SKIP(o, layer_norm_model(mul_square), OptLevel::kExtended);
    EXPECT_TRUE(fired(o, "fuse_layer_norm"));
    EXPECT_EQ(count(o.optimized.graph, "LayerNormalization"), 1);
    EXPECT_EQ(o.optimized.graph.nodes.size(), 1u);
  }
}

ir::Model skip_layer_norm_model(bool sum_is_output) {
  return make_model(17, [&](GraphBuilder& b) {
    auto a = b.input("a", F({2, 3, 8}));
    auto c = b.input("c", F({2, 3, 8}));
    auto sum = b.node("Add", {a, c}, {}, "sum");
    auto ln = b.node("LayerNormalization",
                     {sum, b.random_normal("gamma", {8}, 1.0f), b.random_normal("beta", {8}, 1.0f)});
    b.output(ln, F({2, 3, 8}));
    if (sum_is_output) b.output(sum, F({2, 3, 8}));
  });
}

TEST(PassesFuseSkipLayerNorm, Fuses) {
  RUN_OR_SKIP(o, skip_layer_norm_model(false), OptLevel::kExtended);
  EXPECT_TRUE(fired(o, "fuse_skip_layer_norm"));
  EXPECT_EQ(count(o.optimized.graph, "SkipLayerNormalization"), 1);
  EXPECT_EQ(o.optimized.graph.nodes.size(), 1u);
}

TEST(PassesFuseSkipLayerNorm, ReturnsTheSumWhenRead) {
  RUN_OR_SKIP(o, skip_layer_norm_model(true), OptLevel::kExtended);
  ASSERT_EQ(o.optimized.graph.nodes.size(), 1u);
  ASSERT_EQ(o.optimized.graph.nodes[0].outputs.size(), 4u);
  EXPECT_EQ(o.optimized.graph.nodes[0].outputs[3], "sum");
}

TEST(PassesFuseBiasGelu, Fuses) {
  ir::Model m = make_model(17,
                           [](GraphBuilder& b) {
                             auto x = b.input("x", F({2, 3, 8}));
                             auto s = b.node("Add", {x, b.random_normal("bias", {8}, 1.0f)});
                             b.output(b.nodes("Gelu", {s}, {}, "gelu", 1, "com.microsoft")[0], F({2, 3, 8}));
                           },
                           {{"com.microsoft", 1}});
  RUN_OR_SKIP(o, m, OptLevel::kExtended);
  EXPECT_TRUE(fired(o, "fuse_bias_gelu"));
  EXPECT_EQ(count(o.optimized.graph, "BiasGelu"), 1);
  EXPECT_EQ(o.optimized.graph.nodes.size(), 1u);
}

TEST(PassesFuseConvActivation, FusesEachActivation) {
  std::vector<std::function<std::string(GraphBuilder&, const std::string&)>> acts = {
      [](GraphBuilder& b, const std::string& c) { return b.node("Relu", {c}); },
      [](GraphBuilder& b, const std::string& c) { return b.node("Sigmoid", {c}); },
      [](GraphBuilder& b, const std::string& c) { return b.node("Tanh", {c}); },
      [](GraphBuilder& b, const std::string& c) {
        return b.node("LeakyRelu", {c}, {Attribute::of_float("alpha", 0.3f)});
      },
      [](GraphBuilder& b, const std::string& c) {
        return b.node("HardSigmoid", {c},
                      {Attribute::of_float("alpha", 0.3f), Attribute::of_float("beta", 0.4f)});
      },
      [](GraphBuilder& b, const std::string& c) {
        return b.node("Clip", {c, scalar(b, "lo", -0.5f), scalar(b, "hi", 0.7f)});
      },
  };
  for (size_t k = 0; k < acts.size(); ++k) {
    SCOPED_TRACE(k);
    RUN_OR_SKIP(o, conv_then(acts[k]), OptLevel::kExtended);
    EXPECT_TRUE(fired(o, "fuse_conv_activation"));
    ASSERT_EQ(o.optimized.graph.nodes.size(), 1u);
    EXPECT_EQ(o.optimized.graph.nodes[0].op_type, "FusedConv");
    // The fused node names the two ONNX nodes it replaced, for the profiler.
    std::string from;
    for (const auto& [key, value] : o.optimized.graph.nodes[0].metadata_props)
      if (key == tessera::rt::kFusedFromKey) from = value;
    EXPECT_EQ(std::count(from.begin(), from.end(), ','), 1) << from;
    EXPECT_NE(from.find("Conv"), std::string::npos) << from;
  }
}

TEST(PassesFuseMatMulScaleTranspose, AbsorbsTransposeAndScales) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto q = b.input("q", F({2, 3, 4}));
    auto k = b.input("k", F({2, 5, 4}));
    auto kt = b.node("Transpose", {k}, {Attribute::of_ints("perm", {0, 2, 1})});
    auto qs = b.node("Mul", {q, scalar(b, "s", 2.0f)});
    auto mm = b.node("MatMul", {qs, kt});
    b.output(b.node("Div", {mm, scalar(b, "d", 8.0f)}), F({2, 3, 5}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kExtended);
  EXPECT_TRUE(fired(o, "fuse_matmul_scale_transpose"));
  ASSERT_EQ(o.optimized.graph.nodes.size(), 1u);
  const ir::Node& n = o.optimized.graph.nodes[0];
  EXPECT_EQ(n.op_type, "FusedMatMul");
  EXPECT_EQ(n.attr("transB")->i, 1);
  EXPECT_FLOAT_EQ(n.attr("alpha")->f, 0.25f);
}

TEST(PassesFuseMatMulScaleTranspose, TransposedA) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto a = b.input("a", F({4, 3}));
    auto w = b.input("w", F({4, 5}));
    b.output(b.node("MatMul", {b.node("Transpose", {a}, {Attribute::of_ints("perm", {1, 0})}), w}),
             F({3, 5}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kExtended);
  ASSERT_EQ(o.optimized.graph.nodes.size(), 1u);
  EXPECT_EQ(o.optimized.graph.nodes[0].attr("transA")->i, 1);
}

// ---- Whole pipeline ---------------------------------------------------------------------------------

TEST(PassesPipeline, SecondRunChangesNothing) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({1, 3, 6, 6}));
    auto w = b.random_normal("W", {4, 3, 3, 3}, 0.5f);
    auto c = b.node("Conv", {x, w}, {Attribute::of_ints("pads", {1, 1, 1, 1})});
    auto m2 = b.node("Mul", {c, floats(b, "s", {4, 1, 1}, {1, 2, 3, 4})});
    auto r = b.node("Relu", {b.node("Identity", {m2})});
    auto f = b.node("Reshape", {r, ints(b, "shape", {1, -1})});
    b.output(b.node("Reshape", {f, ints(b, "shape2", {4, 36})}), F({4, 36}));
  });
  RUN_OR_SKIP(o, m, OptLevel::kExtended);  // run_both checks idempotence
  EXPECT_FALSE(o.log.empty());
}

TEST(PassesPipeline, ListsEveryRuleInOrder) {
  auto rules = list_rules();
  std::vector<std::string> names;
  for (const auto& r : rules) names.push_back(r.name);
  for (const char* want : {"fold_constants",
                           "fold_shape",
                           "eliminate_identity",
                           "eliminate_dead_nodes",
                           "eliminate_nop",
                           "fold_conv_batchnorm",
                           "fold_conv_add",
                           "fold_conv_mul",
                           "eliminate_common_subexpressions",
                           "fuse_consecutive_transposes",
                           "fuse_consecutive_reshapes",
                           "fold_unsqueeze_squeeze",
                           "fuse_matmul_add_to_gemm",
                           "fuse_gelu",
                           "fuse_layer_norm",
                           "fuse_conv_activation",
                           "fuse_matmul_scale_transpose",
                           "fuse_skip_layer_norm",
                           "fuse_bias_gelu",
                           "fuse_matmul_bias",
                           "to_blocked_layout"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (size_t i = 1; i < rules.size(); ++i) {
    bool same_level = rules[i - 1].level == rules[i].level;
    EXPECT_TRUE(same_level ? rules[i - 1].order <= rules[i].order : rules[i - 1].level < rules[i].level);
  }
  EXPECT_EQ(rules.front().name, "fold_constants");
}

// ---- Subgraphs --------------------------------------------------------------------------------------

// If(cond) with branches reading the main-graph value `t` (produced by an Identity of x) and holding an
// Identity of their own whose output is the branch output.
ir::Model if_model() {
  return make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    auto cond = b.input("cond", ir::Type::tensor(DataType::kBool, ir::Shape{}));
    auto t = b.node("Identity", {x}, {}, "t");
    auto dead_outside = b.node("Neg", {x}, {}, "only_read_inside");
    auto branch = [&](const std::string& op, const std::string& name) {
      ir::Graph g;
      g.name = name;
      GraphBuilder sb(g);
      auto r = sb.node(op, {t}, {}, name + "_op");
      auto two = sb.node("Constant", {}, {Attribute::of_float("value_float", 2.0f)}, name + "_two");
      auto s = sb.node("Add", {sb.node("Mul", {r, two}, {}, name + "_mul"), dead_outside}, {}, name + "_add");
      sb.output(sb.node("Identity", {s}, {}, name + "_out"), F({2, 3}));
      sb.node("Relu", {t}, {}, name + "_dead");  // read by nobody: removed
      return g;
    };
    auto y = b.nodes("If", {cond},
                     {Attribute::of_graph("then_branch", branch("Relu", "then")),
                      Attribute::of_graph("else_branch", branch("Neg", "else"))})[0];
    b.output(y, F({2, 3}));
  });
}

TEST(PassesSubgraphs, RewiresOuterReadsAndKeepsBranchOutputs) {
  RUN_OR_SKIP(o, if_model(), OptLevel::kExtended);
  const ir::Graph& g = o.optimized.graph;
  EXPECT_EQ(count(g, "Identity"), 0);
  EXPECT_EQ(count(g, "Neg"), 1);  // only read inside the branches: a use all the same
  const ir::Node* if_node = nullptr;
  for (const auto& n : g.nodes)
    if (n.op_type == "If") if_node = &n;
  ASSERT_NE(if_node, nullptr);
  for (const char* name : {"then_branch", "else_branch"}) {
    const ir::Graph& sub = *if_node->attr(name)->graphs[0];
    ASSERT_EQ(sub.outputs.size(), 1u);
    EXPECT_EQ(sub.outputs[0].name,
              std::string(name == std::string("then_branch") ? "then" : "else") + "_out");
    EXPECT_EQ(count(sub, "Identity"), 0);
    EXPECT_EQ(sub.nodes.size(), 3u);  // the dead Relu went, the Constant became an initializer
    EXPECT_EQ(count(sub, "Constant"), 0);
    EXPECT_EQ(sub.initializers.size(), 1u);
    EXPECT_EQ(sub.nodes[0].inputs[0], "x");  // read `t` before the Identity went
  }
}

TEST(PassesSubgraphs, PreservesIdsOfUntouchedNodes) {
  ir::Model m = make_model(17, [](GraphBuilder& b) {
    auto x = b.input("x", F({2, 3}));
    auto r = b.node("Relu", {b.node("Identity", {x})}, {}, "relu");
    b.output(b.node("Neg", {r}, {}, "neg"), F({2, 3}));
  });
  ir::NodeId relu = m.graph.find_node(std::string_view("relu"))->id;
  ir::NodeId neg = m.graph.find_node(std::string_view("neg"))->id;
  optimize(m, rt::cpu_target(OptLevel::kExtended));
  ASSERT_NE(m.graph.find_node(std::string_view("relu")), nullptr);
  EXPECT_EQ(m.graph.find_node(std::string_view("relu"))->id, relu);
  EXPECT_EQ(m.graph.find_node(std::string_view("neg"))->id, neg);
}

}  // namespace
}  // namespace tessera::passes

// ---- Real models (a developer check, run when TESSERA_PASSES_MODEL names an .onnx file) ------------

namespace tessera::passes {
namespace {

TEST(PassesRealModel, OptimizeAndReport) {
  const char* path = std::getenv("TESSERA_PASSES_MODEL");
  if (!path) GTEST_SKIP() << "set TESSERA_PASSES_MODEL to a model file";
  ir::Model m = onnx::load_model(path);
  inline_functions(m);
  size_t before = m.graph.nodes.size();
  auto start = std::chrono::steady_clock::now();
  auto log = optimize(m, rt::cpu_target(OptLevel::kExtended));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::map<std::string, int> per_rule;
  for (const auto& r : log) per_rule[r.rule]++;
  std::printf("%zu nodes -> %zu in %.1f ms\n", before, m.graph.nodes.size(), ms);
  for (const auto& [rule, n] : per_rule) std::printf("  %-34s %d\n", rule.c_str(), n);
  ir::Model again = m;
  EXPECT_TRUE(optimize(again, rt::cpu_target(OptLevel::kExtended)).empty());
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
}

}  // namespace
}  // namespace tessera::passes
