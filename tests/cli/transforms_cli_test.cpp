// The transformation subcommands as a user runs them: convert fp16 / tensors, sanitize, set-shapes,
// extract. Exit statuses, the log, refusing to overwrite the input, external data.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli_util.h"
#include "ir/builder.h"
#include "onnx/onnx_io.h"

namespace fs = std::filesystem;
using namespace tessera;

namespace {

class TransformCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_tcli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // x [batch, 4] -> MatMul(w) -> Add(Constant + Constant) -> Softmax -> y
  std::string save_model(const std::string& name, const onnx::SaveOptions& so = {}) {
    ir::Model m;
    m.ir_version = 8;
    m.opset_imports = {{"", 17}};
    ir::GraphBuilder b(m.graph);
    auto x = b.input(
        "x", ir::Type::tensor(ir::DataType::kFloat, ir::Shape{ir::Dim::symbol("batch"), ir::Dim::of(4)}));
    auto w = b.random_normal("w", {4, 4}, 0.5f);
    auto c1 = b.node("Constant", {},
                     {ir::Attribute::of_tensor(
                         "value", ir::make_tensor<float>("", ir::DataType::kFloat, {4}, {1, 2, 3, 4}))},
                     "c1");
    auto c2 = b.node("Add", {c1, c1}, {}, "c2");
    auto mm = b.node("MatMul", {x, w}, {}, "mm");
    auto add = b.node("Add", {mm, c2}, {}, "add");
    b.output(b.node("Softmax", {add}, {}, "softmax"),
             ir::Type::tensor(ir::DataType::kFloat, ir::Shape{ir::Dim::symbol("batch"), ir::Dim::of(4)}));
    onnx::save_model(m, path(name), so);
    return path(name);
  }

