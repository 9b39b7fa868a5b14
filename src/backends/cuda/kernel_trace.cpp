#include "backends/cuda/kernel_trace.h"

#include <cupti.h>
#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace tessera::cuda {

namespace {

constexpr size_t kBufferBytes = 8 << 20;
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

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
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
      c.work.push_back({k->correlationId, k->start, k->end, short_kernel_name(k->name)});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
      c.work.push_back({m->correlationId, m->start, m->end, memcpy_name(m->copyKind)});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(r);
      c.work.push_back({m->correlationId, m->start, m->end, "Memset"});
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
  std::free(buffer);
}

std::string cupti_error(CUptiResult r, const char* what) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return fmt::format("{}: {}", what, s ? s : "unknown CUPTI error");
}

}  // namespace

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
    registered_ = true;
  }
  for (CUpti_ActivityKind k : kKinds) {
    if (CUptiResult r = cuptiActivityEnable(k); r != CUPTI_SUCCESS) {
      error_ = cupti_error(r, "cuptiActivityEnable");
      for (CUpti_ActivityKind d : kKinds) cuptiActivityDisable(d);
      return false;
    }
  }
  {
    Collected& c = collected();
    std::lock_guard lock(c.mu);
    c.work.clear();
    c.external.clear();
  }
  running_ = true;
  return true;
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
  for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);
  running_ = false;
  Collected& c = collected();
  std::lock_guard lock(c.mu);
  std::vector<rt::TraceRecord> out;
  out.reserve(c.work.size());
  for (auto& w : c.work) {
    auto it = c.external.find(w.correlation);
    if (it == c.external.end()) continue;  // launched outside any node (a weight's upload, say)
    out.push_back({it->second, static_cast<double>(w.start_ns) / 1e3,
                   static_cast<double>(w.end_ns - w.start_ns) / 1e3, std::move(w.name)});
  }
  c.work.clear();
  c.external.clear();
  return out;
}

}  // namespace tessera::cuda
