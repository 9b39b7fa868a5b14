// The backend interface: what a device offers the session.
//
// A backend owns its device's memory (the session plans one arena per backend through allocate()), its
// stream and events, and its own kernel registry. When the session is built, each backend in order of
// preference claims the nodes it can run (ONNX Runtime's GetCapability), the CPU backend takes the
// rest, and the compiler inserts one copy per value and device where placement changes
// (src/runtime/placement.h).
//
// The CPU backend is built in. Other backends (CUDA) are shared libraries loaded at run time
// (backend_loader.h) that export `tessera_backend_create`, so `tessera` runs where no GPU is. The
// interface is versioned: a library built against another kBackendInterfaceVersion is refused at load
// with a message giving both versions, instead of crashing on a changed vtable.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/stream.h"

namespace tessera::rt {

inline constexpr int kBackendInterfaceVersion = 7;

// Told about every kernel launch when profiling is on; the GPU backend adds counters (CUPTI) here.
class ProfilerHook {
 public:
  virtual ~ProfilerHook() = default;
  virtual void kernel_begin(const KernelInfo& node, std::string_view kernel_name) = 0;
  virtual void kernel_end(const KernelInfo& node, std::string_view kernel_name) = 0;
};

// What a device ran out of, for a clear message: which allocation of how many bytes, on which device.
class OutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One piece of device work of a traced run (Backend::trace_begin): a kernel, copy or memset, the node
// it belongs to (the id given to trace_push around the node), its device time and its name.
// What a piece of device work is: a kernel, a copy or a memset (a captured graph's other nodes, events
// and empty nodes, run nothing that a trace sees).
enum class WorkKind : uint8_t { kKernel, kMemcpy, kMemset };

struct TraceRecord {
  uint64_t id = 0;
  double start_us = 0, duration_us = 0;
  std::string name;  // "sm90_xmma_gemm_f16f16_...", "tessera::cuda::softmax_rows<__half>", "Memcpy DtoH"
  WorkKind kind = WorkKind::kKernel;
  // Work of a replayed device graph: the key (Backend::capture_layout) of the captured graph node that
  // ran it, where the backend could tell; 0 otherwise (launched directly, or the key is unknown).
  uint64_t graph_node = 0;
};

// One piece of device work a node queued while the device graph was captured: the backend's key of the
// graph node it became (never 0) and its kind.
struct CapturedWork {
  uint64_t key = 0;
  WorkKind kind = WorkKind::kKernel;
};

// The id a traced replay of a device graph is launched under (trace_push): its records are the work of
// many nodes, attributed afterwards through the capture's layout (runtime/replay_trace.h).
inline constexpr uint64_t kReplayTraceId = ~uint64_t{0};

// Stamped replays of a captured device graph (Backend::stamp_boundaries): per-layer device times without
// tracing. For each boundary (before the first work of a node that queued any, and after the graph's
// last work) the graph is made again with one timestamp kernel there and replayed behind the replay gate
// (time_replays): the stamp tells how long after the gate opened the work before the boundary was done,
// in a replay that is unchanged up to there. Node k's span is then the next boundary's time less its own.
struct BoundaryTimes {
  // Per node of the layout (Backend::capture_layout), the median time in microseconds from the gate to
  // the boundary before its first work; negative for a node that queued none.
  std::vector<double> start_us;
  double end_us = 0;             // the same for the boundary after the graph's last work
  double stamped_device_us = 0;  // median device time of the stamped replays (events, as time_replays)
  int replays = 0;               // stamped replays made (boundaries times repeats)
  std::string note;              // why there are none, where stamp_boundaries returned false
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual int interface_version() const { return kBackendInterfaceVersion; }
  virtual std::string_view name() const = 0;  // "cpu", "cuda"
  virtual Device device() const = 0;
  virtual std::string device_name() const = 0;  // "Intel Xeon ...", "NVIDIA H100 80GB HBM3"
  bool is_host() const { return device().kind == DeviceKind::kCpu; }

  // The backend's own kernels.
  virtual const KernelRegistry& kernels() const = 0;
  // The highest kernel priority this backend uses (the CPU backend's reference-only mode uses 0).
  virtual int max_priority() const { return INT_MAX; }
  // Whether this backend has a kernel for the node.
  virtual bool supports_op(const KernelInfo& info) const {
    return kernels().find(info, max_priority()) != nullptr;
  }
  // Which of a graph's nodes (in graph order, with inferred types) this backend takes: by default each
  // node it supports. A device backend may decline nodes whose copies would cost more than they save.
  virtual std::vector<bool> claim(std::span<const KernelInfo* const> nodes) const;
  // Which inputs of a node this backend's kernel reads in host memory (a Reshape's shape, a Slice's
  // starts: small integer tensors that decide launch parameters), and which outputs it makes there
  // (Shape, Size: the kernel sets them to host tensors it built). The compiler keeps those values on
  // the host, copying them there when a device made them. On the host backend, every one.
  virtual bool input_on_host(const KernelInfo& node, size_t input) const {
    (void)node, (void)input;
    return is_host();
  }
  virtual bool output_on_host(const KernelInfo& node, size_t output) const {
    (void)node, (void)output;
    return is_host();
  }
  // The kernel and the name the profiler shows for it ("reference", "dnnl", ...).
  virtual std::pair<KernelPtr, std::string> create_kernel(const KernelInfo& info) const;

