// The CPU backend: host memory, synchronous execution, kernels from the global registry (reference
// kernels next to the op schemas, fast ones in src/backends/cpu registered at higher priority).
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/backend.h"

namespace tessera::rt {

namespace {

class HostStream : public Stream {
 public:
  void synchronize() override {}
};

class HostEvent : public Event {
 public:
  void record(Stream&) override { t_ = std::chrono::steady_clock::now(); }
  void synchronize() override {}
  double elapsed_ms(const Event& since) const override {
    const auto& s = static_cast<const HostEvent&>(since);
    return std::chrono::duration<double, std::milli>(t_ - s.t_).count();
  }

 private:
  std::chrono::steady_clock::time_point t_{};
};

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(bool reference_only) : max_priority_(reference_only ? 0 : INT_MAX) {}
  std::string_view name() const override { return "cpu"; }
  Device device() const override { return {}; }
  bool supports_op(const KernelInfo& info) const override {
    return KernelRegistry::global().find("cpu", info, max_priority_) != nullptr;
  }
  std::pair<KernelPtr, std::string> create_kernel(const KernelInfo& info) const override {
    const KernelDef* d = KernelRegistry::global().find("cpu", info, max_priority_);
    if (!d) return {KernelPtr(), std::string()};
    return {d->create(info), d->name};
  }
  std::shared_ptr<void> allocate(size_t bytes) override {
    void* p = std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return {p, [](void* q) { std::free(q); }};
  }
  void copy_to_host(const Tensor& src, void* dst) override { std::memcpy(dst, src.raw(), src.nbytes()); }
  Tensor copy_from_host(const Tensor& src) override { return src; }
  std::unique_ptr<Stream> create_stream() override { return std::make_unique<HostStream>(); }
  std::unique_ptr<Event> create_event() override { return std::make_unique<HostEvent>(); }

 private:
  int max_priority_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(bool reference_only) {
  return std::make_unique<CpuBackend>(reference_only);
}

}  // namespace tessera::rt
