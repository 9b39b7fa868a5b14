// tessera studio [MODEL...] [--port N] [--root DIR] [--no-browser] [--web-root DIR]
#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "cli/commands.h"
#include "server/studio.h"

extern char** environ;

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

// Opens the URL in the desktop's browser when there is a desktop; a missing xdg-open or a failing
// browser is not the studio's failure, so nothing is reported.
void open_browser(const std::string& url) {
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY")) return;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::string prog = "xdg-open";
  char* argv[] = {prog.data(), const_cast<char*>(url.c_str()), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "xdg-open", &actions, nullptr, argv, environ) == 0) {
    std::thread([pid] { waitpid(pid, nullptr, 0); }).detach();  // reap it
  }
  posix_spawn_file_actions_destroy(&actions);
}

fs::path own_executable() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

struct Args {
  std::vector<std::string> models;
  int port = 0;
  std::string root;
  bool no_browser = false;
  std::string web_root;
};

int run_studio(const Args& a) {
  // SIGINT and SIGTERM are taken by one thread with sigwait, blocked everywhere else (the server's
  // threads inherit the mask), so stopping runs outside a signal handler.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  server::StudioOptions opts;
  opts.port = a.port;
  opts.root = a.root.empty() ? fs::current_path() : fs::path(a.root);
  for (const std::string& m : a.models) opts.named_files.push_back(m);
  opts.web_root = server::Studio::find_web_root(a.web_root, own_executable());
  if (!a.web_root.empty() && opts.web_root.empty()) {
    fmt::print(stderr, "tessera studio: no index.html in {}; serving the API only\n", a.web_root);
  }
  std::unique_ptr<server::Studio> studio;
  try {
    studio = std::make_unique<server::Studio>(opts);
    studio->bind();
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessera studio: {}\n", e.what());
    return kUnreadable;
  }
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    studio->stop();
  });
  fmt::print("Tessera studio: {}\n", studio->url());
  std::fflush(stdout);
  if (!a.no_browser) open_browser(studio->url());
  studio->run();
  // run() also ends when the server fails; wake the waiter if no signal did.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return kOk;
}

}  // namespace

void add_studio_command(CLI::App& app, int& status) {
  auto* cmd =
      app.add_subcommand("studio",
                         "Open the studio (the model designer) in a browser: a local server on 127.0.0.1 "
                         "that prints its URL; Ctrl+C stops it");
  auto a = std::make_shared<Args>();
  cmd->add_option("MODEL", a->models, "ONNX model files to open");
  cmd->add_option("--port", a->port, "Port to listen on (default: a free one)")->check(CLI::Range(0, 65535));
  cmd->add_option("--root", a->root,
                  "Folder whose files the studio may open and save (default: the current one)")
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--no-browser", a->no_browser, "Do not open a browser");
  cmd->add_option("--web-root", a->web_root, "Folder of the built web app (default: next to the binary)");
  cmd->callback([a, &status] { status = run_studio(*a); });
}

}  // namespace tessera::cli
