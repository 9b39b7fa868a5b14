#include "runtime/backend_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

namespace tessera::rt {

namespace {

struct Registered {
  std::mutex mu;
  std::map<std::string, BackendFactory> factories;
};

Registered& registered() {
  static Registered r;
  return r;
}

std::filesystem::path exe_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : p.parent_path();
}

// One loaded library per name, kept for the process: its kernels' code must outlive every session.
void* open_library(const std::string& name, std::string& tried) {
  static std::mutex mu;
  static std::map<std::string, void*> handles;
  std::lock_guard lock(mu);
  if (auto it = handles.find(name); it != handles.end()) return it->second;
  for (const auto& file : backend_library_candidates(name)) {
    void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) return handles[name] = h;
    const char* err = dlerror();
    std::string why = err ? err : "not found";
    // A file that exists but does not load (a missing CUDA runtime library) says more than "not found";
    // a path that does not exist, or the loader not finding the library itself, says nothing.
    if (file.find('/') != std::string::npos && !std::filesystem::exists(file)) continue;
    if (why.rfind(file + ":", 0) == 0) continue;
    tried += fmt::format("{}{}", tried.empty() ? "" : "; ", why);
  }
  return nullptr;
}

}  // namespace

void register_backend(std::string name, BackendFactory factory) {
  auto& r = registered();
  std::lock_guard lock(r.mu);
  r.factories[std::move(name)] = std::move(factory);
}

void unregister_backend(const std::string& name) {
  auto& r = registered();
  std::lock_guard lock(r.mu);
  r.factories.erase(name);
}

std::vector<std::string> backend_library_candidates(const std::string& name) {
  std::string file = fmt::format("libtessera_{}.so", name);
  std::vector<std::string> out;
  auto dir = exe_dir();
  if (!dir.empty()) {
    out.push_back((dir / file).string());
    out.push_back((dir / ".." / "lib" / file).string());
  }
  if (const char* env = std::getenv("TESSERA_BACKEND_PATH"); env && *env)
    out.push_back((std::filesystem::path(env) / file).string());
  out.push_back(file);  // the dynamic loader's search (LD_LIBRARY_PATH, the cache)
  return out;
}

std::unique_ptr<Backend> load_backend(const std::string& name, const BackendOptions& options) {
  if (name == "cpu") return make_cpu_backend();
  {
    auto& r = registered();
    std::unique_lock lock(r.mu);
    if (auto it = r.factories.find(name); it != r.factories.end()) {
      BackendFactory f = it->second;
      lock.unlock();
      auto b = f(options);
      if (!b) throw BackendUnavailable(fmt::format("backend '{}' is not available on this machine", name));
      return b;
    }
  }
  std::string tried;
  void* h = open_library(name, tried);
  if (!h) {
    throw BackendUnavailable(fmt::format("backend '{}' is not available: libtessera_{}.so {}", name, name,
                                         tried.empty() ? "was not found beside tessera, in ../lib, "
                                                         "$TESSERA_BACKEND_PATH or the loader's path"
                                                       : "did not load (" + tried + ")"));
  }
  auto create = reinterpret_cast<BackendCreateFn>(dlsym(h, kBackendCreateSymbol));
  if (!create)
    throw BackendUnavailable(
        fmt::format("backend '{}': libtessera_{}.so has no {} function", name, name, kBackendCreateSymbol));
  char error[512] = {};
  Backend* b = create(kBackendInterfaceVersion, &options, error, sizeof error);
  if (!b)
    throw BackendUnavailable(fmt::format("backend '{}' is not available: {}", name,
                                         error[0] ? error : "the library declined without a reason"));
  std::unique_ptr<Backend> owned(b);
  if (owned->interface_version() != kBackendInterfaceVersion)
    throw BackendUnavailable(
        fmt::format("backend '{}' implements interface version {}, this Tessera needs {}", name,
                    owned->interface_version(), kBackendInterfaceVersion));
  return owned;
}

}  // namespace tessera::rt
