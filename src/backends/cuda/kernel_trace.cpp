#include "backends/cuda/kernel_trace.h"

#include <cuda_runtime.h>
#include <cupti.h>
#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace tessera::cuda {

namespace {

constexpr size_t kBufferBytes = 4 << 20;
constexpr size_t kSpareBuffers = 3;  // zeroed ahead of each traced run
constexpr size_t kAlign = 8;
constexpr CUpti_ExternalCorrelationKind kKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
// API records are needed for the external correlation records (one per API call under a pushed id);
// runtime and driver both, since cuDNN and cuBLASLt launch through the driver API.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,    CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

struct Work {
  uint32_t correlation;
  uint64_t start_ns, end_ns;
  std::string name;
  rt::WorkKind kind;
  uint64_t graph_node;  // CUPTI's id of the graph node that ran it; 0 when launched directly
};

// What the buffer callbacks collected (CUPTI calls them from its own thread).
struct Collected {
  std::mutex mu;
  std::vector<Work> work;
  std::unordered_map<uint32_t, uint64_t> external;  // API correlation id -> node id
};

Collected& collected() {
  static Collected c;
  return c;
}

// Activity buffers, zeroed before CUPTI gets them (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER):
// otherwise CUPTI zeroes each buffer itself in the thread that launches, inside the traced run (4 MiB,
// about a millisecond). Spares are zeroed when a trace starts; a returned buffer is zeroed where it was
// written and kept for the next request.
struct BufferPool {
  std::mutex mu;
  std::vector<uint8_t*> spare;
};

BufferPool& pool() {
  static BufferPool p;
  return p;
}

uint8_t* zeroed_buffer() {
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
  if (b) std::memset(b, 0, kBufferBytes);
  return b;
}

void fill_pool() {
  BufferPool& p = pool();
  std::lock_guard lock(p.mu);
  while (p.spare.size() < kSpareBuffers)
    if (uint8_t* b = zeroed_buffer()) {
      p.spare.push_back(b);
    } else {
      break;
    }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  {
    BufferPool& p = pool();
    std::lock_guard lock(p.mu);
    if (!p.spare.empty()) {
      *buffer = p.spare.back();
      p.spare.pop_back();
    }
  }
  if (!*buffer) *buffer = zeroed_buffer();
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

const char* memcpy_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "Memcpy DtoD";
    default:
      return "Memcpy";
  }
}

