#include "server/tool_runs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <string_view>

extern char** environ;

namespace tessera::server {

namespace {
// Output kept per run; past it the oldest text goes (the panel shows the end of a chatty tool).
constexpr size_t kMaxOutput = size_t{8} << 20;
}  // namespace

struct ToolRuns::Run {
  std::string id, tool, output_file;
  EventLog* events = nullptr;
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
  run->events = events_;
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

// How many bytes at the end of `text` begin a UTF-8 sequence that is not complete yet: a chunk pushed
// ends before them, so that a character split between two reads is not sent as two U+FFFD.
size_t incomplete_utf8_tail(std::string_view text) {
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    auto c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

// A "tool" event: the run's output from byte `from` on, or its end.
void push(ToolRuns::Run& run, json j) {
  if (!run.events) return;
  j["id"] = run.id;
  j["tool"] = run.tool;
  run.events->publish("tool", j);
}

void read_until_end(ToolRuns::Run& run, int fd) {
  char buf[16384];
  std::string held;   // the start of a UTF-8 character the next read completes
  size_t pushed = 0;  // bytes of output pushed so far
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    {
      std::lock_guard lock(run.mutex);
      run.output.append(buf, static_cast<size_t>(n));
      if (run.output.size() > kMaxOutput) {
        size_t cut = run.output.size() - kMaxOutput;
        run.output.erase(0, cut);
        run.dropped += cut;
      }
    }
    held.append(buf, static_cast<size_t>(n));
    std::string text = held.substr(0, held.size() - incomplete_utf8_tail(held));
    held.erase(0, text.size());
    if (text.empty()) continue;
    push(run, {{"from", pushed}, {"output", text}, {"next", pushed + text.size()}, {"done", false}});
    pushed += text.size();
  }
  ::close(fd);
  int status = 0;
  while (::waitpid(run.pid, &status, 0) < 0 && errno == EINTR) {
  }
  json end{{"from", pushed}, {"output", held}, {"next", pushed + held.size()}, {"done", true}};
  {
    std::lock_guard lock(run.mutex);
    run.done = true;
    if (WIFEXITED(status)) run.exit_status = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
    end["cancelled"] = run.cancelled;
    end["output_file"] = run.output_file;
    if (run.signal == 0) end["exit_status"] = run.exit_status;
    if (run.signal != 0) end["signal"] = run.signal;
  }
  push(run, std::move(end));
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
