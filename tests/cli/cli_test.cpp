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

// `info` lists external data unread, but marks a location `check` (and `run`) would refuse with the
// message `check` gives: a symbolic link, a file with two hard links, a byte range past the end.
TEST_F(Cli, InfoMarksExternalDataThatCheckRefuses) {
  using namespace tessera::ir;
  Model m;
  m.ir_version = 8;
  m.opset_imports.push_back({"", 17});
  GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, Shape{Dim::of(256)}));
  std::vector<float> w(256, 0.5f);
  auto wn = b.initializer(make_tensor<float>("w", DataType::kFloat, {256}, w));
  b.output(b.node("Add", {x, wn}, {}, "add"));
  tessera::onnx::SaveOptions opts;
  opts.external_data = tessera::onnx::SaveOptions::ExternalData::kExternal;
  opts.external_file = "w.bin";
  opts.external_threshold = 16;
  fs::path model = dir_ / "ext.onnx";
  tessera::onnx::save_model(m, model, opts);
  fs::path data = dir_ / "w.bin";
  fs::path keep = dir_ / "w.keep";
  fs::copy_file(data, keep);

  CliRun fine = run("info " + model.string());
  EXPECT_EQ(fine.status, 0) << fine.out;
  EXPECT_NE(fine.out.find("External     w.bin"), std::string::npos) << fine.out;
  EXPECT_EQ(fine.out.find("refused"), std::string::npos) << fine.out;

  auto expect_marked = [&](const char* what, const char* reason) {
    SCOPED_TRACE(what);
    CliRun check = run("check " + model.string());
    EXPECT_EQ(check.status, 2) << check.out;
    EXPECT_NE(check.out.find(reason), std::string::npos) << check.out;
    // check prints "tessera check: cannot read MODEL: MESSAGE"; info the same MESSAGE.
    std::string prefix = "cannot read " + model.string() + ": ";
    size_t at = check.out.find(prefix);
    ASSERT_NE(at, std::string::npos) << check.out;
    std::string message = check.out.substr(at + prefix.size());
    message = message.substr(0, message.find('\n'));
    CliRun info = run("info " + model.string());
    EXPECT_EQ(info.status, 0) << info.out;
    EXPECT_NE(info.out.find("refused    " + message), std::string::npos) << info.out;
    CliRun json = run("info --json " + model.string());
    ASSERT_EQ(json.status, 0) << json.out;
    auto j = nlohmann::json::parse(json.out);
    ASSERT_EQ(j["external_data_problems"].size(), 1u) << json.out;
    EXPECT_EQ(j["external_data_problems"][0], message);
  };
  fs::remove(data);
  fs::create_symlink(keep, data);
  expect_marked("symbolic link", "is a symbolic link");
  fs::remove(data);
  fs::create_hard_link(keep, data);
  expect_marked("hard link", "the file has 2 hard links");
  fs::remove(data);
  fs::remove(keep);
  std::ofstream(data, std::ios::binary) << std::string(100, '\0');
  expect_marked("short file", "reach past the end of the file (100 bytes)");
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
