// A convolution with its epilogue as one cuDNN v9 operation graph (backend descriptors): conv -> add Z
// -> add bias -> ReLU or clip, each a node; cuDNN's fusion engines (runtime-compiled or pre-built) run
// it as one kernel, so the output is written once, where cudnnConvolutionForward plus our epilogue
// kernel (conv_epilogue.h) writes and reads it again. MobileNetV2's 1x1 convolutions with bias and
// Clip(0, 6) are the case in point. Only the backend API that cuDNN 9.14 (the GPU machine) and 9.19 (the
// build machine's headers) share is used. NhwcConv times the plans against its older path at session
// build and keeps the faster (conv_nhwc_kernels.cpp); a graph cuDNN declines leaves the older path.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/conv_epilogue.h"
#include "runtime/tensor.h"

namespace tessera::cuda {

// One channels-last 2-D convolution and what follows it. Shapes as cuDNN sees them: X [n, h, w, c],
// W [m, kh, kw, c / groups], Y [n, oh, ow, m]; B [m] and Z (Y's shape) when `bias` / `z`.
struct ConvGraphSpec {
  rt::DataType type = rt::DataType::kFloat16;  // X, W, B, Z and Y; computed in float32
  int64_t n = 0, c = 0, h = 0, w = 0, m = 0, kh = 0, kw = 0, oh = 0, ow = 0, groups = 1;
  int64_t pads[2] = {0, 0}, strides[2] = {1, 1}, dilations[2] = {1, 1};  // symmetric pads
  bool bias = false, z = false;
  ConvAct act = ConvAct::kNone;  // kNone, kRelu or kClip [p0, p1]
  float p0 = 0.f, p1 = 0.f;
};

// Whether the graph path can express the spec at all (type, activation); cuDNN may still decline it.
bool conv_graph_expressible(const ConvGraphSpec& s);

// A finalized execution plan, with the descriptors it was made from.
class ConvGraphPlan {
 public:
  struct Descs;
  ConvGraphPlan(std::shared_ptr<Descs> graph, cudnnBackendDescriptor_t plan, int64_t workspace, int index);
  ~ConvGraphPlan();
  ConvGraphPlan(const ConvGraphPlan&) = delete;
  ConvGraphPlan& operator=(const ConvGraphPlan&) = delete;

  size_t workspace() const { return static_cast<size_t>(workspace_); }
  // Its place in cuDNN's heuristic list for the spec: what the disk cache keeps.
  int index() const { return index_; }
  // Runs on the handle's stream; b and z null where the spec has none. Pointers must be 16-byte aligned.
  cudnnStatus_t run(cudnnHandle_t h, const void* x, const void* w, const void* b, const void* z, void* y,
                    void* workspace) const;

 private:
  std::shared_ptr<Descs> graph_;
  cudnnBackendDescriptor_t plan_ = nullptr;
  int64_t workspace_ = 0;
  int index_ = 0;
};

// The first `max` plans cuDNN's heuristic lists for the spec that finalize (FFT and Winograd engines left
// out, as for the legacy algorithms; at most two runtime-compiled ones; workspace at most
// `max_workspace`), in its order; with `only` >= 0,
// just the plan at that place in the list (none when it no longer finalizes). Empty when cuDNN does not
// take the graph. Finalizing a runtime-compiled engine compiles it: session build time, never compute().
// `why`, when given, says why none was found.
std::vector<std::unique_ptr<ConvGraphPlan>> conv_graph_plans(cudnnHandle_t h, const ConvGraphSpec& s, int max,
                                                             size_t max_workspace, int only = -1,
                                                             std::string* why = nullptr);

// Finalized plans kept for the process, so that a second session (the studio rebuilding one, a test, a
// server) does not build again what an earlier one built: finalizing a plan costs milliseconds, and a
// runtime-compiled engine compiles a kernel (hundreds of ms). Keyed by the device, `key` (the disk cache's
// key: GPU, cuDNN version, shapes, epilogue) and the plan's place in cuDNN's heuristic list, which is
// what the disk cache remembers. A plan is finalized with the handle of the session that built it and
// run with the handle of the session running it (one per stream, same device): cuDNN binds a plan to a
// device, not to a stream; where it declines such a run, NhwcConv takes its older path (run_graph).
// The cache is never emptied (plans are small host objects; destroying them at exit could run after
// cuDNN is gone).
struct SharedPlan {
  std::shared_ptr<ConvGraphPlan> plan;  // null when cuDNN no longer finalizes the plan at that place
  bool reused = false;                  // taken from the process's cache (no plan was built)
};
SharedPlan shared_conv_graph_plan(cudnnHandle_t h, const ConvGraphSpec& s, const std::string& key, int index);
// Puts a plan built elsewhere (timed against others at session build) into the process's cache.
void share_conv_graph_plan(const std::string& key, std::shared_ptr<ConvGraphPlan> plan);
// Execution plans this process has finalized so far (every cudnnBackendFinalize of a plan that
// succeeded): what tests count to see a second session build reuse the first one's.
uint64_t conv_graph_plans_finalized();

}  // namespace tessera::cuda
