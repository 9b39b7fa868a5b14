// Run-time compilation of generated CUDA sources: NVRTC compiles a source for the current device's
// architecture into a cubin, the runtime loads it as a context-independent library. Compiled kernels are
// cached in memory for the process and on disk beside the cuDNN algorithm cache
// ($XDG_CACHE_HOME/tessera/nvrtc/, else ~/.cache/tessera/nvrtc/), keyed by a hash of the source, the
// architecture and the NVRTC version, so a second session skips the compiler (about 0.1-0.3 s a source).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace tessera::cuda {

// NVRTC or the driver could not compile or load a source; the message carries the compiler's log.
class NvrtcError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel of a compiled source, launchable in any context of the device it was compiled for.
class CompiledKernel {
 public:
  CompiledKernel() = default;
  explicit CompiledKernel(void* kernel) : kernel_(kernel) {}
  explicit operator bool() const { return kernel_ != nullptr; }
  // Launches with the kernel's parameters as cuLaunchKernel takes them (pointers to each argument).
  void launch(unsigned grid, unsigned block, void** args, cudaStream_t s) const;

 private:
  void* kernel_ = nullptr;  // cudaKernel_t
};

// The kernel `name` (extern "C") of `source`, compiled for the current device; NvrtcError on failure.
// Thread-safe.
CompiledKernel compile_kernel(const std::string& source, const std::string& name);

}  // namespace tessera::cuda
