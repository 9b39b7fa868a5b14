// `tessera run` and `tessera profile` as a user runs them: inputs from files, folders and random,
// outputs written, the profile table and report.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "io/npy.h"
#include "ir/builder.h"
#include "onnx/data_value.h"
#include "onnx/onnx_io.h"

namespace fs = std::filesystem;
namespace ir = tessera::ir;

namespace {

using Result = CliRun;
Result tessera(const std::string& args) {
  return run_tessera(args);
}

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_run_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // y = x * x + x, batch dimension free.
    ir::Model m;
    m.ir_version = 8;
    m.opset_imports = {{"", 17}};
    ir::GraphBuilder b(m.graph);
    auto x =
        b.input("x", ir::Type::tensor(ir::DataType::kFloat, ir::Shape{ir::Dim::symbol("n"), ir::Dim::of(4)}));
    auto sq = b.node("Mul", {x, x}, {}, "square");
    auto y = b.node("Add", {sq, x}, {}, "plus_x");
    b.output(y, ir::Type::tensor(ir::DataType::kFloat));
    model_ = (dir_ / "m.onnx").string();
    tessera::onnx::save_model(m, model_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ir::Tensor input() const {
    return ir::make_tensor<float>("x", ir::DataType::kFloat, {2, 4}, {0, 1, 2, 3, -1, -2, 0.5f, 4});
  }

  fs::path dir_;
  std::string model_;
};

TEST_F(RunCli, RandomInputsReportLatencyMemoryAndOutputs) {
  Result r = tessera("run " + model_ + " -n 3 --shape x=5x4");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("latency  mean"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory   peak"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output 0 'plus_x': float[5,4]"), std::string::npos) << r.out;
}

TEST_F(RunCli, NpyInputAndOutputDir) {
  tessera::io::write_npy(input(), dir_ / "x.npy");
  Result r = tessera("run " + model_ + " --input x=" + (dir_ / "x.npy").string() + " -n 1 -o " +
                     (dir_ / "out").string());
  ASSERT_EQ(r.status, 0) << r.out;
  ir::Tensor y = tessera::io::read_npy(dir_ / "out" / "output_0.npy");
  ASSERT_EQ(y.dims, (std::vector<int64_t>{2, 4}));
  ir::Tensor x = input();
  auto xs = x.as<float>();
  auto ys = y.as<float>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_FLOAT_EQ(ys[i], xs[i] * xs[i] + xs[i]);
  auto index = nlohmann::json::parse(std::ifstream(dir_ / "out" / "outputs.json"));
  EXPECT_EQ(index["plus_x"], "output_0.npy");
}

TEST_F(RunCli, ConformanceLayoutFolder) {
  fs::create_directories(dir_ / "set");
  tessera::onnx::DataValue v;
  v.tensor = input();
  tessera::onnx::write_data_value(v, dir_ / "set" / "input_0.pb");
  Result r = tessera("run " + model_ + " --input-dir " + (dir_ / "set").string() + " -n 1 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outputs"][0]["name"], "plus_x");
  EXPECT_NE(j["outputs"][0]["summary"].get<std::string>().find("float[2,4]"), std::string::npos);
  EXPECT_GT(j["memory"]["planner_lower_bound_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(j["memory"]["prepared_weight_bytes"], 0);  // Add and Mul keep no weights
}

TEST_F(RunCli, BadInputsAreNamed) {
  Result missing = tessera("run " + model_ + " --input x=" + (dir_ / "nope.npy").string());
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.out.find("nope.npy"), std::string::npos) << missing.out;
  Result unknown = tessera("run " + model_ + " --shape y=1x4");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.out.find("no input 'y'"), std::string::npos) << unknown.out;
  Result rank = tessera("run " + model_ + " --shape x=4");
  EXPECT_EQ(rank.status, 2);
  EXPECT_NE(rank.out.find("rank 1 given, the input has rank 2"), std::string::npos) << rank.out;
  Result wrong = tessera("run " + model_ + " --shape x=2x5");
  EXPECT_EQ(wrong.status, 1);
  EXPECT_NE(wrong.out.find("dimension 1 must be 4"), std::string::npos) << wrong.out;
}

