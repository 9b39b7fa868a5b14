// Runs the ONNX node conformance suite on a backend (the CPU by default): for each case, load the model, feed
// test_data_set_*/input_K.pb, compare with output_K.pb (relative 1e-3, absolute 1e-5 unless
// tolerances.txt says otherwise, with its reason). Prints pass, fail and skip counts.
//
// Each case runs in a child process with a time limit, so a crash or a hang in one kernel is a failed
// case with a message, not a dead test run. Exit status 1 when a case outside skip_run.txt fails or
// when fewer than 97% of the ai.onnx cases pass.
//
//   tessera_conformance_run [--dir DIR] [--filter REGEX] [--jobs N] [--timeout S] [--verbose]
//                           [--optimization none|basic|extended|layout] [--list-failures FILE]
//                           [--backend cpu|cuda|...] [--precision fp32|fp16|...] [--lists DIR]
//
// --lists: the folder holding skip_run.txt and tolerances.txt (default: tests/conformance of the source
// tree the binary was built from; a bundle run elsewhere names its copy). A missing list is an error, not
// an empty one: without it every listed case would count as a failure.
//
// With a device backend the summary also says how many cases ran every node on the device, some of
// them, or none (the rest falling back to the CPU).
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "onnx/data_value.h"
#include "onnx/onnx_io.h"
#include "runtime/session.h"
#include "runtime/value_io.h"

namespace fs = std::filesystem;
using namespace tessera;

namespace {

struct Options {
  fs::path dir;
  std::string filter;
  int jobs = 2;
  int timeout_s = 120;
  bool verbose = false;
  std::string optimization = "layout";
  std::string failures_file;
  std::string backend = "cpu";
  std::string precision = "fp32";
  fs::path lists;  // empty: the built-in paths
};

// "name  reason..." per line; '#' starts a comment line.
std::map<std::string, std::string> read_list(const fs::path& file) {
  std::map<std::string, std::string> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto sp = line.find_first_of(" \t");
    std::string name = line.substr(0, sp);
    std::string rest;
    if (sp != std::string::npos) {
      auto b = line.find_first_not_of(" \t", sp);
      if (b != std::string::npos) rest = line.substr(b);
    }
    out[name] = rest;
  }
  return out;
}

rt::Tolerance tolerance_for(const std::map<std::string, std::string>& tols, const std::string& name) {
  rt::Tolerance t;
  auto it = tols.find(name);
  if (it == tols.end()) return t;
  std::sscanf(it->second.c_str(), "%lf %lf", &t.rtol, &t.atol);
  return t;
}

// Where a case's nodes ran: "device" (all on the first backend, a device), "mixed", "host" (none there),
// followed for the last two by the operators the host ran ("mixed:Cast,Gather"), which kept the case off
// the device.
std::string placement_of(const rt::Session& s) {
  auto b = s.backends();
  if (b.size() < 2) return "host";
  size_t total = 0;
  for (const auto& x : b) total += x.nodes;
  if (b.front().nodes == total) return "device";
  std::string ops;
  for (const auto& [op, n] : b.back().ops) ops += (ops.empty() ? "" : ",") + op;
  return (b.front().nodes == 0 ? "host:" : "mixed:") + ops;
}

// Runs one case; returns "" on success or the reason it failed; `placement` says where it ran.
std::string run_case(const fs::path& dir, const rt::Tolerance& tol, const Options& o,
                     std::string& placement) {
  ir::Model model = onnx::load_model(dir / "model.onnx");
  rt::SessionOptions so;
  so.threads = 1;
  so.optimization = *rt::opt_level_from_name(o.optimization);
  so.backend = o.backend;
  // The suite's expected outputs are float32 results: compared in float32 unless asked otherwise.
  so.precision = tessera::passes::precision_from_name(o.precision);
  rt::Session session(model, so);
  placement = placement_of(session);
  const auto& g = session.model().graph;
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test_data_set_* folder";
  for (const auto& set : sets) {
    std::vector<std::pair<std::string, rt::Value>> feeds;
    // input_K.pb binds to the K-th graph input that is not an initializer.
    std::vector<const ir::ValueInfo*> ins;
    for (const auto& in : g.inputs)
      if (!g.find_initializer(in.name)) ins.push_back(&in);
    for (size_t k = 0;; ++k) {
      fs::path f = set / fmt::format("input_{}.pb", k);
      if (!fs::exists(f)) break;
      if (k >= ins.size()) return fmt::format("{} has more inputs than the graph", set.filename().string());
      feeds.emplace_back(ins[k]->name,
                         rt::value_from_data(onnx::read_data_value(f, ins[k]->type), ins[k]->type));
    }
    auto outs = session.run(feeds);
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      fs::path f = set / fmt::format("output_{}.pb", k);
      if (!fs::exists(f)) continue;
      auto expected = rt::value_from_data(onnx::read_data_value(f, g.outputs[k].type), g.outputs[k].type);
      std::string diff = rt::compare_values(expected, outs[k], tol);
      if (!diff.empty()) return fmt::format("output {} ('{}'): {}", k, g.outputs[k].name, diff);
    }
  }
  return {};
}

