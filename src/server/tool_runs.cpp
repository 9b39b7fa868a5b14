#include "server/tool_runs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

extern char** environ;

namespace tessera::server {

namespace {
// Output kept per run; past it the oldest text goes (the panel shows the end of a chatty tool).
constexpr size_t kMaxOutput = size_t{8} << 20;
}  // namespace

struct ToolRuns::Run {
  std::string id, tool, output_file;
  pid_t pid = -1;
  std::thread reader;
  std::mutex mutex;
  std::string output;  // the kept text
  size_t dropped = 0;  // bytes dropped from its front
  bool done = false;
  bool cancelled = false;
  int exit_status = -1;
  int signal = 0;
};

namespace {

// posix_spawn's attributes for a tool: its own process group, default dispositions for the signals a
// program expects to have, and no blocked signals.
struct SpawnAttr {
  posix_spawnattr_t attr;
  SpawnAttr() {
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  }
  ~SpawnAttr() { posix_spawnattr_destroy(&attr); }
};

// stdin from /dev/null, stdout and stderr into the pipe's write end.
struct SpawnFiles {
  posix_spawn_file_actions_t actions;
  explicit SpawnFiles(int out) {
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out, 1);
    posix_spawn_file_actions_adddup2(&actions, out, 2);
  }
  ~SpawnFiles() { posix_spawn_file_actions_destroy(&actions); }
};

void read_until_end(ToolRuns::Run& run, int fd);

}  // namespace

ToolRuns::~ToolRuns() {
  std::map<std::string, std::shared_ptr<Run>> runs;
  {
    std::lock_guard lock(mutex_);
    runs.swap(runs_);
  }
  for (auto& [id, run] : runs) {
    {
      std::lock_guard lock(run->mutex);
      if (!run->done) ::kill(-run->pid, SIGKILL);
    }
    if (run->reader.joinable()) run->reader.join();
  }
}

std::string ToolRuns::start(const transforms::UserTool& tool, const std::string& model,
                            const std::string& output) {
  std::vector<std::string> args = transforms::expand_arguments(tool, model, output);
  args.insert(args.begin(), tool.application);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw HttpError{500,
                    fmt::format("cannot make a pipe for tool '{}': {}", tool.name, std::strerror(errno))};
  SpawnAttr attr;
  SpawnFiles files(fds[1]);
  pid_t pid = -1;
  int err = ::posix_spawnp(&pid, tool.application.c_str(), &files.actions, &attr.attr, argv.data(), environ);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    throw HttpError{400, fmt::format("tool '{}': cannot start '{}': {}", tool.name, tool.application,
                                     std::strerror(err))};
  }
  auto run = std::make_shared<Run>();
  run->tool = tool.name;
  run->output_file = output;
  run->pid = pid;
  {
    std::lock_guard lock(mutex_);
    forget_finished();
    run->id = fmt::format("r{}", next_++);
    runs_[run->id] = run;
  }
  int fd = fds[0];
  run->reader = std::thread([run, fd] { read_until_end(*run, fd); });
  return run->id;
}

namespace {

void read_until_end(ToolRuns::Run& run, int fd) {
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::lock_guard lock(run.mutex);
    run.output.append(buf, static_cast<size_t>(n));
    if (run.output.size() > kMaxOutput) {
      size_t cut = run.output.size() - kMaxOutput;
      run.output.erase(0, cut);
      run.dropped += cut;
    }
  }
  ::close(fd);
  int status = 0;
  while (::waitpid(run.pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::lock_guard lock(run.mutex);
  run.done = true;
  if (WIFEXITED(status)) run.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
}

}  // namespace

// Runs done are kept for their panel to read them; past kKeptRuns finished ones go (their output can be
// megabytes each), running ones never. Called with mutex_ held.
void ToolRuns::forget_finished() {
  constexpr size_t kKeptRuns = 16;
  for (auto it = runs_.begin(); it != runs_.end() && runs_.size() >= kKeptRuns;) {
    std::shared_ptr<Run> run = it->second;
    bool done;
    {
      std::lock_guard lock(run->mutex);
      done = run->done;
    }
    if (!done) {
      ++it;
      continue;
    }
    if (run->reader.joinable()) run->reader.join();  // done: its reader has returned or is returning
    it = runs_.erase(it);
  }
}

std::shared_ptr<ToolRuns::Run> ToolRuns::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = runs_.find(id);
  if (it == runs_.end()) throw HttpError{404, fmt::format("no tool run '{}'", id)};
  return it->second;
}

json ToolRuns::poll(const std::string& id, size_t from) {
  std::shared_ptr<Run> run = find(id);
  std::lock_guard lock(run->mutex);
  size_t start = from < run->dropped ? 0 : std::min(from - run->dropped, run->output.size());
  json j{{"id", run->id},
         {"tool", run->tool},
         {"output", run->output.substr(start)},
         {"next", run->dropped + run->output.size()},
         {"done", run->done},
         {"cancelled", run->cancelled},
         {"output_file", run->output_file}};
  if (run->done && run->signal == 0) j["exit_status"] = run->exit_status;
  if (run->signal != 0) j["signal"] = run->signal;
  return j;
}

json ToolRuns::cancel(const std::string& id) {
  std::shared_ptr<Run> run = find(id);
  {
    std::lock_guard lock(run->mutex);
    if (!run->done) {
      run->cancelled = true;
      ::kill(-run->pid, SIGTERM);
    }
  }
  return poll(id, SIZE_MAX);
}

}  // namespace tessera::server