// The conformance suite's test_tile with no inputs given: the integer `repeats` gets small non-negative
// values (it used to get [0, 100), a 15 GB output), every random input is named with its type, shape
// and range, and a tensor past --memory-limit stops the run before it is allocated, with a hint.
TEST_F(RunCli, RandomTileInputsAreSmallAndNamedAndTheMemoryLimitHolds) {
  const std::string archive = TESSERA_CONFORMANCE_ARCHIVE;
  if (!fs::exists(archive)) GTEST_SKIP() << "no conformance archive at " << archive;
  std::string untar = "tar xzf '" + archive + "' -C '" + dir_.string() + "' node/test_tile/model.onnx";
  ASSERT_EQ(std::system(untar.c_str()), 0) << untar;
  std::string model = (dir_ / "node/test_tile/model.onnx").string();

  Result r = tessera("run " + model + " -n 1 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("random input 'x': float[2,3,4,5] uniform in [-1, 1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("random input 'y': int64[4] uniform in [0, 10)"), std::string::npos) << r.out;

  ir::Tensor repeats = ir::make_tensor<int64_t>("y", ir::DataType::kInt64, {4}, {2, 2, 2, 2});
  tessera::io::write_npy(repeats, dir_ / "repeats.npy");
  // x is 480 bytes, the output 16 times that: the limit of 1 KiB lets the input through, not the output,
  // which the memory plan sizes from the repeats given before anything runs.
  Result limited =
      tessera("run " + model + " -n 1 --input y=" + (dir_ / "repeats.npy").string() + " --memory-limit 1K");
  EXPECT_EQ(limited.status, 1) << limited.out;
  EXPECT_NE(limited.out.find("the run's memory plan (the model's values for these input sizes) needs 7680 "
                             "bytes (7.5 KiB) at node Tile making 'z', more than the limit of 1024 bytes "
                             "(1.0 KiB) for one run: stopped before running (--memory-limit)"),
            std::string::npos)
      << limited.out;
  Result fits =
      tessera("run " + model + " -n 1 --input y=" + (dir_ / "repeats.npy").string() + " --memory-limit 8K");
  EXPECT_EQ(fits.status, 0) << fits.out;
  Result bad = tessera("run " + model + " --memory-limit lots");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("--memory-limit 'lots' is not a size"), std::string::npos) << bad.out;
}

// The memory limit holds for the run as a whole, not only for each tensor, and is checked before the run
// from its memory plan: x * x and x * x + x at --shape x=1000x4 are 16,000 bytes each, under a limit of
// 24K, but live together (at plus_x) they are not, so `run` and `profile` stop before running, naming the
// plan's total and the node; a larger limit lets it through. The planner itself also stops the
// allocation that would cross the limit (MemoryPlanner.TheRunAsAWholeStaysWithinTheLimit).
TEST_F(RunCli, MemoryLimitHoldsForTheWholeRun) {
  for (const char* cmd : {"run", "profile"}) {
    Result r = tessera(std::string(cmd) + " " + model_ + " -n 1 --shape x=1000x4 --memory-limit 24K");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("the run's memory plan (the model's values for these input sizes) needs 32000 bytes "
                         "(31.2 KiB) at node 'plus_x' (Add), more than the limit of 24576 bytes (24.0 KiB) "
                         "for one run: stopped before running"),
              std::string::npos)
        << r.out;
    if (std::string(cmd) == "run") {
      EXPECT_NE(r.out.find("running (--memory-limit)"), std::string::npos) << r.out;
    }
    Result fits = tessera(std::string(cmd) + " " + model_ + " -n 1 --shape x=1000x4 --memory-limit 64K");
    EXPECT_EQ(fits.status, 0) << fits.out;
  }
  // The plan follows the input sizes: 100 rows need 3,200 bytes.
  Result small = tessera("run " + model_ + " -n 1 --shape x=100x4 --memory-limit 24K");
  EXPECT_EQ(small.status, 0) << small.out;
}

// A size shape inference cannot tell from the model alone: y = ConstantOfShape(Shape(x) * 1000) over a
// free n, then y + y. The session keeps the shape chain (n is free), and inference leaves y's size
// unknown; the plan evaluates the chain for the given x (n = 1000: y and y + y are 4,000,000 bytes each)
// and stops the run before it starts. A size only the run can tell (NonZero's) is said to be left out.
TEST_F(RunCli, MemoryPlanEvaluatesShapeChainsOfTheGivenSizes) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", ir::Type::tensor(ir::DataType::kFloat, ir::Shape{ir::Dim::symbol("n")}));
  auto thousand = b.initializer(ir::make_tensor<int64_t>("thousand", ir::DataType::kInt64, {1}, {1000}));
  auto size = b.node("Mul", {b.node("Shape", {x}, {}, "shape"), thousand}, {}, "size");
  auto y = b.node("ConstantOfShape", {size}, {}, "y");
  b.output(b.node("Add", {y, y}, {}, "twice"), ir::Type::tensor(ir::DataType::kFloat));
  b.output(b.node("NonZero", {x}, {}, "nonzero"), ir::Type::tensor(ir::DataType::kInt64));
  const std::string model = (dir_ / "chain.onnx").string();
  tessera::onnx::save_model(m, model);
  Result stopped = tessera("run " + model + " -n 1 --shape x=1000 --memory-limit 6M");
  EXPECT_EQ(stopped.status, 1) << stopped.out;
  EXPECT_NE(stopped.out.find("the run's memory plan (the model's values for these input sizes) needs 8000"),
            std::string::npos)
      << stopped.out;
  EXPECT_NE(stopped.out.find("(1 value whose size cannot be told before running not counted) at node "
                             "'twice' (Add)"),
            std::string::npos)
      << stopped.out;
  Result small = tessera("run " + model + " -n 1 --shape x=100 --memory-limit 6M");
  EXPECT_EQ(small.status, 0) << small.out;
}