struct Running {
  pid_t pid;
  int fd;
  std::string name;
  std::string out;
  std::chrono::steady_clock::time_point start;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const char* d = std::getenv("TESSERA_CONFORMANCE_DIR")) o.dir = d;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "{} needs a value\n", a);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--dir")
      o.dir = next();
    else if (a == "--filter")
      o.filter = next();
    else if (a == "--jobs")
      o.jobs = std::max(1, std::atoi(next().c_str()));
    else if (a == "--timeout")
      o.timeout_s = std::atoi(next().c_str());
    else if (a == "--verbose")
      o.verbose = true;
    else if (a == "--optimization")
      o.optimization = next();
    else if (a == "--list-failures")
      o.failures_file = next();
    else if (a == "--backend")
      o.backend = next();
    else if (a == "--precision")
      o.precision = next();
    else if (a == "--lists")
      o.lists = next();
    else {
      fmt::print(stderr, "unknown option {}\n", a);
      return 2;
    }
  }
  if (!tessera::passes::precision_from_name(o.precision)) {
    fmt::print(stderr, "unknown precision '{}' (fp32, tf32, fp16, bf16)\n", o.precision);
    return 2;
  }
  if (!rt::opt_level_from_name(o.optimization)) {
    fmt::print(stderr, "unknown optimization level '{}'\n", o.optimization);
    return 2;
  }
  if (o.dir.empty() || !fs::is_directory(o.dir)) {
    fmt::print(stderr, "conformance folder not found (--dir or TESSERA_CONFORMANCE_DIR): '{}'\n",
               o.dir.string());
    return 2;
  }
  const fs::path skips_file =
      o.lists.empty() ? fs::path(TESSERA_CONFORMANCE_RUN_SKIPS) : o.lists / "skip_run.txt";
  const fs::path tols_file =
      o.lists.empty() ? fs::path(TESSERA_CONFORMANCE_TOLERANCES) : o.lists / "tolerances.txt";
  for (const fs::path& f : {skips_file, tols_file}) {
    if (fs::is_regular_file(f)) continue;
    fmt::print(stderr,
               "conformance list not found: '{}' (--lists DIR names the folder with skip_run.txt and "
               "tolerances.txt)\n",
               f.string());
    return 2;
  }
  auto skips = read_list(skips_file);
  auto tols = read_list(tols_file);
  std::regex filter(o.filter.empty() ? ".*" : o.filter);
  std::vector<std::string> cases;
  for (const auto& e : fs::directory_iterator(o.dir))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) {
      std::string n = e.path().filename().string();
      if (std::regex_search(n, filter)) cases.push_back(n);
    }
  std::sort(cases.begin(), cases.end());

  int pass = 0, fail = 0, skipped = 0, onnx_total = 0, onnx_pass = 0, unexpected = 0;
  std::map<std::string, int> placed;      // ai.onnx cases by where their nodes ran
  std::map<std::string, int> off_device;  // passing ai.onnx cases kept off the device, by host operator
  std::vector<std::string> failures;
  std::vector<Running> running;
  size_t next_case = 0;
  auto is_onnx = [](const std::string& n) {
    return n.find("_ai_onnx_ml_") == std::string::npos && n.find("training") == std::string::npos;
  };
  auto finish = [&](Running& r, std::string result) {
    // A child reports "<placement> PASS" or "<placement> FAIL why" (placement empty when it failed early).
    std::string where;
    if (auto sp = result.find(' '); sp != std::string::npos && result.rfind("FAIL", 0) != 0) {
      where = result.substr(0, sp);
      result = result.substr(sp + 1);
    }
    bool ok = result.rfind("PASS", 0) == 0;
    bool listed = skips.count(r.name) > 0;
    if (is_onnx(r.name)) {
      onnx_total++;
      onnx_pass += ok;
      std::string kind = where.substr(0, where.find(':'));
      if (ok) placed[kind]++;
      for (size_t p = kind.size() + 1; ok && p < where.size();) {
        size_t c = where.find(',', p);
        off_device[where.substr(p, c == std::string::npos ? std::string::npos : c - p)]++;
        p = c == std::string::npos ? where.size() : c + 1;
      }
    }
    if (ok) {
      pass++;
      if (listed) fmt::print("note: {} passes but is in skip_run.txt\n", r.name);
      if (o.verbose) fmt::print("PASS {}\n", r.name);
      return;
    }
    if (listed) {
      skipped++;
      if (o.verbose) fmt::print("SKIP {}: {}\n", r.name, skips[r.name]);
      return;
    }
    fail++;
    unexpected++;
    std::string why = result.rfind("FAIL ", 0) == 0 ? result.substr(5) : result;
    fmt::print("FAIL {}: {}\n", r.name, why);
    failures.push_back(r.name + "  " + why);
  };
  while (next_case < cases.size() || !running.empty()) {
    while (next_case < cases.size() && static_cast<int>(running.size()) < o.jobs) {
      const std::string name = cases[next_case++];
      int fds[2];
      if (pipe(fds) != 0) return 2;
      pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        std::string msg;
        try {
          std::string where;
          std::string why = run_case(o.dir / name, tolerance_for(tols, name), o, where);
          msg = (where.empty() ? "host" : where) + (why.empty() ? " PASS" : " FAIL " + why);
        } catch (const std::exception& e) {
          msg = std::string("FAIL ") + e.what();
        }
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        if (write(fds[1], msg.data(), msg.size()) < 0) _exit(3);
        _exit(0);
      }
      close(fds[1]);
      running.push_back({pid, fds[0], name, {}, std::chrono::steady_clock::now()});
    }
    std::vector<pollfd> pfds;
    for (auto& r : running) pfds.push_back({r.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 200);
    for (size_t i = 0; i < running.size();) {
      Running& r = running[i];
      bool done = false;
      std::string result;
      if (pfds[i].revents & (POLLIN | POLLHUP)) {
        char buf[4096];
        ssize_t n = read(r.fd, buf, sizeof buf);
        if (n > 0) r.out.append(buf, static_cast<size_t>(n));
        if (n <= 0) {
          int status = 0;
          waitpid(r.pid, &status, 0);
          done = true;
          if (WIFSIGNALED(status))
            result = fmt::format("FAIL crashed with signal {} ({})", WTERMSIG(status),
                                 strsignal(WTERMSIG(status)));
          else
            result = r.out.empty() ? "FAIL no result" : r.out;
        }
      }
      if (!done && std::chrono::steady_clock::now() - r.start > std::chrono::seconds(o.timeout_s)) {
        kill(r.pid, SIGKILL);
        waitpid(r.pid, nullptr, 0);
        done = true;
        result = fmt::format("FAIL timed out after {} s", o.timeout_s);
      }
      if (!done) {
        ++i;
        continue;
      }
      close(r.fd);
      finish(r, result);
      running.erase(running.begin() + static_cast<long>(i));
      pfds.erase(pfds.begin() + static_cast<long>(i));
    }
  }
  double rate = onnx_total ? 100.0 * onnx_pass / onnx_total : 100.0;
  fmt::print("conformance: {} cases: {} pass, {} fail, {} skipped (listed); ai.onnx {}/{} pass ({:.1f}%)\n",
             cases.size(), pass, fail, skipped, onnx_pass, onnx_total, rate);
  if (o.backend != "cpu")
    fmt::print(
        "on backend {}: of the ai.onnx cases that pass, {} ran every node on the device ({:.1f}% of {}), "
        "{} some nodes, {} none\n",
        o.backend, placed["device"], onnx_total ? 100.0 * placed["device"] / onnx_total : 0.0, onnx_total,
        placed["mixed"], placed["host"]);
  if (o.backend != "cpu" && !off_device.empty()) {
    std::vector<std::pair<int, std::string>> by_count;
    for (const auto& [op, n] : off_device) by_count.emplace_back(-n, op);
    std::sort(by_count.begin(), by_count.end());
    std::string line;
    for (const auto& [n, op] : by_count) line += fmt::format(" {} {},", op, -n);
    line.pop_back();
    fmt::print("operators the host ran in cases not fully on the device (cases):{}\n", line);
  }
  if (!o.failures_file.empty()) {
    std::ofstream f(o.failures_file);
    for (const auto& l : failures) f << l << "\n";
  }
  bool full = o.filter.empty();
  return unexpected > 0 || (full && rate < 97.0) ? 1 : 0;
}
