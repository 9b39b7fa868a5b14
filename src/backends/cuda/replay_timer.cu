#include "backends/cuda/replay_timer.h"

namespace tessera::cuda {

namespace {

// The device's global nanosecond clock, the clock of CUPTI's timestamps and of CUDA events.
__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Waits until the host has written `generation` (or a later one) to the flag. The host opens the gate
// on every path after queueing it; the time limit (2 s) only keeps a host that died in between from
// leaving the device spinning. Where `opened` is given, the time the gate opened is written there.
__global__ void gate_kernel(const volatile uint32_t* flag, uint32_t generation, uint64_t* opened) {
  const uint64_t limit = global_ns() + 2'000'000'000ull;
  while (static_cast<int32_t>(*flag - generation) < 0 && global_ns() < limit) __nanosleep(500);
  if (opened) *opened = global_ns();
}

// A stamped replay's stamp (replay_stamps.h): the clock when the work before it is done.
__global__ void stamp_kernel(uint64_t* at) {
  *at = global_ns();
}

}  // namespace

const void* stamp_kernel_address() {
  return reinterpret_cast<const void*>(&stamp_kernel);
}

ReplayTimer::~ReplayTimer() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (flag_) cudaFreeHost(const_cast<uint32_t*>(flag_));
}

bool ReplayTimer::ready() {
  if (flag_) return true;
  if (failed_) return false;
  void* host = nullptr;
  failed_ = cudaEventCreate(&start_) != cudaSuccess || cudaEventCreate(&stop_) != cudaSuccess ||
            cudaHostAlloc(&host, sizeof(uint32_t), cudaHostAllocMapped) != cudaSuccess;
  if (!failed_) {
    *static_cast<volatile uint32_t*>(host) = 0;
    void* device = nullptr;
    failed_ = cudaHostGetDevicePointer(&device, host, 0) != cudaSuccess;
    flag_device_ = static_cast<uint32_t*>(device);
  }
  if (failed_) {
    cudaGetLastError();
    if (host) cudaFreeHost(host);
    return false;
  }
  flag_ = static_cast<volatile uint32_t*>(host);
  return true;
}

bool ReplayTimer::begin(cudaStream_t s, uint64_t* opened) {
  timed_ = false;
  if (!ready()) return false;
  ++generation_;
  gate_kernel<<<1, 1, 0, s>>>(flag_device_, generation_, opened);
  if (cudaGetLastError() != cudaSuccess || cudaEventRecord(start_, s) != cudaSuccess) {
    *flag_ = generation_;
    cudaGetLastError();
    return false;
  }
  return true;
}

void ReplayTimer::end(cudaStream_t s) {
  timed_ = cudaEventRecord(stop_, s) == cudaSuccess;
  __sync_synchronize();  // the launch's submissions before the gate opens
  *flag_ = generation_;
  if (!timed_) cudaGetLastError();
}

double ReplayTimer::elapsed_us() {
  if (!timed_) return 0;
  float ms = 0;
  if (cudaEventSynchronize(stop_) != cudaSuccess || cudaEventElapsedTime(&ms, start_, stop_) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return ms * 1000.0;
}

}  // namespace tessera::cuda