  // Device memory: `bytes` bytes, freed when the last reference goes. Throws OutOfMemory.
  virtual std::shared_ptr<void> allocate(size_t bytes) = 0;
  virtual void fill_zero(void* p, size_t bytes, Stream& s) = 0;
  // Copies between this device and the host, queued on `s`. copy_to_host returns when `dst` holds the
  // data (the host is about to read it); copy_from_host may return before the copy is done (the
  // source stays alive until the stream has passed it: it is a value of the running graph).
  virtual void copy_to_host(const Tensor& src, void* dst, Stream& s) = 0;
  virtual void copy_from_host(const void* src, Tensor& dst, Stream& s) = 0;

  // The stream kernels of this backend run on.
  virtual Stream& stream() = 0;
  virtual std::unique_ptr<Stream> create_stream() = 0;
  virtual std::unique_ptr<Event> create_event() = 0;
  virtual void set_profiler(ProfilerHook* hook) { (void)hook; }
  // Called by the executor around each node that runs on this backend, also when it fails: the CUDA
  // backend opens an NVTX range named after the node, so that an Nsight Systems timeline reads as the
  // model. The default does nothing.
  virtual void node_begin(const KernelInfo& node) { (void)node; }
  virtual void node_end() {}
  // Device graphs (CUDA graphs): the work queued on stream() between begin_capture() and end_capture()
  // is recorded, not run, into one graph that replay() launches again with the same device pointers.
  // begin_capture() returns false where the backend has none; end_capture() returns null when the work
  // could not be captured (a kernel synchronised, memory had to be allocated): it then did not run.
  virtual bool begin_capture() { return false; }
  virtual std::shared_ptr<void> end_capture() { return nullptr; }
  virtual void replay(const std::shared_ptr<void>& graph) { (void)graph; }
  // Device time of the replays of a run (the profiler's untraced and traced runs alike): with
  // time_replays(true), replay() holds the device at a gate until the whole graph is submitted, then
  // times it with events, so a launch the host is slow to submit (a traced one) does not count.
  // last_replay_device_us() is that time for the last replay, once the stream finished (0 where the
  // last run did not replay or was not timed).
  virtual void time_replays(bool on) { (void)on; }
  virtual double last_replay_device_us() { return 0; }
  // The device work each node added to the graph end_capture() just returned: one list per node that
  // ran on this backend under the capture (node_begin/node_end), in the order they ran. Empty where the
  // backend does not keep it; a traced replay is then not attributed to nodes.
  virtual std::vector<std::vector<CapturedWork>> capture_layout() { return {}; }
  // Times each boundary between the nodes of `graph` (end_capture's) by stamped replays (BoundaryTimes),
  // `repeats` replays per boundary; false (with out.note saying why) where the backend cannot. The
  // replays recompute the graph from the buffers it reads, as a replay does.
  virtual bool stamp_boundaries(const std::shared_ptr<void>& graph,
                                const std::vector<std::vector<CapturedWork>>& layout, int repeats,
                                BoundaryTimes& out) {
    (void)graph, (void)layout, (void)repeats;
    out.note = "the device cannot stamp replays";
    return false;
  }
  // Kernel-level tracing of a profiled run (CUPTI on CUDA): trace_begin() returns whether this run is
  // traced; the work launched while trace_push(id) is open belongs to `id`; trace_end(), called once the
  // stream has finished, returns every piece of it with its device time. Device times of each node are
  // then the work's own, without the gaps between launches that events around the node count too.
  virtual bool trace_begin() { return false; }
  virtual void trace_push(uint64_t id) { (void)id; }
  virtual void trace_pop() {}
  virtual std::vector<TraceRecord> trace_end() { return {}; }
};

// A tensor of `dtype` and `shape` in `b`'s memory (uninitialised).
Tensor allocate_on(Backend& b, DataType dtype, Shape shape);
// A copy of a host tensor on backend `b` (the tensor itself when `b` is the host), synchronised.
Tensor to_device(Backend& b, const Tensor& host);
// A host copy of a tensor held by `b` (the tensor itself when `b` is the host), synchronised.
Tensor to_host(Backend& b, const Tensor& t);

// The built-in CPU backend: the kernels of KernelRegistry::cpu().
// `reference_only`: only the reference kernels (for checking the fast ones against them).
std::unique_ptr<Backend> make_cpu_backend(bool reference_only = false);

}  // namespace tessera::rt
