// User tools: the tools file, argument substitution, running without a shell, cancellation, refusals.
#include "transforms/user_tools.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace tessera::transforms {
namespace {

namespace fs = std::filesystem;

class UserTools : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_tools_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(UserTools, SavesAndLoadsTheFile) {
  fs::path file = dir_ / "cfg" / "tools.json";
  EXPECT_TRUE(load_tools(file).empty());  // no file yet
  std::vector<UserTool> tools = {{"simplify", "/usr/bin/onnxsim", {"$Model", "$Output"}, true, true},
                                 {"view", "netron", {"$Model"}, false, false}};
  save_tools(file, tools);
  EXPECT_EQ(load_tools(file), tools);
}

TEST_F(UserTools, DefaultFileFollowsXdg) {
  ::setenv("XDG_CONFIG_HOME", dir_.c_str(), 1);
  EXPECT_EQ(default_tools_file(), dir_ / "tessera" / "tools.json");
  ::unsetenv("XDG_CONFIG_HOME");
}

TEST_F(UserTools, InvalidJsonIsAClearError) {
  fs::path file = dir_ / "tools.json";
  std::ofstream(file) << "{\"tools\": [ {\"name\": \"x\", }";
  try {
    load_tools(file);
    FAIL();
  } catch (const TransformError& e) {
    EXPECT_NE(std::string(e.what()).find("tools file " + file.string() + " is not valid JSON"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(file)
      << R"({"tools": [{"name": "a", "application": "x"}, {"name": "a", "application": "y"}]})";
  EXPECT_THROW(load_tools(file), TransformError);
}

TEST_F(UserTools, SubstitutesWithoutAShell) {
  UserTool t{"t", "cp", {"$Model", "--to=$Output", "$(rm -rf /)"}, false, false};
  auto args = expand_arguments(t, "/m dir/a b.onnx", "out;ls");
  EXPECT_EQ(args, (std::vector<std::string>{"/m dir/a b.onnx", "--to=out;ls", "$(rm -rf /)"}));
  // Run for real: cp copies a file whose name has spaces and a semicolon, no shell involved.
  fs::path in = dir_ / "a b.onnx";
  std::ofstream(in) << "model";
  UserTool cp{"copy", "cp", {"$Model", "$Output"}, true, false};
  fs::path out = dir_ / "out;x.onnx";
  ToolResult r = run_tool(cp, in.string(), out.string());
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_TRUE(fs::exists(out));
}

TEST_F(UserTools, ReportsExitStatus) {
  UserTool t{"fails", "/bin/sh", {"-c", "exit 3"}, false, false};
  EXPECT_EQ(run_tool(t, "", "").exit_status, 3);
}

TEST_F(UserTools, MissingProgramIsAClearError) {
  UserTool t{"ghost", "/nonexistent/tool", {"$Model"}, false, false};
  try {
    run_tool(t, "m.onnx", "");
    FAIL();
  } catch (const TransformError& e) {
    EXPECT_EQ(std::string(e.what()),
              "tool 'ghost': cannot run '/nonexistent/tool': No such file or directory");
  }
}

TEST_F(UserTools, InterruptEndsTheChild) {
  UserTool t{"slow", "sleep", {"30"}, false, false};
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(::getpid(), SIGINT);
  });
  auto t0 = std::chrono::steady_clock::now();
  ToolResult r = run_tool(t, "", "");
  interrupter.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.signal, SIGINT);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

}  // namespace
}  // namespace tessera::transforms
