#include "cli/run_inputs.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <stdexcept>

#include "cli/run_memory.h"
#include "io/image.h"
#include "io/npy.h"
#include "onnx/data_value.h"
#include "passes/pipeline.h"
#include "runtime/half.h"
#include "runtime/value_io.h"

namespace fs = std::filesystem;

namespace tessera::cli {

void add_run_options(CLI::App* cmd, RunSettings& s) {
  cmd->add_option("MODEL", s.model, "ONNX model file")->required();
  cmd->add_option("--input,-i", s.inputs,
                  "NAME=FILE: a .npy, a .pb TensorProto, or a PNG/JPEG image (repeatable)");
  cmd->add_option("--input-dir", s.input_dir,
                  "Folder with input_<k>.pb or input_<k>.npy in graph-input order (the conformance layout)");
  cmd->add_option("--shape", s.shapes, "NAME=1x3x224x224: shape of a random input with free dimensions");
  cmd->add_option("--image-size", s.image_size, "Resize images to HxW (or one number for a square)");
  cmd->add_option("--mean", s.mean,
                  "Per-channel mean subtracted from images scaled to [0,1], e.g. 0.485,0.456,0.406");
  cmd->add_option("--std", s.std_dev, "Per-channel standard deviation images are divided by");
  cmd->add_option("--image-layout", s.image_layout, "Image tensor layout: NCHW (default) or NHWC");
  cmd->add_option("--seed", s.seed, "Seed of the random inputs");
  cmd->add_option("--iterations,-n", s.iterations, "Timed runs")->check(CLI::Range(1, 1000000));
  cmd->add_option("--warmup", s.warmup, "Untimed runs first (the first run also learns the memory plan)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--threads", s.threads, "Intra-op threads (0: one per core)")->check(CLI::Range(0, 1024));
  cmd->add_option("--optimization,-O", s.optimization, "Graph optimisation level")
      ->check(CLI::IsMember({"none", "basic", "extended", "layout"}));
  cmd->add_option("--backend", s.backend, "Where to run (auto: a GPU where there is one, else the CPU)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->add_option("--device", s.device, "Which GPU (with --backend cuda|auto)")->check(CLI::Range(0, 1023));
  cmd->add_option("--precision", s.precision,
                  "Compute precision: fp32, tf32, fp16 or bf16 (default: fp16 with float32 accumulation on a "
                  "GPU, fp32 on the CPU); graph inputs and outputs keep their types")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  cmd->add_flag("--device-io", s.device_io,
                "Feed the inputs from GPU memory (copied there once, before the runs) and leave the outputs "
                "there (copied back once, after them), as ONNX Runtime's I/O binding does: the times are the "
                "model's alone, like PyTorch's on tensors already on the GPU");
  cmd->add_option("--layout", s.layout,
                  "Activation layout of convolution chains: nhwc (the GPU's default), nchw (as ONNX writes "
                  "it) or blocked (the CPU's default)")
      ->check(CLI::IsMember({"nhwc", "nchw", "blocked"}, CLI::ignore_case));
  cmd->add_option("--disable-rule", s.disabled_rules,
                  "Switch a rewrite rule off (repeatable; `tessera optimize --list-rules` lists them)")
      ->check(known_rule());
  cmd->add_flag("--json", s.json, "Print JSON instead of text");
  cmd->add_flag("--no-progress", s.no_progress, "No progress bar");
  cmd->add_option("--memory-limit", s.memory_limit,
                  "Memory a run may use, e.g. 8G or 512M: its planned total (checked before it starts), "
                  "its allocations and each tensor (default: the memory available now; 0: all physical "
                  "memory)");
}

namespace {

// MemAvailable of /proc/meminfo: what can be allocated now without swapping; 0 if unknown.
size_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

bool g_limit_from_free_memory = false;  // for the hint of run_error_message

}  // namespace

size_t parse_memory_limit(const std::string& text) {
  double v = 0;
  size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  double scale = unit.empty() || unit == "B"    ? 1.0
                 : unit == "K" || unit == "KiB" ? 1024.0
                 : unit == "M" || unit == "MiB" ? 1024.0 * 1024
                 : unit == "G" || unit == "GiB" ? 1024.0 * 1024 * 1024
                 : unit == "T" || unit == "TiB" ? 1024.0 * 1024 * 1024 * 1024
                                                : -1.0;
  if (used == 0 || scale < 0 || !(v >= 0) || v * scale > 1e18)
    throw std::runtime_error(
        fmt::format("--memory-limit '{}' is not a size like 8G, 512M or 4096 (bytes)", text));
  return static_cast<size_t>(v * scale);
}

std::string run_error_message(const std::exception& e) {
  std::string m = e.what();
  if (m.find("for one tensor") == std::string::npos && m.find("for one run") == std::string::npos) return m;
  return m + (g_limit_from_free_memory
                  ? " (the memory available on this machine now; --memory-limit raises it)"
                  : " (--memory-limit)");
}

rt::SessionOptions session_options(const RunSettings& s) {
  size_t limit = s.memory_limit.empty() ? available_memory() : parse_memory_limit(s.memory_limit);
  g_limit_from_free_memory = s.memory_limit.empty() && limit != 0;
  rt::set_max_tensor_bytes(limit);  // 0: the runtime's default, physical memory
  rt::SessionOptions o;
  o.optimization = *rt::opt_level_from_name(s.optimization);
  o.threads = s.threads;
  o.backend = s.backend;
  o.device = s.device;
  o.disabled_rules = s.disabled_rules;
  if (!s.precision.empty()) o.precision = passes::precision_from_name(s.precision);
  if (!s.layout.empty()) o.layout = passes::layout_from_name(s.layout);
  return o;
}

CLI::Validator known_rule() {
  return CLI::Validator(
      [](std::string& name) -> std::string {
        if (passes::rule_exists(name)) return {};
        return fmt::format("no rewrite rule named '{}' (tessera optimize --list-rules lists them)", name);
      },
      "RULE");
}

namespace {

std::pair<std::string, std::string> split_assignment(const std::string& text, const char* flag) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw std::runtime_error(fmt::format("{} expects NAME=VALUE, got '{}'", flag, text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

bool has_ext(const fs::path& p, std::initializer_list<const char*> exts) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::any_of(exts.begin(), exts.end(), [&](const char* x) { return e == x; });
}

rt::Value load_file(const ir::ValueInfo& vi, const fs::path& file, const RunSettings& s) {
  if (!fs::exists(file))
    throw std::runtime_error(fmt::format("input '{}': file '{}' not found", vi.name, file.string()));
  if (has_ext(file, {".npy"})) return rt::Value(rt::Tensor::from_ir(io::read_npy(file, vi.name)).clone());
  if (has_ext(file, {".png", ".jpg", ".jpeg"})) {
    auto opts = io::parse_image_options(s.image_size, s.mean, s.std_dev, s.image_layout);
    auto img = io::load_image(file, opts);
    return rt::Value(rt::Tensor::from_vector<float>(ir::DataType::kFloat, img.dims, img.data));
  }
  return rt::value_from_data(onnx::read_data_value(file, vi.type), vi.type);
}

std::vector<int64_t> parse_dims(const std::string& text, const std::string& name) {
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t x = text.find_first_of("x,", pos);
    std::string part = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    try {
      size_t used = 0;
      long long v = std::stoll(part, &used);
      if (used != part.size() || v < 0) throw std::invalid_argument("bad");
      dims.push_back(v);
    } catch (const std::exception&) {
      throw std::runtime_error(
          fmt::format("--shape {}: '{}' is not a dimension list like 1x3x224x224", name, text));
    }
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return dims;
}

// Random values of the input's type: floats uniform in [-1, 1), integers in [0, kIntRange) (small and
// non-negative: valid token ids, indices, repeat counts and sizes for most models, where larger ones
// turn a Tile's or an Expand's output into gigabytes), bools fair coins. Free dimensions are 1 unless
// --shape says.
constexpr int kIntRange = 10;
rt::Value random_input(const ir::ValueInfo& vi, const std::vector<int64_t>* shape, std::mt19937_64& rng) {
  if (!vi.type.is_tensor())
    throw std::runtime_error(
        fmt::format("input '{}' is {}: give it as a file (random inputs are tensors only)", vi.name,
                    vi.type.to_string()));
  std::vector<int64_t> dims;
  if (shape) {
    dims = *shape;
  } else if (vi.type.shape) {
    for (const auto& d : *vi.type.shape) dims.push_back(d.is_static() ? d.value : 1);
  }
  if (vi.type.shape && dims.size() != vi.type.shape->size())
    throw std::runtime_error(fmt::format("--shape {}: rank {} given, the input has rank {}", vi.name,
                                         dims.size(), vi.type.shape->size()));
  rt::Tensor t = rt::Tensor::zeros(vi.type.elem, dims);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, kIntRange - 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype()) {
      case ir::DataType::kFloat:
        t.data<float>()[i] = static_cast<float>(real(rng));
        break;
      case ir::DataType::kDouble:
        t.data<double>()[i] = real(rng);
        break;
      case ir::DataType::kFloat16:
        t.data<rt::Float16>()[i] = rt::Float16(static_cast<float>(real(rng)));
        break;
      case ir::DataType::kBFloat16:
        t.data<rt::BFloat16>()[i] = rt::BFloat16(static_cast<float>(real(rng)));
        break;
      case ir::DataType::kInt64:
        t.data<int64_t>()[i] = small(rng);
        break;
      case ir::DataType::kInt32:
        t.data<int32_t>()[i] = small(rng);
        break;
      case ir::DataType::kInt16:
        t.data<int16_t>()[i] = static_cast<int16_t>(small(rng));
        break;
      case ir::DataType::kInt8:
        t.data<int8_t>()[i] = static_cast<int8_t>(small(rng));
        break;
      case ir::DataType::kUint8:
        t.data<uint8_t>()[i] = static_cast<uint8_t>(small(rng));
        break;
      case ir::DataType::kUint16:
        t.data<uint16_t>()[i] = static_cast<uint16_t>(small(rng));
        break;
      case ir::DataType::kUint32:
        t.data<uint32_t>()[i] = static_cast<uint32_t>(small(rng));
        break;
      case ir::DataType::kUint64:
        t.data<uint64_t>()[i] = static_cast<uint64_t>(small(rng));
        break;
      case ir::DataType::kBool:
        t.data<bool>()[i] = small(rng) % 2 == 0;
        break;
      case ir::DataType::kString:
        t.data<std::string>()[i] = "tessera";
        break;
      default:
        throw std::runtime_error(fmt::format("input '{}': no random values for element type {}", vi.name,
                                             ir::dtype_name(t.dtype())));
    }
  }
  return rt::Value(std::move(t));
}

// "int64[4] in [0, 10)" for the line that names a random input.
std::string random_range(const rt::Tensor& t) {
  std::string what = fmt::format("{}{}", ir::dtype_name(t.dtype()), rt::shape_str(t.shape()));
  if (t.dtype() == ir::DataType::kString) return what + " all \"tessera\"";
  if (t.dtype() == ir::DataType::kBool) return what + " true or false";
  if (ir::dtype_is_float(t.dtype())) return what + " uniform in [-1, 1)";
  return what + fmt::format(" uniform in [0, {})", kIntRange);
}

}  // namespace

std::vector<std::pair<std::string, rt::Value>> gather_inputs(const rt::Session& session,
                                                             const RunSettings& s) {
  const auto& ins = session.inputs();
  auto find = [&](const std::string& name) -> const ir::ValueInfo& {
    for (const auto& vi : ins)
      if (vi.name == name) return vi;
    std::string names;
    for (const auto& vi : ins) names += (names.empty() ? "" : ", ") + vi.name;
    throw std::runtime_error(fmt::format("the model has no input '{}' (inputs: {})", name, names));
  };
  std::map<std::string, rt::Value> given;
  for (const auto& a : s.inputs) {
    auto [name, file] = split_assignment(a, "--input");
    given[name] = load_file(find(name), file, s);
  }
  if (!s.input_dir.empty()) {
    if (!fs::is_directory(s.input_dir))
      throw std::runtime_error(fmt::format("--input-dir '{}' is not a folder", s.input_dir));
    for (size_t k = 0; k < ins.size(); ++k) {
      if (given.count(ins[k].name)) continue;
      for (const char* ext : {".pb", ".npy"}) {
        fs::path f = fs::path(s.input_dir) / fmt::format("input_{}{}", k, ext);
        if (fs::exists(f)) {
          given[ins[k].name] = load_file(ins[k], f, s);
          break;
        }
      }
    }
  }
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& a : s.shapes) {
    auto [name, text] = split_assignment(a, "--shape");
    find(name);
    shapes[name] = parse_dims(text, name);
  }
  std::mt19937_64 rng(s.seed);
  std::vector<std::pair<std::string, rt::Value>> feeds;
  for (const auto& vi : ins) {
    auto it = given.find(vi.name);
    if (it != given.end()) {
      feeds.emplace_back(vi.name, it->second);
      continue;
    }
    auto sh = shapes.find(vi.name);
    feeds.emplace_back(vi.name, random_input(vi, sh == shapes.end() ? nullptr : &sh->second, rng));
    // Said on stderr (stdout may be JSON), so that a user knows what the run was fed.
    fmt::print(stderr, "random input '{}': {}\n", vi.name, random_range(feeds.back().second.tensor()));
  }
  return feeds;
}

