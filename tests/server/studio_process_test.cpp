// `tessera studio` as a process: it prints its URL line, answers, and stops cleanly on SIGINT.
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

namespace fs = std::filesystem;

namespace {

// Reads one line from `fd`, waiting at most `seconds`.
std::string read_line(int fd, int seconds) {
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char c;
    if (::read(fd, &c, 1) != 1) break;
    if (c == '\n') return line;
    line += c;
  }
  return line;
}

// Waits for `pid` at most `seconds`; the exit status, or -1 when it did not exit normally in time.
int wait_exit(pid_t pid, int seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

TEST(StudioProcess, PrintsTheUrlAnswersAndStopsOnSigint) {
  fs::path root = fs::temp_directory_path() / ("tessera_studio_proc_" + std::to_string(::getpid()));
  fs::create_directories(root);
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::close(out[1]);
    ::unsetenv("DISPLAY");
    ::execl(TESSERA_BIN, TESSERA_BIN, "studio", "--no-browser", "--port", "0", "--root", root.c_str(),
            nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  std::string line = read_line(out[0], 60);
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      line, m, std::regex(R"(Tessera studio: http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{32}))")))
      << "'" << line << "'";
  int port = std::stoi(m[1]);
  std::string token = m[2];
  httplib::Client client("127.0.0.1", port);
  auto r = client.Get(("/api/documents?token=" + token).c_str());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"documents":[]})");
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  EXPECT_EQ(wait_exit(pid, 20), 0);
  ::close(out[0]);
  fs::remove_all(root);
}

}  // namespace
