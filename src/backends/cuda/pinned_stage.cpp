#include "backends/cuda/pinned_stage.h"

#include <algorithm>
#include <cstring>

#include "backends/cuda/cuda_check.h"

namespace tessera::cuda {

PinnedStage::~PinnedStage() {
  for (int i = 0; i < 2; ++i) {
    if (done_[i]) {
      cudaEventSynchronize(done_[i]);
      cudaEventDestroy(done_[i]);
    }
    if (buf_[i]) cudaFreeHost(buf_[i]);
  }
}

bool PinnedStage::ready() {
  if (buf_[0] || failed_) return !failed_;
  for (int i = 0; i < 2; ++i) {
    if (cudaHostAlloc(&buf_[i], kChunk, cudaHostAllocDefault) != cudaSuccess ||
        cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming) != cudaSuccess) {
      cudaGetLastError();
      failed_ = true;  // copies go direct from then on
      return false;
    }
  }
  return true;
}

void PinnedStage::to_device(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  if (bytes < kDirectBelow || !ready()) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync (to device)");
    return;
  }
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(src);
  for (size_t off = 0, k = 0; off < bytes; off += kChunk, ++k) {
    size_t n = std::min(kChunk, bytes - off);
    int b = static_cast<int>(k % 2);
    check(cudaEventSynchronize(done_[b]), "cudaEventSynchronize");  // the buffer's last DMA is done
    std::memcpy(buf_[b], in + off, n);
    check(cudaMemcpyAsync(out + off, buf_[b], n, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync (to device)");
    check(cudaEventRecord(done_[b], s), "cudaEventRecord");
  }
}

void PinnedStage::to_host(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  if (bytes < kDirectBelow || !ready()) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync (to host)");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    return;
  }
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(src);
  size_t chunks = (bytes + kChunk - 1) / kChunk;
  auto queue = [&](size_t k) {  // DMA of chunk k into its buffer
    int b = static_cast<int>(k % 2);
    size_t off = k * kChunk, n = std::min(kChunk, bytes - off);
    check(cudaMemcpyAsync(buf_[b], in + off, n, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync (to host)");
    check(cudaEventRecord(done_[b], s), "cudaEventRecord");
  };
  queue(0);
  for (size_t k = 0; k < chunks; ++k) {
    int b = static_cast<int>(k % 2);
    check(cudaEventSynchronize(done_[b]), "cudaEventSynchronize");
    if (k + 1 < chunks) queue(k + 1);  // the other buffer: its previous chunk was copied out already
    size_t off = k * kChunk, n = std::min(kChunk, bytes - off);
    std::memcpy(out + off, buf_[b], n);
  }
}

}  // namespace tessera::cuda