// The plan knows a blocked convolution writes its output into its dying residual: three 64 KiB values
// (a, b, and c = conv(b) + a) need 128 KiB at once, not 192, so 150K lets the run through and 120K stops
// it before it runs, naming the plan's 131,072 bytes (first reached at b, when a and b are live).
TEST_F(RunCli, MemoryPlanSharesTheResidualsAllocation) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.tessera", 1}};
  ir::GraphBuilder b(m.graph);
  ir::Shape dims;
  for (int64_t d : {1, 1, 32, 32, 16}) dims.push_back(ir::Dim::of(d));
  auto x = b.input("x", ir::Type::tensor(ir::DataType::kFloat, dims));
  std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", "Relu"),
                                      ir::Attribute::of_int("block", 16)};
  auto conv = [&](const std::string& in, const std::string& name, const std::string& z) {
    std::vector<std::string> ins = {in, b.random_normal("w_" + name, {16, 16, 1, 1}, 0.2f)};
    if (!z.empty()) ins.insert(ins.end(), {"", z});
    return b.nodes("BlockedConv", ins, attrs, name, 1, "com.tessera")[0];
  };
  auto a = conv(x, "a", "");
  auto c = conv(conv(a, "b", ""), "c", a);
  b.output(c, ir::Type::tensor(ir::DataType::kFloat));
  std::string model = (dir_ / "residual.onnx").string();
  tessera::onnx::save_model(m, model);
  Result fits = tessera("run " + model + " -n 1 -O none --memory-limit 150K");
  EXPECT_EQ(fits.status, 0) << fits.out;
  Result stopped = tessera("run " + model + " -n 1 -O none --memory-limit 120K");
  EXPECT_EQ(stopped.status, 1) << stopped.out;
  EXPECT_NE(stopped.out.find("needs 131072 bytes (128.0 KiB) at node 'b' (BlockedConv)"), std::string::npos)
      << stopped.out;
}

