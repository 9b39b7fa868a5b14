#include "backends/cuda/nvrtc_compiler.h"

#include <fmt/format.h>
#include <nvrtc.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

namespace tessera::cuda {

namespace {

namespace fs = std::filesystem;

std::string current_arch() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    throw NvrtcError("cannot read the device's compute capability");
  return fmt::format("sm_{}{}", major, minor);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

fs::path cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg) return fs::path(xdg) / "tessera" / "nvrtc";
  if (home && *home) return fs::path(home) / ".cache" / "tessera" / "nvrtc";
  return {};
}

std::string read_file(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A temporary file of this process beside the target, then one rename: a reader sees a whole cubin or
// none. Failures only cost the next session a compilation.
void write_file(const fs::path& f, const std::string& bytes) {
  if (f.empty()) return;
  std::error_code ec;
  fs::create_directories(f.parent_path(), ec);
  if (ec) return;
  fs::path tmp = f;
  tmp += fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, f, ec);
  if (ec) fs::remove(tmp, ec);
}

std::string compile_cubin(const std::string& source, const std::string& arch) {
  nvrtcProgram prog = nullptr;
  if (nvrtcCreateProgram(&prog, source.c_str(), "tessera_fused.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    throw NvrtcError("nvrtcCreateProgram failed");
  std::string arch_opt = "--gpu-architecture=" + arch;
  const char* opts[] = {arch_opt.c_str(), "--std=c++17"};
  nvrtcResult r = nvrtcCompileProgram(prog, 2, opts);
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 1) nvrtcGetProgramLog(prog, log.data());
  if (r != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    throw NvrtcError(
        fmt::format("NVRTC could not compile for {}: {}: {}", arch, nvrtcGetErrorString(r), log));
  }
  size_t size = 0;
  std::string cubin;
  if (nvrtcGetCUBINSize(prog, &size) == NVRTC_SUCCESS) {
    cubin.resize(size);
    if (nvrtcGetCUBIN(prog, cubin.data()) != NVRTC_SUCCESS) cubin.clear();
  }
  nvrtcDestroyProgram(&prog);
  if (cubin.empty()) throw NvrtcError(fmt::format("NVRTC made no cubin for {}", arch));
  return cubin;
}

// The runtime's library management (context-independent loading): no link to the driver library, so
// libtessera_cuda.so still loads where no driver is (and says there is no GPU).
cudaLibrary_t load_library(const std::string& image) {
  cudaLibrary_t lib = nullptr;
  cudaError_t r = cudaLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (r != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it so that the next launch check does not see it
    throw NvrtcError(std::string("cannot load the compiled kernel: ") + cudaGetErrorString(r));
  }
  return lib;
}

struct Libraries {
  std::mutex mu;
  std::map<uint64_t, cudaLibrary_t> loaded;  // never unloaded: a few kilobytes per program
};

Libraries& libraries() {
  static Libraries l;
  return l;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

// The library of `source` for `arch`: in memory, else from the disk cache, else compiled (and saved).
cudaLibrary_t library_for(const std::string& source, const std::string& arch) {
  const uint64_t key = fnv1a(source + "\n// " + arch + " nvrtc " + nvrtc_version());
  Libraries& libs = libraries();
  std::lock_guard<std::mutex> lock(libs.mu);
  if (auto it = libs.loaded.find(key); it != libs.loaded.end()) return it->second;
  fs::path dir = cache_dir();
  fs::path file = dir.empty() ? fs::path() : dir / fmt::format("{:016x}.cubin", key);
  cudaLibrary_t lib = nullptr;
  if (!file.empty()) {
    std::string cached = read_file(file);
    if (!cached.empty()) {
      try {
        lib = load_library(cached);
      } catch (const NvrtcError&) {
        lib = nullptr;  // a truncated or foreign file: compiled again and replaced
      }
    }
  }
  if (!lib) {
    std::string cubin = compile_cubin(source, arch);
    lib = load_library(cubin);
    write_file(file, cubin);
  }
  libs.loaded.emplace(key, lib);
  return lib;
}

}  // namespace

CompiledKernel compile_kernel(const std::string& source, const std::string& name) {
  cudaLibrary_t lib = library_for(source, current_arch());
  cudaKernel_t kernel = nullptr;
  cudaError_t r = cudaLibraryGetKernel(&kernel, lib, name.c_str());
  if (r != cudaSuccess) {
    cudaGetLastError();
    throw NvrtcError(fmt::format("no kernel '{}' in the compiled source: {}", name, cudaGetErrorString(r)));
  }
  return CompiledKernel(kernel);
}

void CompiledKernel::launch(unsigned grid, unsigned block, void** args, cudaStream_t s) const {
  cudaError_t r = cudaLaunchKernel(static_cast<const void*>(kernel_), dim3(grid), dim3(block), args, 0, s);
  if (r != cudaSuccess)
    throw NvrtcError(std::string("launching the compiled kernel failed: ") + cudaGetErrorString(r));
}

}  // namespace tessera::cuda
