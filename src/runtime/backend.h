// The backend interface: what a device offers the session. The CPU backend is built in; the CUDA
// backend (next) is a shared library loaded at run time that returns a Backend from
// `tessera_backend_create(int interface_version)`, so `tessera` runs where no GPU is.
//
// The interface is versioned: a backend built against another kBackendInterfaceVersion is refused at
// load with a message saying both versions, instead of crashing on a changed vtable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/kernel.h"

namespace tessera::rt {

inline constexpr int kBackendInterfaceVersion = 1;

// A queue of work on a device, and a marker in it. The CPU backend runs synchronously, so its stream
// is the calling thread and its events complete at once.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual void synchronize() = 0;
};
class Event {
 public:
  virtual ~Event() = default;
  virtual void record(Stream& s) = 0;
  virtual void synchronize() = 0;
  // Milliseconds between two recorded events (device time where the device can measure it).
  virtual double elapsed_ms(const Event& since) const = 0;
};

// Told about every kernel launch when profiling is on; the GPU backend adds counters (CUPTI) here.
class ProfilerHook {
 public:
  virtual ~ProfilerHook() = default;
  virtual void kernel_begin(const KernelInfo& node, std::string_view kernel_name) = 0;
  virtual void kernel_end(const KernelInfo& node, std::string_view kernel_name) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual int interface_version() const { return kBackendInterfaceVersion; }
  virtual std::string_view name() const = 0;  // "cpu", "cuda"
  virtual Device device() const = 0;
  // Whether this backend has a kernel for the node; the session partitions by asking each backend in
  // order and falls back to the CPU for the rest.
  virtual bool supports_op(const KernelInfo& info) const = 0;
  // The kernel and the name the profiler shows for it ("reference", "dnnl", ...).
  virtual std::pair<KernelPtr, std::string> create_kernel(const KernelInfo& info) const = 0;
  // Device memory: `bytes` bytes, freed when the last reference goes.
  virtual std::shared_ptr<void> allocate(size_t bytes) = 0;
  virtual void copy_to_host(const Tensor& src, void* dst) = 0;
  virtual Tensor copy_from_host(const Tensor& src) = 0;
  virtual std::unique_ptr<Stream> create_stream() = 0;
  virtual std::unique_ptr<Event> create_event() = 0;
  virtual void set_profiler(ProfilerHook* hook) { (void)hook; }
};

// The built-in CPU backend: kernels of KernelRegistry::global() registered for "cpu".
// `reference_only`: only the reference kernels (for checking the fast ones against them).
std::unique_ptr<Backend> make_cpu_backend(bool reference_only = false);

}  // namespace tessera::rt