  static std::string bytes_of(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST_F(TransformCli, HelpOnEverySubcommand) {
  for (const char* sub :
       {"convert fp16", "convert tensors", "convert amp", "sanitize", "set-shapes", "extract",
        "function list", "function create", "function inline", "function delete", "function extract",
        "tool list", "tool add", "tool remove", "tool run", "import-layer"}) {
    CliRun r = run_tessera(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub << r.out;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub << r.out;
  }
}

TEST_F(TransformCli, ConvertFp16SavesACheckedModel) {
  std::string in = save_model("m.onnx");
  CliRun r = run_tessera("convert fp16 " + in + " -o " + path("h.onnx") + " --keep-io-types --verbose");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("initializers converted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Casts added"), std::string::npos) << r.out;
  EXPECT_EQ(run_tessera("check " + path("h.onnx")).status, 0);
  ir::Model h = onnx::load_model(path("h.onnx"));
  EXPECT_EQ(h.graph.find_initializer("w")->dtype, ir::DataType::kFloat16);
}

TEST_F(TransformCli, NeverOverwritesTheInputUnlessInPlace) {
  std::string in = save_model("m.onnx");
  std::string before = bytes_of(in);
  CliRun r = run_tessera("sanitize " + in + " -o " + in);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("is the input model; add --in-place to overwrite it"), std::string::npos) << r.out;
  EXPECT_EQ(bytes_of(in), before);
  r = run_tessera("sanitize " + in + " --in-place");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(bytes_of(in), before);
  EXPECT_EQ(run_tessera("check " + in).status, 0);
}

TEST_F(TransformCli, BadBlockListLeavesNoOutput) {
  std::string in = save_model("m.onnx");
  CliRun r = run_tessera("convert fp16 " + in + " -o " + path("h.onnx") + " --node-block-list add,ghost");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("--node-block-list names node 'ghost', which is not in the model"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(path("h.onnx")));
}

TEST_F(TransformCli, ConvertAmpOnRandomInputsSavesACheckedModel) {
  std::string in = save_model("m.onnx");
  CliRun r = run_tessera("convert amp " + in + " -o " + path("a.onnx") +
                         " --shape x=3x4 --seed 7 --threads 1 --rtol 1e-2 --atol 1e-3 --verbose");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("model runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run 1: the whole model in float16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("search time:"), std::string::npos) << r.out;
  EXPECT_EQ(run_tessera("check " + path("a.onnx")).status, 0);
  // Inputs and outputs stay float32.
  ir::Model a = onnx::load_model(path("a.onnx"));
  EXPECT_EQ(a.graph.inputs[0].type.elem, ir::DataType::kFloat);
  EXPECT_EQ(a.graph.outputs[0].type.elem, ir::DataType::kFloat);
}

TEST_F(TransformCli, ExternalDataStaysExternal) {
  onnx::SaveOptions so;
  so.external_data = onnx::SaveOptions::ExternalData::kExternal;
  so.external_threshold = 16;
  std::string in = save_model("ext.onnx", so);
  ASSERT_TRUE(fs::exists(path("ext.onnx.data")));
  CliRun r = run_tessera("convert fp16 " + in + " -o " + path("ext16.onnx"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(fs::exists(path("ext16.onnx.data")));
  ir::Model h = onnx::load_model(path("ext16.onnx"));
  ASSERT_TRUE(h.graph.find_initializer("w")->external.has_value());
  EXPECT_EQ(h.graph.find_initializer("w")->dtype, ir::DataType::kFloat16);
}

// A model over protobuf's 2 GiB limit: x [batch, 1024] -> MatMul(w [1024, 537600] float32, 2.2 GB of
// external data) -> Add(Constant + Constant) -> y. The weights are zeros in a sparse file, and saving
// writes runs of zeros as holes, so the test costs page cache and CPU, not 2.2 GB of disk per model.
// Every transformation reads it and writes its result (over 2 GiB except fp16's 1.1 GB) with external
// data; each result loads, passes both checkers and is itself sparse.
TEST_F(TransformCli, ModelsOver2GiBWithExternalDataWorkThroughout) {
  constexpr int64_t kRows = 1024, kCols = 537600;  // 2,202,009,600 bytes of float32
  auto start = std::chrono::steady_clock::now();
  { std::ofstream create(path("w.bin")); }
  fs::resize_file(path("w.bin"), kRows * kCols * 4);  // a hole
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  m.base_dir = dir_;
  m.graph.name = "big";
  ir::GraphBuilder b(m.graph);
  ir::Type io =
      ir::Type::tensor(ir::DataType::kFloat, ir::Shape{ir::Dim::symbol("batch"), ir::Dim::of(kRows)});
  auto x = b.input("x", io);
  ir::Tensor w;
  w.name = "w";
  w.dtype = ir::DataType::kFloat;
  w.dims = {kRows, kCols};
  w.external = ir::ExternalData{"w.bin", 0, kRows * kCols * 4, {}};
  auto wname = b.initializer(std::move(w));
  auto c1 = b.node(
      "Constant", {},
      {ir::Attribute::of_tensor("value", ir::make_tensor<float>("", ir::DataType::kFloat, {1}, {0.5f}))},
      "c1");
  auto c2 = b.node("Add", {c1, c1}, {}, "c2");
  auto mm = b.node("MatMul", {x, wname}, {}, "mm");
  b.output(b.node("Add", {mm, c2}, {}, "y"),
           ir::Type::tensor(ir::DataType::kFloat, ir::Shape{ir::Dim::symbol("batch"), ir::Dim::of(kCols)}));
  onnx::save_model(m, path("big.onnx"));  // kKeep: the weights go to big.onnx.data
  fs::remove(path("w.bin"));
  auto disk = [](const std::string& p) {  // bytes the file really takes
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_blocks) * 512 : int64_t{-1};
  };
  ASSERT_GT(fs::file_size(path("big.onnx.data")), uint64_t{2} << 30);
  EXPECT_LT(disk(path("big.onnx.data")), 1 << 20);

  std::string in = path("big.onnx");
  struct Case {
    std::string out, args;
    ir::DataType w;
  };
  std::vector<Case> cases = {{"f16.onnx", "convert fp16 " + in + " --keep-io-types", ir::DataType::kFloat16},
                             {"san.onnx", "sanitize " + in, ir::DataType::kFloat},
                             {"cut.onnx", "extract " + in + " --inputs x --outputs mm", ir::DataType::kFloat},
                             {"shaped.onnx", "set-shapes " + in + " --shape x=2x1024", ir::DataType::kFloat}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    CliRun r = run_tessera(c.args + " -o " + path(c.out));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(run_tessera("check " + path(c.out)).status, 0);
    ir::Model out = onnx::load_model(path(c.out));
    const ir::Tensor* t = out.graph.find_initializer("w");
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(t->external.has_value());
    EXPECT_EQ(t->dtype, c.w);
    EXPECT_EQ(t->bytes().size(), static_cast<size_t>(kRows * kCols * (c.w == ir::DataType::kFloat ? 4 : 2)));
    EXPECT_LT(fs::file_size(path(c.out)), uint64_t{1} << 20);  // the graph; the weights are external
    EXPECT_LT(disk(path(c.out) + ".data"), 1 << 20);
    if (std::system("/usr/bin/python3 -c 'import onnx' >/dev/null 2>&1") == 0) {
      // A path, not the bytes: onnx's own checker and shape inference on a model over 2 GiB.
      std::string cmd =
          "/usr/bin/python3 -c 'import onnx,sys; onnx.checker.check_model(sys.argv[1], "
          "full_check=True)' " +
          path(c.out) + " 2>&1";
      EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
  }
  ir::Model san = onnx::load_model(path("san.onnx"));
  EXPECT_EQ(san.graph.nodes.size(), 2u);  // c1 + c1 folded
  ir::Model shaped = onnx::load_model(path("shaped.onnx"));
  EXPECT_EQ(shaped.graph.inputs[0].type.shape->at(0).value, 2);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("seconds", std::to_string(seconds));
  std::printf("over-2-GiB model: load, 4 transformations, checks: %.1f s\n", seconds);
}

TEST_F(TransformCli, SetShapesExtractAndTensors) {
  std::string in = save_model("m.onnx");
  CliRun r = run_tessera("set-shapes " + in + " -o " + path("s.onnx") + " --shape x=8x4");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("value types stored"), std::string::npos) << r.out;
  r = run_tessera("set-shapes " + in + " -o " + path("s2.onnx") + " --dim-param x:7=n");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("axis 7 is out of range for input 'x' of rank 2"), std::string::npos) << r.out;
  r = run_tessera("extract " + in + " -o " + path("e.onnx") + " --inputs mm --outputs softmax");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(run_tessera("check " + path("e.onnx")).status, 0);
  r = run_tessera("extract " + in + " -o " + path("e2.onnx") + " --inputs c2 --outputs softmax");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("the cut does not separate the graph"), std::string::npos) << r.out;
  r = run_tessera("convert tensors " + in + " -o " + path("t.onnx") + " --to float16 --initializers '^w$'");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("tensors converted"), std::string::npos) << r.out;
}

