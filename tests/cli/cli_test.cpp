// The tessera command as a user runs it: exit statuses, text and JSON output, --help everywhere.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "ir/builder.h"
#include "onnx/onnx_io.h"

namespace fs = std::filesystem;

namespace {

CliRun run(const std::string& args) {
  return run_tessera(args);
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string save(const tessera::ir::Model& m, const std::string& name) {
    fs::path p = dir_ / name;
    tessera::onnx::save_model(m, p);
    return p.string();
  }

  tessera::ir::Model relu_model(bool broken) {
    using namespace tessera::ir;
    Model m;
    m.ir_version = 8;
    m.opset_imports.push_back({"", 17});
    GraphBuilder b(m.graph);
    auto x = b.input("x", Type::tensor(DataType::kFloat, Shape{Dim::symbol("batch"), Dim::of(4)}));
    b.output(b.node(broken ? "Conv" : "Relu", {x}, {}, "layer"));
    return m;
  }

  fs::path dir_;
};

TEST_F(Cli, HelpOnEverySubcommand) {
  for (const char* sub : {"", "info", "check", "new", "run", "profile", "optimize", "studio"}) {
    CliRun r = run(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub << r.out;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub << r.out;
  }
}

TEST_F(Cli, CheckExitStatuses) {
  CliRun ok = run("check " + save(relu_model(false), "ok.onnx"));
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("0 errors"), std::string::npos);

  CliRun bad = run("check " + save(relu_model(true), "bad.onnx"));
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("mandatory input 1 ('W') of node 'layer' (Conv) is not connected"),
            std::string::npos)
      << bad.out;

  fs::path garbage = dir_ / "garbage.onnx";
  std::ofstream(garbage) << "this is not a model";
  CliRun unreadable = run("check " + garbage.string());
  EXPECT_EQ(unreadable.status, 2) << unreadable.out;
  EXPECT_NE(unreadable.out.find("cannot read"), std::string::npos) << unreadable.out;

  CliRun missing = run("check " + (dir_ / "nope.onnx").string());
  EXPECT_EQ(missing.status, 2) << missing.out;
}

TEST_F(Cli, CheckJson) {
  CliRun bad = run("check --json " + save(relu_model(true), "bad.onnx"));
  EXPECT_EQ(bad.status, 1);
  auto j = nlohmann::json::parse(bad.out);
  EXPECT_EQ(j["errors"], 1);
  EXPECT_EQ(j["diagnostics"][0]["node"], "layer");
  EXPECT_EQ(j["diagnostics"][0]["op_type"], "Conv");
  EXPECT_EQ(j["diagnostics"][0]["input"], 1);
}

TEST_F(Cli, InfoTextAndJson) {
  std::string model = save(relu_model(false), "ok.onnx");
  CliRun text = run("info " + model);
  EXPECT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("tensor(float)[batch,4]"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Relu"), std::string::npos);
  CliRun json = run("info --json " + model);
  ASSERT_EQ(json.status, 0) << json.out;
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["ir_version"], 8);
  EXPECT_EQ(j["inputs"][0]["shape"][0], "batch");
  EXPECT_EQ(j["op_counts"]["Relu"], 1);
  EXPECT_EQ(j["node_count"], 1);
}

TEST_F(Cli, NewWritesAModelThatChecks) {
  std::string out = (dir_ / "empty.onnx").string();
  CliRun r = run("new -o " + out + " --opset 21 --domain com.microsoft:1 --domain ai.onnx.ml:5");
  ASSERT_EQ(r.status, 0) << r.out;
  CliRun info = run("info --json " + out);
  auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["opsets"].size(), 3u);
  EXPECT_EQ(j["opsets"][1]["domain"], "com.microsoft");
  EXPECT_EQ(run("check " + out).status, 0);
}

TEST_F(Cli, NewRefusesBadDomainsAndOpsets) {
  std::string out = (dir_ / "x.onnx").string();
  CliRun bad_domain = run("new -o " + out + " --opset 17 --domain com.microsoft");
  EXPECT_EQ(bad_domain.status, 2);
  EXPECT_NE(bad_domain.out.find("is not NAME:VERSION"), std::string::npos) << bad_domain.out;
  CliRun too_new = run("new -o " + out + " --opset 999");
  EXPECT_EQ(too_new.status, 2);
  EXPECT_NE(too_new.out.find("newer than"), std::string::npos) << too_new.out;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
