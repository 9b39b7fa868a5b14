// The CUDA backend: one GPU's memory (stream-ordered allocations from the device's memory pool, planned
// by the session into one arena per run), one non-blocking stream that every kernel of the session
// launches on, CUDA events for device-side layer times, and the kernels of this folder.
//
// Built as libtessera_cuda.so and loaded at run time (runtime/backend_loader.h), so that `tessera`
// itself needs no CUDA library and runs on machines without a GPU.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernel_trace.h"
#include "backends/cuda/pinned_stage.h"
#include "backends/cuda/replay_timer.h"
#include "runtime/backend.h"

namespace tessera::cuda {

class CudaStream : public rt::Stream {
 public:
  explicit CudaStream(int device);
  ~CudaStream() override;
  void synchronize() override;
  void* native() const override { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

struct GraphHandle;  // a captured graph (cuda_backend.cpp)

class CudaBackend : public rt::Backend {
 public:
  CudaBackend(int device, passes::Precision precision);
  ~CudaBackend() override;

  std::string_view name() const override { return "cuda"; }
  rt::Device device() const override { return {rt::DeviceKind::kCuda, device_}; }
  std::string device_name() const override { return name_; }
  const rt::KernelRegistry& kernels() const override { return table_.registry(); }
  bool input_on_host(const rt::KernelInfo& node, size_t input) const override {
    return table_.input_on_host(node, input);
  }
  bool output_on_host(const rt::KernelInfo& node, size_t output) const override {
    return table_.output_on_host(node, output);
  }

  std::shared_ptr<void> allocate(size_t bytes) override;
  void fill_zero(void* p, size_t bytes, rt::Stream& s) override;
  void copy_to_host(const rt::Tensor& src, void* dst, rt::Stream& s) override;
  void copy_from_host(const void* src, rt::Tensor& dst, rt::Stream& s) override;
  rt::Stream& stream() override { return *stream_; }
  std::unique_ptr<rt::Stream> create_stream() override;
  std::unique_ptr<rt::Event> create_event() override;
  bool begin_capture() override;
  std::shared_ptr<void> end_capture() override;
  void replay(const std::shared_ptr<void>& graph) override;
  void time_replays(bool on) override;
  double last_replay_device_us() override { return replay_timer_.elapsed_us(); }
  std::vector<std::vector<rt::CapturedWork>> capture_layout() override;
  bool stamp_boundaries(const std::shared_ptr<void>& graph,
                        const std::vector<std::vector<rt::CapturedWork>>& layout, int repeats,
                        rt::BoundaryTimes& out) override;
  void node_begin(const rt::KernelInfo& node) override;
  void node_end() override;
  bool trace_begin() override;
  void trace_push(uint64_t id) override;
  void trace_pop() override;
  std::vector<rt::TraceRecord> trace_end() override;

 private:
  int device_;
  std::string name_;
  KernelTable table_;
  bool capturing_ = false;
  bool allocated_while_capturing_ = false;
  CaptureLayout layout_;                                    // the capture's work per node (kernel_trace.h)
  std::vector<std::vector<rt::CapturedWork>> last_layout_;  // of the graph end_capture() returned last
  void reinstantiate(GraphHandle& h);
  bool tracing_ = false;
  bool time_replays_ = false;
  ReplayTimer replay_timer_;            // the gate and events of timed replays (replay_timer.h)
  std::shared_ptr<void> traced_graph_;  // the graph replayed while tracing, for its records' node ids
  std::unique_ptr<CudaStream> stream_;
  PinnedStage stage_;       // host copies through page-locked buffers
  std::string fault_node_;  // TESSERA_CUDA_FAULT_NODE (fault_injection.h)
};

}  // namespace tessera::cuda