TEST_F(RunCli, ProfileTableAndReport) {
  fs::path report = dir_ / "report.json";
  Result r = tessera("profile " + model_ + " -n 4 --optimization none --report " + report.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("square"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sum of layer times"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(std::ifstream(report));
  EXPECT_EQ(j["schema"], "tessera.profile");
  EXPECT_EQ(j["version"], 2);
  ASSERT_EQ(j["layers"].size(), 2u);
  ASSERT_EQ(j["backends"].size(), 1u);
  EXPECT_EQ(j["backends"][0]["backend"], "cpu");
  EXPECT_EQ(j["backends"][0]["nodes"], 2);
  EXPECT_EQ(j["memory"]["devices"][0]["device"], "cpu:0");
  double sum = 0;
  for (const auto& l : j["layers"]) {
    EXPECT_EQ(l["calls_per_run"], 1.0);
    EXPECT_EQ(l["backend"], "cpu");
    EXPECT_EQ(l["device"], "cpu:0");
    EXPECT_EQ(l["kernel"], "dnnl");  // float Add and Mul run on oneDNN
    EXPECT_EQ(l["path"], "");        // ... on its one path
    sum += l["percent"].get<double>();
  }
  EXPECT_NEAR(sum, 100.0, 1e-6);
  EXPECT_EQ(j["settings"]["iterations"], 4);
}

// Each layer's work and roofline bound against the peaks given (docs/profile-report.md): y = x * x + x on
// x [3, 4] is 12 FLOPs per layer; x * x reads x once (96 bytes with its output), + x moves 144.
TEST_F(RunCli, ProfileCountsWorkAgainstTheGivenPeaks) {
  fs::path report = dir_ / "roofline.json";
  Result r =
      tessera("profile " + model_ + " -n 2 --shape x=3x4 -O none --peak-tflops 0.5 --peak-gbps 20 --report " +
              report.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("TFLOP/s     GB/s bound   %bound"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory-bound 2 layers"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(std::ifstream(report));
  EXPECT_EQ(j["roofline"]["peak_source"], "given");
  EXPECT_EQ(j["roofline"]["model_flops"], 24.0);
  for (const auto& l : j["layers"]) {
    EXPECT_EQ(l["flops"], 12.0) << l;
    EXPECT_EQ(l["bytes"], l["name"] == "square" ? 96.0 : 144.0) << l;
    EXPECT_EQ(l["bound"], "memory") << l;
  }
  Result bad = tessera("profile " + model_ + " -n 1 --shape x=3x4 --peak-gbps 0");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("--peak-gbps: must be a number above 0, got '0'"), std::string::npos) << bad.out;
}

// Where no GPU is (this machine, CI): --backend cuda is one clear line and a non-zero status; auto runs
// on the CPU. On a GPU machine both run there.
TEST_F(RunCli, CudaWithoutAGpuIsOneLineAndAutoRunsOnTheCpu) {
  Result cuda = tessera("run " + model_ + " -n 1 --shape x=2x4 --backend cuda");
  if (cuda.status == 0) GTEST_SKIP() << "this machine has a GPU: " << cuda.out;
  EXPECT_NE(cuda.out.find("backend 'cuda' is not available"), std::string::npos) << cuda.out;
  EXPECT_EQ(std::count(cuda.out.begin(), cuda.out.end(), '\n'), 1) << cuda.out;
  Result automatic = tessera("run " + model_ + " -n 1 --shape x=2x4 --backend auto");
  EXPECT_EQ(automatic.status, 0) << automatic.out;
}

TEST_F(RunCli, RulesCanBeListedWithTheirBackendsAndSwitchedOff) {
  Result list = tessera("optimize --list-rules");
  ASSERT_EQ(list.status, 0) << list.out;
  EXPECT_NE(list.out.find("fuse_conv_activation"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("to_blocked_layout                    cpu"), std::string::npos) << list.out;
  Result bad = tessera("run " + model_ + " -n 1 --shape x=2x4 --disable-rule no_such_rule");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("no rewrite rule named 'no_such_rule'"), std::string::npos) << bad.out;
  Result ok =
      tessera("run " + model_ + " -n 1 --shape x=2x4 --disable-rule fold_constants --disable-rule fuse_gelu");
  EXPECT_EQ(ok.status, 0) << ok.out;
}

TEST_F(RunCli, OptimizeSavesAModelThatRunsTheSame) {
  // Conv + Relu fuses at the extended level; the saved model must load, check and give the same output.
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", ir::Type::tensor(ir::DataType::kFloat, ir::Shape{ir::Dim::of(1), ir::Dim::of(2),
                                                                         ir::Dim::of(5), ir::Dim::of(5)}));
  auto w = b.random_normal("w", {3, 2, 3, 3}, 0.5f);
  auto c = b.node("Conv", {x, w}, {ir::Attribute::of_ints("pads", {1, 1, 1, 1})}, "conv");
  b.output(b.node("Relu", {c}, {}, "relu"), ir::Type::tensor(ir::DataType::kFloat));
  std::string in = (dir_ / "convrelu.onnx").string(), out = (dir_ / "opt.onnx").string();
  tessera::onnx::save_model(m, in);
  Result r = tessera("optimize " + in + " -o " + out + " --verbose");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("fuse_conv_activation"), std::string::npos) << r.out;
  ir::Model opt = tessera::onnx::load_model(out);
  ASSERT_EQ(opt.graph.nodes.size(), 1u);
  EXPECT_EQ(opt.graph.nodes[0].op_type, "FusedConv");
  EXPECT_EQ(tessera("check " + out).status, 0);
  Result a = tessera("run " + in + " -n 1 -O none -o " + (dir_ / "a").string());
  Result o = tessera("run " + out + " -n 1 -O none -o " + (dir_ / "o").string());
  ASSERT_EQ(a.status, 0) << a.out;
  ASSERT_EQ(o.status, 0) << o.out;
  ir::Tensor ya = tessera::io::read_npy(dir_ / "a" / "output_0.npy");
  ir::Tensor yo = tessera::io::read_npy(dir_ / "o" / "output_0.npy");
  ASSERT_EQ(ya.dims, yo.dims);
  auto pa = ya.as<float>(), po = yo.as<float>();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_NEAR(pa[i], po[i], 1e-5f);

  Result rules = tessera("optimize --list-rules");
  EXPECT_EQ(rules.status, 0);
  EXPECT_NE(rules.out.find("fold_conv_batchnorm"), std::string::npos) << rules.out;
  EXPECT_EQ(tessera("optimize " + (dir_ / "missing.onnx").string() + " -o " + out).status, 2);
}

}  // namespace
