#include "backends/cuda/conv_algo_cache.h"

#include <cudnn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "backends/cuda/cuda_check.h"

namespace tessera::cuda {

namespace {

namespace fs = std::filesystem;

fs::path cache_file() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path dir;
  if (xdg && *xdg) {
    dir = fs::path(xdg) / "tessera";
  } else if (home && *home) {
    dir = fs::path(home) / ".cache" / "tessera";
  } else {
    return {};
  }
  return dir / "cudnn-algos.tsv";
}

struct Cache {
  std::mutex mu;
  bool loaded = false;
  fs::path file;  // what `entries` were read from: a changed XDG_CACHE_HOME reads the new file
  std::map<std::string, AlgoChoice> entries;
};

Cache& cache() {
  static Cache c;
  return c;
}

// Reads the cache file once (again when its location changes). Lines "key<TAB>algo<TAB>math"; anything
// else (a truncated or foreign file) is skipped.
void load(Cache& c) {
  fs::path f = cache_file();
  if (c.loaded && f == c.file) return;
  c.loaded = true;
  c.file = f;
  c.entries.clear();
  if (f.empty()) return;
  std::ifstream in(f);
  std::string line;
  while (std::getline(in, line)) {
    auto t1 = line.find('\t');
    auto t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 == std::string::npos) continue;
    try {
      size_t used1 = 0, used2 = 0;
      std::string a = line.substr(t1 + 1, t2 - t1 - 1), m = line.substr(t2 + 1);
      AlgoChoice choice{std::stoi(a, &used1), std::stoi(m, &used2)};
      if (used1 != a.size() || used2 != m.size() || choice.algo < 0 || choice.math < 0) continue;
      c.entries[line.substr(0, t1)] = choice;
    } catch (const std::exception&) {
      continue;
    }
  }
}

void save(const Cache& c) {
  fs::path f = cache_file();
  if (f.empty()) return;
  std::error_code ec;
  fs::create_directories(f.parent_path(), ec);
  if (ec) return;
  std::ostringstream text;
  for (const auto& [key, choice] : c.entries)
    text << key << '\t' << choice.algo << '\t' << choice.math << '\n';
  // A temporary file of this process beside the target, then one rename: readers see the old file or
  // the new one, never a mix.
  fs::path tmp = f;
  tmp += fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text.str();
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, f, ec);
  if (ec) fs::remove(tmp, ec);
}

std::string clean(std::string s) {
  for (char& ch : s)
    if (ch == '\t' || ch == '\n' || ch == '\r') ch = ' ';
  return s;
}

}  // namespace

std::string algo_key_prefix() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  return clean(fmt::format("{}|cudnn {}|", prop.name, cudnnGetVersion()));
}

std::optional<AlgoChoice> cached_algo(const std::string& key) {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  load(c);
  auto it = c.entries.find(clean(key));
  if (it == c.entries.end()) return std::nullopt;
  return it->second;
}

void remember_algo(const std::string& key, AlgoChoice choice) {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  load(c);
  c.entries[clean(key)] = choice;
  save(c);
}

}  // namespace tessera::cuda