namespace {

// A one-line bar on stderr, redrawn at most ten times a second, shown only on a terminal and only once
// the run has taken a second: short runs print nothing extra.
class Progress {
 public:
  Progress(int total, bool enabled) : total_(total), enabled_(enabled && isatty(STDERR_FILENO)) {}
  ~Progress() {
    if (drawn_) fmt::print(stderr, "\r{:60}\r", "");
  }
  void update(int done) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    drawn_ = true;
    int width = 30;
    int fill = total_ ? done * width / total_ : width;
    double elapsed = std::chrono::duration<double>(now - start_).count();
    double eta = done ? elapsed / done * (total_ - done) : 0;
    fmt::print(stderr, "\r[{:=<{}}{:<{}}] {}/{} runs, {:.0f} s left ", "", fill, "", width - fill, done,
               total_, eta);
  }

 private:
  int total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_{};
};

}  // namespace

std::vector<double> timed_runs(rt::Session& session,
                               const std::vector<std::pair<std::string, rt::Value>>& feeds,
                               const RunSettings& s, std::vector<rt::Value>& outputs,
                               const std::function<void(const rt::RunStats&)>& per_run, RunTiming timing) {
  // A run that cannot fit stops here, before its first allocation (the planner's limit would stop it
  // only at the allocation that crosses it, after the work before).
  check_planned_memory(session, feeds, rt::max_tensor_bytes());
  Progress bar(s.warmup + s.iterations, !s.no_progress && !s.json);
  // --device-io: the feeds copied to the device once; outputs left there until the runs are over.
  std::vector<std::pair<std::string, rt::Value>> device_feeds;
  if (s.device_io)
    for (const auto& [name, v] : feeds) device_feeds.emplace_back(name, session.to_device(v));
  const auto& in = s.device_io ? device_feeds : feeds;
  const rt::RunOptions ro{.outputs_on_device = s.device_io,
                          .profile = timing == RunTiming::kNodes,
                          .time_device = timing == RunTiming::kDevice,
                          .stamp_repeats = timing == RunTiming::kStamped ? s.stamp_repeats : 0};
  for (int i = 0; i < s.warmup; ++i) {
    outputs = session.run(in, {}, ro);
    bar.update(i + 1);
  }
  std::vector<double> ms;
  for (int i = 0; i < s.iterations; ++i) {
    outputs.clear();  // the previous outputs' memory is free for this run, as in a serving loop
    auto t0 = std::chrono::steady_clock::now();
    outputs = session.run(in, {}, ro);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (per_run) per_run(session.last_stats());
    bar.update(s.warmup + i + 1);
  }
  for (auto& v : outputs) v = session.to_host(v);
  return ms;
}

