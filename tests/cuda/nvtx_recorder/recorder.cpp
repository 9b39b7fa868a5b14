// An NVTX v3 injection library for the tests (tests/cuda/nvtx_test.cpp): what Nsight Systems would see,
// without Nsight Systems. A process started with NVTX_INJECTION64_PATH naming this library loads it at
// its first NVTX call (each library that includes the NVTX headers does so once, with its own function
// table) and calls InitializeInjectionNvtx2 with the NVTX export-table getter; we point the core
// module's range and mark entries at our own functions, which append one line an event to an in-memory
// log that the test reads through tessera_nvtx_log().
//   push <thread> <message>   nvtxRangePushA / nvtxRangePushEx (ASCII messages; others as "?")
//   pop <thread>              nvtxRangePop
//   mark <thread> <message>   nvtxMarkA / nvtxMarkEx
// Written from the NVTX headers' description of the injection interface (nvtxDetail/nvtxInit.h,
// nvtxTypes.h): the callbacks export table, NVTX_CB_MODULE_CORE and its NVTX_CBID_CORE_* slots.
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>
#include <string>

namespace {

std::mutex mu;
std::string events;    // the log
std::string snapshot;  // what tessera_nvtx_log() last returned
thread_local int depth = 0;

void add(const char* kind, const char* message) {
  const auto tid = static_cast<long>(syscall(SYS_gettid));
  std::lock_guard<std::mutex> lock(mu);
  events += kind;
  events += ' ';
  events += std::to_string(tid);
  if (message) {
    events += ' ';
    events += message;
  }
  events += '\n';
}

const char* ascii(const nvtxEventAttributes_t* a) {
  if (!a) return "?";
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) return a->message.ascii;
  return "?";
}

// nvtxRangePush returns the level of the range it opened (0 for the outermost), nvtxRangePop the level
// of the one it closed, or a negative value where there was none.
int NVTX_API push_a(const char* message) {
  add("push", message ? message : "");
  return depth++;
}

int NVTX_API push_ex(const nvtxEventAttributes_t* a) {
  add("push", ascii(a));
  return depth++;
}

int NVTX_API pop() {
  add("pop", nullptr);
  return depth > 0 ? --depth : -1;
}

void NVTX_API mark_a(const char* message) {
  add("mark", message ? message : "");
}

void NVTX_API mark_ex(const nvtxEventAttributes_t* a) {
  add("mark", ascii(a));
}

template <class F>
void set(NvtxFunctionTable table, unsigned size, unsigned id, F fn) {
  if (id <= size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  if (!get_table) return 0;
  const auto* cb = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (!cb || cb->struct_size < sizeof(NvtxExportTableCallbacks) || !cb->GetModuleFunctionTable) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || !table) return 0;
  set(table, size, NVTX_CBID_CORE_RangePushA, push_a);
  set(table, size, NVTX_CBID_CORE_RangePushEx, push_ex);
  set(table, size, NVTX_CBID_CORE_RangePop, pop);
  set(table, size, NVTX_CBID_CORE_MarkA, mark_a);
  set(table, size, NVTX_CBID_CORE_MarkEx, mark_ex);
  add("init", nullptr);
  return 1;
}

// The log so far; valid until the next call.
__attribute__((visibility("default"))) const char* tessera_nvtx_log() {
  std::lock_guard<std::mutex> lock(mu);
  snapshot = events;
  return snapshot.c_str();
}

__attribute__((visibility("default"))) void tessera_nvtx_clear() {
  std::lock_guard<std::mutex> lock(mu);
  events.clear();
}

}  // extern "C"
