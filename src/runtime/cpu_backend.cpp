// The CPU backend: host memory, synchronous execution, the built-in kernels (reference kernels next to
// the op schemas, fast ones in src/backends/cpu registered at higher priority). Also the parts of the
// Backend interface every backend shares.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

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

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    auto c = line.find(':');
    if (c != std::string::npos && c + 1 < line.size()) return line.substr(line.find_first_not_of(' ', c + 1));
  }
  return "unknown CPU";
}

constexpr size_t kHostAlign = 64;

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(bool reference_only) : max_priority_(reference_only ? 0 : INT_MAX) {}
  std::string_view name() const override { return "cpu"; }
  Device device() const override { return {}; }
  std::string device_name() const override {
    static const std::string n = cpu_model_name();
    return n;
  }
  const KernelRegistry& kernels() const override { return KernelRegistry::cpu(); }
  int max_priority() const override { return max_priority_; }

  std::shared_ptr<void> allocate(size_t bytes) override {
    size_t rounded = (std::max<size_t>(bytes, 1) + kHostAlign - 1) / kHostAlign * kHostAlign;
    void* p = std::aligned_alloc(kHostAlign, rounded);
    if (!p) throw OutOfMemory(fmt::format("out of host memory allocating {} bytes", bytes));
    return {p, [](void* q) { std::free(q); }};
  }
  void fill_zero(void* p, size_t bytes, Stream&) override { std::memset(p, 0, bytes); }
  void copy_to_host(const Tensor& src, void* dst, Stream&) override {
    std::memcpy(dst, src.raw(), src.nbytes());
  }
  void copy_from_host(const void* src, Tensor& dst, Stream&) override {
    std::memcpy(dst.raw(), src, dst.nbytes());
  }
  Stream& stream() override { return host_stream(); }
  std::unique_ptr<Stream> create_stream() override { return std::make_unique<HostStream>(); }
  std::unique_ptr<Event> create_event() override { return std::make_unique<HostEvent>(); }

 private:
  int max_priority_;
};

}  // namespace

Stream& host_stream() {
  static HostStream s;
  return s;
}

std::vector<bool> Backend::claim(std::span<const KernelInfo* const> nodes) const {
  std::vector<bool> taken(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) taken[i] = supports_op(*nodes[i]);
  return taken;
}

std::pair<KernelPtr, std::string> Backend::create_kernel(const KernelInfo& info) const {
  const KernelDef* d = kernels().find(info, max_priority());
  if (!d) return {KernelPtr(), std::string()};
  return {d->create(info), d->name};
}

Tensor allocate_on(Backend& b, DataType dtype, Shape shape) {
  size_t bytes = dtype_bytes(dtype, shape_numel(shape));
  check_tensor_bytes(dtype, shape, bytes);
  return Tensor(dtype, std::move(shape), b.allocate(bytes), b.device());
}

Tensor to_device(Backend& b, const Tensor& host) {
  if (b.is_host() || host.dtype() == DataType::kString) return host;
  Tensor t = allocate_on(b, host.dtype(), host.shape());
  b.copy_from_host(host.raw(), t, b.stream());
  b.stream().synchronize();
  return t;
}

Tensor to_host(Backend& b, const Tensor& t) {
  if (b.is_host() || t.device().kind == DeviceKind::kCpu) return t;
  Tensor h = Tensor::zeros(t.dtype(), t.shape());
  b.copy_to_host(t, h.raw(), b.stream());
  return h;
}

std::unique_ptr<Backend> make_cpu_backend(bool reference_only) {
  return std::make_unique<CpuBackend>(reference_only);
}

}  // namespace tessera::rt