std::string describe_value(const rt::Value& v) {
  if (!v.is_tensor()) return v.describe();
  const rt::Tensor& t = v.tensor();
  std::string head = fmt::format("{}{}", ir::dtype_name(t.dtype()), rt::shape_str(t.shape()));
  bool numeric = t.dtype() != ir::DataType::kString && ir::dtype_bits(t.dtype()) >= 8 &&
                 !(ir::dtype_is_float(t.dtype()) && ir::dtype_bits(t.dtype()) == 8);
  if (!numeric || t.numel() == 0) return head;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double x = t.to_double(i);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  std::string first;
  for (int64_t i = 0; i < std::min<int64_t>(t.numel(), 5); ++i)
    first += fmt::format(" {:.4g}", t.to_double(i));
  if (t.numel() > 5) first += " ...";
  return fmt::format("{}  min {:.4g} max {:.4g} mean {:.4g} :{}", head, lo, hi,
                     sum / static_cast<double>(t.numel()), first);
}

std::string human_bytes(size_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string memory_line(const rt::RunStats& st) {
  std::string prepared = st.prepared_weight_bytes ? fmt::format(", kernels' prepared copies {}",
                                                                human_bytes(st.prepared_weight_bytes))
                                                  : "";
  std::string released = st.released_weight_bytes
                             ? fmt::format(", originals released {}", human_bytes(st.released_weight_bytes))
                             : "";
  std::string line =
      fmt::format("peak {} (planner lower bound {}; weights {}{}{})", human_bytes(st.memory.peak_bytes),
                  human_bytes(st.memory.lower_bound_bytes), human_bytes(st.weight_bytes), prepared, released);
  // Device memory, for each device backend (the host is the line above).
  for (size_t i = 0; i + 1 < st.devices.size(); ++i) {
    const auto& d = st.devices[i];
    line += fmt::format("; {} peak {} (lower bound {})", d.device, human_bytes(d.memory.peak_bytes),
                        human_bytes(d.memory.lower_bound_bytes));
  }
  return line;
}

std::string placement_line(const rt::Session& session) {
  std::string where;
  for (const auto& b : session.backends())
    if (b.nodes)
      where +=
          fmt::format("{}{} ({}, {} nodes)", where.empty() ? "" : ", ", b.device, b.device_name, b.nodes);
  const rt::PrecisionResult& p = session.precision();
  where += fmt::format("; {}", passes::precision_name(p.precision));
  if (!p.kept.empty()) where += fmt::format(", {} nodes kept in float32", p.kept.size());
  if (!p.note.empty()) where += fmt::format(" ({})", p.note);
  if (size_t n = session.last_stats().device_graph_replays)
    where += fmt::format("; {} runs replayed as one device graph", n);
  else if (const std::string& why = session.last_stats().device_graph_note; !why.empty())
    where += fmt::format("; not replayed as a device graph: {}", why);
  return where;
}

}  // namespace tessera::cli
