// Inputs and settings shared by `tessera run` and `tessera profile`: where the input values come from
// (files, an image, a conformance-style folder, or random), and how the session is set up.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "profiler/report.h"
#include "runtime/session.h"

namespace tessera::cli {

struct RunSettings {
  std::string model;
  std::vector<std::string> inputs;  // NAME=FILE
  std::string input_dir;
  std::vector<std::string> shapes;  // NAME=1x3x224x224
  std::string image_size, mean, std_dev, image_layout;
  uint64_t seed = 0;
  int iterations = 10;
  int warmup = 1;
  int threads = 0;
  std::string optimization = "layout";
  std::string backend = "cpu";
  int device = 0;
  bool device_io = false;  // --device-io: inputs fed from device memory, outputs left there while timed
  std::string layout;      // --layout; empty: the backend's default (NHWC on a GPU, blocked on the CPU)
  std::string precision;   // --precision; empty: the backend's default (fp16 on a GPU, fp32 on the CPU)
  std::vector<std::string> disabled_rules;
  bool json = false;
  bool no_progress = false;
  std::string memory_limit;  // --memory-limit: "8G", "512M", "0" (physical memory); empty: free memory
  // profile --stamp-repeats: stamped replays per layer boundary in a RunTiming::kStamped run (median of 5:
  // a boundary's readings spread by about 0.1-0.3 us on the H100); 0 leaves the stamped run out.
  int stamp_repeats = 5;
};

void add_run_options(CLI::App* cmd, RunSettings& s);
// Accepts the name of a rewrite rule (for --disable-rule).
CLI::Validator known_rule();
// Also sets the memory a run may use (rt::set_max_tensor_bytes): --memory-limit, else the memory this
// machine has available now, so that a run that cannot fit stops before allocating (timed_runs checks
// the planned total first: run_memory.h).
rt::SessionOptions session_options(const RunSettings& s);
// Bytes of a --memory-limit text ("8G", "512M", "1.5G", "4096"); throws std::runtime_error naming it.
size_t parse_memory_limit(const std::string& text);
// The message of a failed run, with a hint at --memory-limit when the tensor limit refused it.
std::string run_error_message(const std::exception& e);

// The feeds for the session's inputs. Throws std::runtime_error naming the input and the file.
std::vector<std::pair<std::string, rt::Value>> gather_inputs(const rt::Session& session,
                                                             const RunSettings& s);

// What the runs of timed_runs measure besides their latency: nothing; a replayed device graph's device
// time (RunStats::replay_device_us); every node (RunStats::events, and the replay's device time).
// kStamped: the replay's layer boundaries timed by stamped replays first (RunOptions::stamp_repeats).
enum class RunTiming { kLatency, kDevice, kNodes, kStamped };

// Runs warmup + iterations, with a progress bar on stderr for runs that take long; returns the latency
// of each timed iteration in milliseconds and leaves the last outputs in `outputs`; per_run sees each
// timed run's RunStats.
std::vector<double> timed_runs(rt::Session& session,
                               const std::vector<std::pair<std::string, rt::Value>>& feeds,
                               const RunSettings& s, std::vector<rt::Value>& outputs,
                               const std::function<void(const rt::RunStats&)>& per_run = {},
                               RunTiming timing = RunTiming::kLatency);

using LatencySummary = profiler::Latency;
using profiler::summarize;

// "float32[1,1000] min -3.2 max 4.1 mean 0.01: 0.12 -0.5 ..." for the output table.
std::string describe_value(const rt::Value& v);
std::string human_bytes(size_t n);
// "peak 12.0 MiB (planner lower bound 11.5 MiB; weights 97.5 MiB, kernels' prepared copies 98.0 MiB)"
std::string memory_line(const rt::RunStats& st);
// Where the session's nodes run and in what precision: "cuda:0 (NVIDIA H100, 120 nodes), cpu:0 (...,
// 3 nodes); fp16, 2 nodes kept in float32".
std::string placement_line(const rt::Session& session);

}  // namespace tessera::cli