void take(const CUpti_Activity* r, Collected& c) {
  switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
      c.work.push_back({k->correlationId, k->start, k->end, short_kernel_name(k->name), rt::WorkKind::kKernel,
                        k->graphNodeId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
      c.work.push_back({m->correlationId, m->start, m->end, memcpy_name(m->copyKind), rt::WorkKind::kMemcpy,
                        m->graphNodeId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(r);
      c.work.push_back({m->correlationId, m->start, m->end, "Memset", rt::WorkKind::kMemset, m->graphNodeId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(r);
      if (e->externalKind == kKind) c.external[e->correlationId] = e->externalId;
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Collected& c = collected();
  {
    std::lock_guard lock(c.mu);
    CUpti_Activity* r = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) take(r, c);
  }
  std::memset(buffer, 0, valid);
  BufferPool& p = pool();
  std::lock_guard lock(p.mu);
  if (p.spare.size() < 2 * kSpareBuffers) {
    p.spare.push_back(buffer);
  } else {
    std::free(buffer);
  }
}

std::string cupti_error(CUptiResult r, const char* what) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return fmt::format("{}: {}", what, s ? s : "unknown CUPTI error");
}

}  // namespace

namespace {

// The kernels, copies and memsets of a graph node (a child graph's, recursively) that `seen` (sorted)
// does not hold yet, added to it.
void collect_new(cudaGraphNode_t node, std::vector<uint64_t>& seen, std::vector<rt::CapturedWork>& out) {
  auto key = reinterpret_cast<uint64_t>(node);
  auto at = std::lower_bound(seen.begin(), seen.end(), key);
  if (at != seen.end() && *at == key) return;
  seen.insert(at, key);
  cudaGraphNodeType type{};
  if (cudaGraphNodeGetType(node, &type) != cudaSuccess) return;
  switch (type) {
    case cudaGraphNodeTypeKernel:
      out.push_back({key, rt::WorkKind::kKernel});
      break;
    case cudaGraphNodeTypeMemcpy:
      out.push_back({key, rt::WorkKind::kMemcpy});
      break;
    case cudaGraphNodeTypeMemset:
      out.push_back({key, rt::WorkKind::kMemset});
      break;
    case cudaGraphNodeTypeGraph: {
      cudaGraph_t child = nullptr;
      size_t n = 0;
      if (cudaGraphChildGraphNodeGetGraph(node, &child) != cudaSuccess ||
          cudaGraphGetNodes(child, nullptr, &n) != cudaSuccess)
        return;
      std::vector<cudaGraphNode_t> nodes(n);
      if (cudaGraphGetNodes(child, nodes.data(), &n) != cudaSuccess) return;
      for (cudaGraphNode_t c : nodes) collect_new(c, seen, out);
      break;
    }
    default:  // events, empty nodes, host nodes, allocations: nothing a trace records
      break;
  }
}

}  // namespace

void CaptureLayout::begin() {
  nodes_.clear();
  seen_.clear();
}

void CaptureLayout::mark(void* stream) {
  std::vector<rt::CapturedWork>& work = nodes_.emplace_back();
  cudaStreamCaptureStatus status{};
  cudaGraph_t graph = nullptr;
  size_t n = 0;
  if (cudaStreamGetCaptureInfo(static_cast<cudaStream_t>(stream), &status, nullptr, &graph) != cudaSuccess ||
      status != cudaStreamCaptureStatusActive || !graph ||
      cudaGraphGetNodes(graph, nullptr, &n) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  std::vector<cudaGraphNode_t> nodes(n);
  if (cudaGraphGetNodes(graph, nodes.data(), &n) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  for (cudaGraphNode_t node : nodes) collect_new(node, seen_, work);
}

std::vector<std::pair<uint64_t, uint64_t>> cupti_ids_of(
    const std::vector<std::vector<rt::CapturedWork>>& layout) {
  std::vector<std::pair<uint64_t, uint64_t>> ids;
  for (const auto& node : layout)
    for (const rt::CapturedWork& w : node) {
      uint64_t id = 0;
      if (cuptiGetGraphNodeId(reinterpret_cast<CUgraphNode>(w.key), &id) == CUPTI_SUCCESS && id)
        ids.emplace_back(id, w.key);
    }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string short_kernel_name(const char* name) {
  if (!name) return "?";
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string s = status == 0 && demangled ? demangled : name;
  std::free(demangled);
  // "void ns::kernel<half, 4>(args...)" -> "ns::kernel<half, 4>": drop the return type and arguments,
  // and the "(anonymous namespace)::" our kernels sit in (its parenthesis is not the argument list's).
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  const std::string anon = "(anonymous namespace)::";
  for (size_t p = s.find(anon); p != std::string::npos; p = s.find(anon)) s.erase(p, anon.size());
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    if (s[i] == '>') --depth;
    if (s[i] == '(' && depth == 0) return s.substr(0, i);
  }
  return s;
}

KernelTrace& KernelTrace::instance() {
  static KernelTrace t;
  return t;
}

bool KernelTrace::start() {
  if (running_) return true;
  if (!registered_) {
    if (CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
        r != CUPTI_SUCCESS) {
      error_ = cupti_error(r, "cuptiActivityRegisterCallbacks");
      return false;
    }
    uint8_t zeroed = 1;
    size_t bytes = sizeof zeroed;
    cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &bytes, &zeroed);
    registered_ = true;
  }
  fill_pool();
  for (CUpti_ActivityKind k : kKinds) {
    if (enabled_) break;
    if (CUptiResult r = cuptiActivityEnable(k); r != CUPTI_SUCCESS) {
      error_ = cupti_error(r, "cuptiActivityEnable");
      for (CUpti_ActivityKind d : kKinds) cuptiActivityDisable(d);
      return false;
    }
  }
  enabled_ = true;
  {
    Collected& c = collected();
    std::lock_guard lock(c.mu);
    c.work.clear();
    c.external.clear();
  }
  running_ = true;
  return true;
}

// The activity kinds stay enabled from one traced run to the next (a profile's traced runs follow each
// other): enabling them again would make each run's first launches pay CUPTI's setup. Untraced work
// turns them off first.
void KernelTrace::idle() {
  if (!enabled_ || running_) return;
  for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);
  enabled_ = false;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  Collected& c = collected();
  std::lock_guard lock(c.mu);
  c.work.clear();
  c.external.clear();
}

void KernelTrace::push(uint64_t id) {
  if (running_) cuptiActivityPushExternalCorrelationId(kKind, id);
}

void KernelTrace::pop() {
  uint64_t last = 0;
  if (running_) cuptiActivityPopExternalCorrelationId(kKind, &last);
}

std::vector<rt::TraceRecord> KernelTrace::stop() {
  if (!running_) return {};
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  running_ = false;
  Collected& c = collected();
  std::lock_guard lock(c.mu);
  std::vector<rt::TraceRecord> out;
  out.reserve(c.work.size());
  for (auto& w : c.work) {
    auto it = c.external.find(w.correlation);
    // Launched outside any node (a weight's upload, say); a graph's work without its launch's id is
    // still the replay's (the executor launches graphs only under kReplayTraceId while tracing).
    if (it == c.external.end() && !w.graph_node) continue;
    uint64_t id = it != c.external.end() ? it->second : rt::kReplayTraceId;
    // Under a replay's id only the graph's own work counts: a direct launch there is the replay
    // timer's gate (replay_timer.h).
    if (id == rt::kReplayTraceId && !w.graph_node) continue;
    out.push_back({id, static_cast<double>(w.start_ns) / 1e3,
                   static_cast<double>(w.end_ns - w.start_ns) / 1e3, std::move(w.name), w.kind,
                   w.graph_node});
  }
  c.work.clear();
  c.external.clear();
  return out;
}

}  // namespace tessera::cuda
