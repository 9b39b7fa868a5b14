#include "transforms/user_tools.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "util/atomic_file.h"

namespace tessera::transforms {

namespace fs = std::filesystem;

fs::path default_tools_file() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg) return fs::path(xdg) / "tessera" / "tools.json";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : ".") / ".config" / "tessera" / "tools.json";
}

namespace {

UserTool tool_from_json(const nlohmann::json& j, const fs::path& file, size_t index) {
  auto where = [&] { return fmt::format("{}: tool {}", file.string(), index + 1); };
  if (!j.is_object()) throw TransformError(fmt::format("{} is not an object", where()));
  UserTool t;
  try {
    t.name = j.value("name", "");
    t.application = j.value("application", "");
    t.arguments = j.value("arguments", std::vector<std::string>{});
    t.prompt_for_output = j.value("prompt_for_output", false);
    t.open_output = j.value("open_output", false);
  } catch (const nlohmann::json::exception& e) {
    throw TransformError(fmt::format("{}: a field has the wrong type: {}", where(), e.what()));
  }
  if (t.name.empty()) throw TransformError(fmt::format("{} has no name", where()));
  if (t.application.empty())
    throw TransformError(fmt::format("{} ('{}') has no application", where(), t.name));
  return t;
}

}  // namespace

std::vector<UserTool> load_tools(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw TransformError(fmt::format("tools file {} is not valid JSON: {}", file.string(), e.what()));
  }
  if (!j.is_object() || !j.contains("tools") || !j["tools"].is_array())
    throw TransformError(fmt::format("tools file {} has no \"tools\" list", file.string()));
  std::vector<UserTool> tools;
  std::set<std::string> names;
  for (size_t i = 0; i < j["tools"].size(); ++i) {
    UserTool t = tool_from_json(j["tools"][i], file, i);
    if (!names.insert(t.name).second)
      throw TransformError(fmt::format("tools file {} names the tool '{}' twice", file.string(), t.name));
    tools.push_back(std::move(t));
  }
  return tools;
}

void save_tools(const fs::path& file, const std::vector<UserTool>& tools) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : tools) {
    list.push_back({{"name", t.name},
                    {"application", t.application},
                    {"arguments", t.arguments},
                    {"prompt_for_output", t.prompt_for_output},
                    {"open_output", t.open_output}});
  }
  std::string text = nlohmann::json{{"tools", list}}.dump(2) + "\n";
  std::error_code ec;
  if (file.has_parent_path()) fs::create_directories(file.parent_path(), ec);
  try {
    util::write_file_atomically(file, std::as_bytes(std::span<const char>(text.data(), text.size())));
  } catch (const std::system_error& e) {
    throw TransformError(fmt::format("cannot write tools file {}: {}", file.string(), e.what()));
  }
}

std::vector<std::string> expand_arguments(const UserTool& tool, const std::string& model,
                                          const std::string& output) {
  std::vector<std::string> out;
  for (std::string a : tool.arguments) {
    for (auto [key, value] :
         {std::pair<std::string, const std::string&>{"$Model", model}, {"$Output", output}}) {
      for (size_t p = a.find(key); p != std::string::npos; p = a.find(key, p + value.size()))
        a.replace(p, key.size(), value);
    }
    out.push_back(std::move(a));
  }
  return out;
}

namespace {

volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_cancelled = 0;

void forward_signal(int sig) {
  g_cancelled = 1;
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

}  // namespace

ToolResult run_tool(const UserTool& tool, const std::string& model, const std::string& output) {
  std::vector<std::string> args = expand_arguments(tool, model, output);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(tool.application.c_str()));
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The child reports a failed exec through this pipe (closed on a successful exec).
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw TransformError(fmt::format("tool '{}': pipe: {}", tool.name, std::strerror(errno)));
  struct sigaction fwd {
  }, old_int{}, old_term{};
  fwd.sa_handler = forward_signal;
  sigemptyset(&fwd.sa_mask);
  g_cancelled = 0;
  ::sigaction(SIGINT, &fwd, &old_int);
  ::sigaction(SIGTERM, &fwd, &old_term);
  std::fflush(nullptr);  // what we printed comes before what the tool prints
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
    ::execvp(argv[0], argv.data());
    int err = errno;
    (void)!::write(fds[1], &err, sizeof err);
    ::_exit(127);
  }
  ::close(fds[1]);
  ToolResult result;
  if (pid < 0) {
    ::close(fds[0]);
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
    throw TransformError(fmt::format("tool '{}': fork: {}", tool.name, std::strerror(errno)));
  }
  g_child = pid;
  int err = 0;
  ssize_t n;
  do {
    n = ::read(fds[0], &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  if (n == static_cast<ssize_t>(sizeof err)) {
    throw TransformError(
        fmt::format("tool '{}': cannot run '{}': {}", tool.name, tool.application, std::strerror(err)));
  }
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.cancelled = g_cancelled != 0;
  return result;
}

}  // namespace tessera::transforms
