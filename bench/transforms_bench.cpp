// Measurements of the model transformations (docs/transforms.md):
//   transforms_bench fp16 FILE RUNS        load FILE, convert to float16 (the library call, through an
//                                          edit history), save beside it: each step timed, and the
//                                          disk's floor: writing as many bytes to a new file with one
//                                          fsync, measured right after each save
//   transforms_bench sanitize LAYERS RUNS  sanitize the transformer graph of LAYERS blocks (about 38
//                                          nodes each; 1316 blocks: 50,010 nodes), in memory
// Each prints the median, minimum and maximum seconds over RUNS runs after one warm-up.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "ir/commands/history.h"
#include "onnx/onnx_io.h"
#include "samples.h"
#include "transforms/float16.h"
#include "transforms/sanitize.h"

namespace {

using namespace tessera;

void time_runs(const std::string& what, int runs, const std::function<void()>& fn) {
  fn();
  std::vector<double> secs;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  fmt::print("{} median {:.4f} s min {:.4f} s max {:.4f} s runs {}\n", what, secs[secs.size() / 2],
             secs.front(), secs.back(), runs);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Seconds to write `bytes` bytes to a new file in 4 MiB writes and fsync it: what any save of that
// size costs on this disk at this moment.
double disk_floor(const std::string& path, size_t bytes) {
  std::vector<char> block(size_t{4} << 20, 1);
  auto t0 = std::chrono::steady_clock::now();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  for (size_t done = 0; done < bytes;) {
    ssize_t n = ::write(fd, block.data(), std::min(block.size(), bytes - done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  double s = seconds_since(t0);
  ::unlink(path.c_str());
  return s;
}

int fp16(const std::string& file, int runs) {
  std::string out = file + ".fp16.onnx";
  std::vector<double> load, convert, save, disk;
  for (int i = 0; i <= runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    ir::Model m = onnx::load_model(file);
    double tl = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    ir::History h(m);
    transforms::Report r = transforms::convert_float(h, {});
    double tc = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    onnx::save_model(m, out);
    double ts = seconds_since(t0);
    double tf = disk_floor(file + ".floor", std::filesystem::file_size(out));
    if (i == 0) {
      fmt::print("initializers converted {}\n", r.get("initializers converted"));
      continue;  // warm-up
    }
    load.push_back(tl), convert.push_back(tc), save.push_back(ts), disk.push_back(tf);
  }
  for (auto* v : {&load, &convert, &save, &disk}) std::sort(v->begin(), v->end());
  auto med = [](const std::vector<double>& v) { return v[v.size() / 2]; };
  fmt::print("fp16 load median {:.4f} s\nfp16 convert median {:.4f} s\nfp16 save median {:.4f} s\n",
             med(load), med(convert), med(save));
  fmt::print("fp16 total median {:.4f} s runs {}\n", med(load) + med(convert) + med(save), runs);
  fmt::print("disk floor (as many bytes to a new file, one fsync) median {:.4f} s\n", med(disk));
  std::filesystem::remove(out);
  return 0;
}

int sanitize(int layers, int runs) {
  // Without weight bytes (shapes only), as the checker benchmark: 1316 blocks of weights would be 4 GiB.
  ir::Model m = samples::make_transformer(layers, false);
  fmt::print("nodes {}\n", m.graph.nodes.size());
  size_t after = 0;
  time_runs("sanitize", runs, [&] {
    ir::Model copy = m;
    ir::History h(copy);
    transforms::sanitize(h, {});
    after = copy.graph.nodes.size();
  });
  fmt::print("nodes after {}\n", after);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fmt::print(stderr, "usage: {} fp16 FILE RUNS | sanitize LAYERS RUNS\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  if (mode == "fp16") return fp16(argv[2], std::stoi(argv[3]));
  if (mode == "sanitize") return sanitize(std::stoi(argv[2]), std::stoi(argv[3]));
  fmt::print(stderr, "unknown mode {}\n", mode);
  return 2;
}