TEST_F(TransformCli, FunctionCreateFindsRepeatedLayers) {
  // x [2, 8] -> 3 x layer.L/{MatMul, Add, Relu} -> Tanh: --find-repeats makes one function of the layers,
  // --scope one per matching name; a model without repeats is refused and nothing is written.
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto type = ir::Type::tensor(ir::DataType::kFloat, ir::Shape{ir::Dim::of(2), ir::Dim::of(8)});
  std::string v = b.input("x", type);
  for (int l = 0; l < 3; ++l) {
    std::string p = "layer." + std::to_string(l) + "/";
    v = b.node("MatMul", {v, b.random_normal(p + "w", {8, 8}, 0.4f)}, {}, p + "mm");
    v = b.node("Add", {v, b.random_normal(p + "b", {8}, 0.4f)}, {}, p + "add");
    v = b.node("Relu", {v}, {}, p + "relu");
  }
  b.output(b.node("Tanh", {v}, {}, "tanh"), type);
  onnx::save_model(m, path("layers.onnx"));
  CliRun r = run_tessera("function create " + path("layers.onnx") + " -o " + path("f.onnx") +
                         " --name Layer --find-repeats");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("groups replaced by calls           3"), std::string::npos) << r.out;
  EXPECT_EQ(run_tessera("check " + path("f.onnx")).status, 0);
  EXPECT_EQ(onnx::load_model(path("f.onnx")).graph.nodes.size(), 4u);
  r = run_tessera("function create " + path("layers.onnx") + " -o " + path("s.onnx") +
                  " --name Layer --scope 'layer\\.[0-9]/'");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(onnx::load_model(path("s.onnx")).graph.nodes.size(), 4u);  // a call per layer, Tanh
  r = run_tessera("function create " + path("f.onnx") + " -o " + path("none.onnx") +
                  " --name G --find-repeats");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("--find-repeats found no repeated structure"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("none.onnx")));
}

TEST_F(TransformCli, UserToolsRunAndCheckTheirOutput) {
  std::string in = save_model("m.onnx");
  std::string tools = "tool --tools-file " + path("tools.json") + " ";
  CliRun r = run_tessera(tools + "add copy cp --prompt-for-output -- '$Model' '$Output'");
  ASSERT_EQ(r.status, 0) << r.out;
  r = run_tessera(tools + "list");
  EXPECT_NE(r.out.find("copy"), std::string::npos) << r.out;
  r = run_tessera(tools + "run copy " + in);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("tool 'copy' writes a model: give --output FILE"), std::string::npos) << r.out;
  r = run_tessera(tools + "run copy " + in + " --output " + path("copy.onnx"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("type-checks"), std::string::npos) << r.out;
  r = run_tessera(tools + "add ghost /nonexistent/prog");
  r = run_tessera(tools + "run ghost " + in);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("cannot run '/nonexistent/prog': No such file or directory"), std::string::npos)
      << r.out;
  r = run_tessera(tools + "remove copy");
  EXPECT_EQ(r.status, 0) << r.out;
  std::ofstream(path("bad.json")) << "{not json";
  r = run_tessera("tool --tools-file " + path("bad.json") + " list");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("is not valid JSON"), std::string::npos) << r.out;
}

}  // namespace
