#include "backends/cuda/cuda_backend.h"

#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/fault_injection.h"
#include "backends/cuda/kernel_trace.h"
#include "backends/cuda/replay_stamps.h"
#include "runtime/backend_loader.h"
#include "runtime/fused_from.h"

namespace tessera::cuda {

// A captured graph as the session holds it: the executable graph replay() launches, and the captured
// graph it was made from, kept so that a traced replay's records (which name graph nodes) can be tied to
// the nodes the capture recorded (CaptureLayout's keys are that graph's node handles).
struct GraphHandle {
  cudaGraphExec_t exec = nullptr;
  cudaGraph_t graph = nullptr;
  std::vector<std::vector<rt::CapturedWork>> layout;
  bool traced_instance = false;  // instantiated while CUPTI traced (see replay())
  ~GraphHandle() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

namespace {

class CudaEvent : public rt::Event {
 public:
  CudaEvent() { check(cudaEventCreate(&e_), "cudaEventCreate"); }
  ~CudaEvent() override { cudaEventDestroy(e_); }
  void record(rt::Stream& s) override { check(cudaEventRecord(e_, native(s)), "cudaEventRecord"); }
  void synchronize() override { check(cudaEventSynchronize(e_), "cudaEventSynchronize"); }
  double elapsed_ms(const rt::Event& since) const override {
    const auto& s = static_cast<const CudaEvent&>(since);
    check(cudaEventSynchronize(e_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, s.e_, e_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

std::string human(size_t bytes) {
  return bytes >= (size_t{1} << 20) ? fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20))
                                    : fmt::format("{} bytes", bytes);
}

}  // namespace

CudaStream::CudaStream(int device) {
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
}

CudaStream::~CudaStream() {
  if (s_) cudaStreamDestroy(s_);
}

void CudaStream::synchronize() {
  check(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
}

CudaBackend::CudaBackend(int device, passes::Precision precision) : device_(device) {
  check(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  name_ = p.name;
  stream_ = std::make_unique<CudaStream>(device);
  table_.precision = precision;
  register_cuda_kernels(table_);
  if (const char* f = std::getenv("TESSERA_CUDA_FAULT_NODE")) fault_node_ = f;
}

CudaBackend::~CudaBackend() {
  if (stream_) cudaStreamSynchronize(static_cast<cudaStream_t>(stream_->native()));
}

// Stream-ordered: a block freed by one tensor is reused by the next allocation on the same stream
// without a device-wide synchronisation. Out of memory leaves the backend usable (the error is
// cleared), so a smaller run can follow in the same process.
std::shared_ptr<void> CudaBackend::allocate(size_t bytes) {
  void* p = nullptr;
  if (capturing_) {
    // Not stream-ordered while a graph is captured (it would become part of the graph): a plain
    // allocation, and the capture is given up (its addresses would not be stable).
    allocated_while_capturing_ = true;
    if (cudaMalloc(&p, std::max<size_t>(bytes, 1)) != cudaSuccess) {
      cudaGetLastError();
      throw rt::OutOfMemory(fmt::format("out of GPU memory on cuda:{} allocating {}", device_, human(bytes)));
    }
    return {p, [](void* q) { cudaFree(q); }};
  }
  cudaStream_t s = native(*stream_);
  cudaError_t e = cudaMallocAsync(&p, std::max<size_t>(bytes, 1), s);
  // Any other error is a sticky one left by an earlier kernel (an illegal address): not memory.
  if (e != cudaSuccess && e != cudaErrorMemoryAllocation)
    throw rt::KernelError(
        fmt::format("CUDA error on cuda:{} (from this or an earlier node) when allocating {}: {}", device_,
                    human(bytes), cudaGetErrorString(e)));
  if (e != cudaSuccess) {
    cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw rt::OutOfMemory(fmt::format("out of GPU memory on cuda:{} allocating {} ({} free of {}): {}",
                                      device_, human(bytes), human(free_b), human(total_b),
                                      cudaGetErrorString(e)));
  }
  return {p, [s](void* q) { cudaFreeAsync(q, s); }};
}

void CudaBackend::fill_zero(void* p, size_t bytes, rt::Stream& s) {
  check(cudaMemsetAsync(p, 0, bytes, native(s)), "cudaMemsetAsync");
}

void CudaBackend::copy_to_host(const rt::Tensor& src, void* dst, rt::Stream& s) {
  stage_.to_host(dst, src.raw(), src.nbytes(), native(s));
}

void CudaBackend::copy_from_host(const void* src, rt::Tensor& dst, rt::Stream& s) {
  stage_.to_device(dst.raw(), src, dst.nbytes(), native(s));
}

std::unique_ptr<rt::Stream> CudaBackend::create_stream() {
  return std::make_unique<CudaStream>(device_);
}

std::unique_ptr<rt::Event> CudaBackend::create_event() {
  return std::make_unique<CudaEvent>();
}

// Relaxed mode: other threads' CUDA calls (a plain cudaMalloc above) stay legal during the capture.
// TESSERA_CUDA_GRAPHS=off declines every capture: the nodes then run one by one from the host, each
// inside its NVTX range, so that an Nsight Systems timeline shows every layer's range over its kernels
// (a replay shows one range for the whole graph: docs/cuda.md, Timeline).
bool CudaBackend::begin_capture() {
  if (const char* g = std::getenv("TESSERA_CUDA_GRAPHS"); g && std::string_view(g) == "off") return false;
  cudaStream_t s = native(*stream_);
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  capturing_ = true;
  allocated_while_capturing_ = false;
  layout_.begin();
  last_layout_.clear();
  return true;
}

std::shared_ptr<void> CudaBackend::end_capture() {
  capturing_ = false;
  cudaGraph_t g = nullptr;
  cudaError_t e = cudaStreamEndCapture(native(*stream_), &g);
  if (e != cudaSuccess || !g || allocated_while_capturing_) {
    cudaGetLastError();  // a capture a kernel broke (it synchronised): the stream is usable again
    if (g) cudaGraphDestroy(g);
    return nullptr;
  }
  auto h = std::make_shared<GraphHandle>();
  h->graph = g;
  e = cudaGraphInstantiate(&h->exec, g, 0);
  if (e != cudaSuccess) {
    cudaGetLastError();
    h->exec = nullptr;
    return nullptr;
  }
  h->layout = layout_.take();
  h->traced_instance = tracing_;
  last_layout_ = h->layout;
  return h;
}

// The first traced replay of a graph instantiated before CUPTI traced: instantiated again from the kept
// captured graph (the same nodes and pointers), so that CUPTI, active now, sees the executable graph made
// and records its kernels. The stream is idle (each run ends synchronised); where instantiation fails,
// the old executable graph stays.
void CudaBackend::reinstantiate(GraphHandle& h) {
  h.traced_instance = true;
  cudaGraphExec_t exec = nullptr;
  if (cudaGraphInstantiate(&exec, h.graph, 0) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  cudaGraphExecDestroy(h.exec);
  h.exec = exec;
}

std::vector<std::vector<rt::CapturedWork>> CudaBackend::capture_layout() {
  return std::move(last_layout_);
}

// One NVTX range for the whole graph: a replay launches no node from the host, so the timeline shows
// the graph's kernels under it (the layers' names come from the profile's attribution, not from NVTX).
void CudaBackend::replay(const std::shared_ptr<void>& graph) {
  auto* h = static_cast<GraphHandle*>(graph.get());
  if (!tracing_) KernelTrace::instance().idle();
  if (tracing_ && !h->traced_instance) reinstantiate(*h);
  nvtxRangePushA("tessera: CUDA graph replay");
  cudaStream_t s = native(*stream_);
  const bool timed = time_replays_ && replay_timer_.begin(s);
  cudaError_t e = cudaGraphLaunch(h->exec, s);
  if (timed) replay_timer_.end(s);
  nvtxRangePop();
  check(e, "cudaGraphLaunch");
  if (tracing_) traced_graph_ = graph;
}

// Untraced (CUPTI's kinds off, as for any untraced replay): the stamps are what is measured.
bool CudaBackend::stamp_boundaries(const std::shared_ptr<void>& graph,
                                   const std::vector<std::vector<rt::CapturedWork>>& layout, int repeats,
                                   rt::BoundaryTimes& out) {
  auto* h = static_cast<GraphHandle*>(graph.get());
  if (tracing_) {
    out.note = "the run is traced";
    return false;
  }
  KernelTrace::instance().idle();
  nvtxRangePushA("tessera: stamped replays");
  const bool ok = cuda::stamp_boundaries(h->graph, layout, repeats, native(*stream_), replay_timer_, out);
  nvtxRangePop();
  return ok;
}

void CudaBackend::time_replays(bool on) {
  time_replays_ = on;
  replay_timer_.forget();
}

// NVTX ranges cost a call into an empty stub unless a tool (Nsight Systems) is attached, so they are
// always on: the timeline shows each layer by its ONNX node name.
namespace {

// The node named `name`, or a fused node that replaced it.
bool is_or_fused_from(const ir::Node& n, const std::string& name) {
  if (n.name == name) return true;
  auto from = rt::fused_from(n);
  return std::find(from.begin(), from.end(), name) != from.end();
}

}  // namespace

void CudaBackend::node_begin(const rt::KernelInfo& node) {
  if (!tracing_) KernelTrace::instance().idle();
  const ir::Node& n = node.node();
  nvtxRangePushA(n.name.empty() ? n.op_type.c_str() : n.name.c_str());
  if (!fault_node_.empty() && is_or_fused_from(n, fault_node_))
    launch_illegal_address_kernel(static_cast<cudaStream_t>(stream_->native()));
}

void CudaBackend::node_end() {
  nvtxRangePop();
  if (capturing_) layout_.mark(stream_->native());
}

// Tracing needs the CUPTI library; TESSERA_CUPTI=off keeps event timing (for comparing the two).
bool CudaBackend::trace_begin() {
  const char* env = std::getenv("TESSERA_CUPTI");
  if (env && std::string_view(env) == "off") return false;
  tracing_ = KernelTrace::instance().start();
  return tracing_;
}

void CudaBackend::trace_push(uint64_t id) {
  KernelTrace::instance().push(id);
}

void CudaBackend::trace_pop() {
  KernelTrace::instance().pop();
}

// A replay's records name CUPTI's ids of the graph nodes that ran them: those of the captured graph's
// nodes become the capture's keys; any other (a node of the instantiated copy) becomes 0, and the work
// is then attributed by launch order (runtime/replay_trace.h).
std::vector<rt::TraceRecord> CudaBackend::trace_end() {
  std::vector<rt::TraceRecord> records = KernelTrace::instance().stop();
  tracing_ = false;
  std::shared_ptr<void> graph = std::move(traced_graph_);
  std::vector<std::pair<uint64_t, uint64_t>> ids;
  if (graph) ids = cupti_ids_of(static_cast<GraphHandle*>(graph.get())->layout);
  for (rt::TraceRecord& r : records) {
    if (!r.graph_node) continue;
    auto it = std::lower_bound(ids.begin(), ids.end(), std::make_pair(r.graph_node, uint64_t{0}));
    r.graph_node = it != ids.end() && it->first == r.graph_node ? it->second : 0;
  }
  return records;
}

}  // namespace tessera::cuda

namespace {

void say(char* error, size_t size, const std::string& text) {
  if (!error || size == 0) return;
  std::strncpy(error, text.c_str(), size - 1);
  error[size - 1] = '\0';
}

}  // namespace

extern "C" __attribute__((visibility("default"))) tessera::rt::Backend* tessera_backend_create(
    int interface_version, const tessera::rt::BackendOptions* options, char* error, size_t error_size) {
  using tessera::rt::kBackendInterfaceVersion;
  if (interface_version != kBackendInterfaceVersion) {
    say(error, error_size,
        fmt::format("libtessera_cuda.so implements backend interface {}, tessera asks for {}",
                    kBackendInterfaceVersion, interface_version));
    return nullptr;
  }
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    say(error, error_size,
        e != cudaSuccess ? fmt::format("no usable CUDA device ({})", cudaGetErrorString(e))
                         : "no CUDA device");
    cudaGetLastError();
    return nullptr;
  }
  int device = options ? options->device : 0;
  if (device < 0 || device >= count) {
    say(error, error_size, fmt::format("there is no CUDA device {} (this machine has {})", device, count));
    return nullptr;
  }
  try {
    return new tessera::cuda::CudaBackend(device,
                                          options ? options->precision : tessera::passes::Precision::kFp16);
  } catch (const std::exception& ex) {
    say(error, error_size, ex.what());
    return nullptr;
  }
}
