// com.tessera NhwcConv on cuDNN (ops/nhwc/nhwc.h): a 2-D convolution of channels-last X [N, H, W, C] with
// weights [M, kH, kW, C/group] (cuDNN's NHWC filter layout, reordered by the to_nhwc_layout pass) into
// channels-last Y, the layout of cuDNN's float16 tensor-core kernels: no transposes around each call.
//
// Per configuration (prepared at session build for static shapes): the descriptors and the algorithm,
// timed once (conv_cudnn.h), so that compute() only launches. Bias + Z + ReLU run in one
// cudnnConvolutionBiasActivationForward call; other activations (MobileNetV2's Clip 0..6, Sigmoid...)
// and bias/Z without ReLU run the convolution, then one epilogue kernel (conv_epilogue.h) over Y.
// Asymmetric pads are padded into a scratch copy first, as in the NCHW kernel. A depthwise convolution
// (group == C == M) may instead run our direct kernel (conv_depthwise.h), bias, Z and activation
// included: at session build both are timed on scratch buffers and the faster is kept (on disk too);
// TESSERA_CUDA_DEPTHWISE=own|cudnn|direct decides without timing (direct: our untiled kernel, for
// comparisons). A bias, Z and ReLU/Clip may instead run
// fused into the convolution as one cuDNN operation graph (cudnn_graph.h): its plans are timed against
// the path above at session build and the fastest kept (on disk too); TESSERA_CUDA_CONV_GRAPH=on|off
// decides without timing.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "backends/cuda/conv_algo_cache.h"
#include "backends/cuda/conv_cudnn.h"
#include "backends/cuda/conv_depthwise.h"
#include "backends/cuda/conv_depthwise_tiled.h"
#include "backends/cuda/conv_util.h"
#include "backends/cuda/cudnn_graph.h"
#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernel_util.h"
#include "ops/nn/window_kernel_util.h"

namespace tessera::cuda {

namespace {

// Whether a convolution whose bias + ReLU cuDNN's older path fuses has its operation-graph plans timed
// too (choose_graph): from 1 GFLOP per call, or as TESSERA_CUDA_CONV_GRAPH_RELU says.
bool time_relu_graphs(const ConvGraphSpec& g) {
  if (const char* env = std::getenv("TESSERA_CUDA_CONV_GRAPH_RELU")) {
    if (std::string_view(env) == "time") return true;
    if (std::string_view(env) == "off") return false;
  }
  const double flops = 2.0 * static_cast<double>(g.n * g.oh * g.ow * g.m) * static_cast<double>(g.kh * g.kw) *
                       static_cast<double>(g.c / g.groups);
  return flops >= 1e9;
}

// Operation-graph plans timed per configuration at session build.
constexpr int kGraphCandidates = 4;

// One configuration: out_shape is [N, oH, oW, M], work_shape the zero-padded input when pre_pad.
struct NhwcPlan : CudnnConvPlan {
  bool pre_pad = false;    // asymmetric pads
  bool depthwise = false;  // one filter per channel: our own kernel is a candidate
  bool own = false;        // ... and was timed faster than cuDNN: compute() runs it
  Depthwise dw;
  std::string key;                       // the configuration's algorithm-cache key
  ConvGraphSpec spec;                    // the configuration as a cuDNN operation graph would run it
  std::shared_ptr<ConvGraphPlan> graph;  // chosen at session build: conv + Z + bias + act in one plan
};

// Device memory for one timing at session build, freed when it goes.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    if (cudaMalloc(&p, std::max<size_t>(bytes, 1)) != cudaSuccess) p = nullptr;
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Mean milliseconds of `f` over a few runs on `s` after one warm-up; nullopt on any CUDA error.
template <class F>
std::optional<float> time_ms(cudaStream_t s, F f) {
  cudaEvent_t start = nullptr, stop = nullptr;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
    if (start) cudaEventDestroy(start);
    return std::nullopt;
  }
  constexpr int kRuns = 5;
  std::optional<float> ms;
  bool ok = f();
  ok = ok && cudaEventRecord(start, s) == cudaSuccess;
  for (int i = 0; i < kRuns && ok; ++i) ok = f();
  ok = ok && cudaEventRecord(stop, s) == cudaSuccess && cudaEventSynchronize(stop) == cudaSuccess;
  float total = 0;
  if (ok && cudaEventElapsedTime(&total, start, stop) == cudaSuccess && cudaGetLastError() == cudaSuccess)
    ms = total / kRuns;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

// The best of several interleaved timings of each candidate (time_ms each, warm-up included): rounds
// alternate between candidates so that none is timed alone while the GPU's clocks ramp up (the first
// H100 run chose paths 5x slower than the alternative when each was timed once, one after the other).
// A candidate that never gave a timing stays nullopt and must not be chosen.
std::vector<std::optional<float>> time_interleaved(cudaStream_t s,
                                                   const std::vector<std::function<bool()>>& fs) {
  constexpr int kRounds = 3;
  std::vector<std::optional<float>> best(fs.size());
  for (int r = 0; r < kRounds; ++r) {
    for (size_t i = 0; i < fs.size(); ++i) {
      auto t = time_ms(s, fs[i]);
      if (t && (!best[i] || *t < *best[i])) best[i] = t;
    }
  }
  cudaGetLastError();  // a candidate that failed to launch leaves no error behind
  return best;
}

class NhwcConvKernel : public rt::OpKernel {
 public:
  NhwcConvKernel(const rt::KernelInfo& info, bool tf32)
      : tf32_(tf32 && info.input_dtype(0) == rt::DataType::kFloat),
        attrs_(ops::kernels::read_window_attrs(info)),
        group_(info.get_int("group", 1)),
        act_(read_activation(info)),
        static_x_(static_input_shape(info, 0)),
        static_w_(static_input_shape(info, 1)),
        static_type_(info.input_dtype(0)),
        has_b_(info.has_input(2)),
        has_z_(info.has_input(3)) {
    set_relu(relu_);
  }

  void prepare(rt::PrepareContext& ctx) override {
    if (!static_x_ || !static_w_ || static_x_->size() != 4 || static_w_->size() != 4) return;
    try {
      CudnnHandle h = cudnn_handle(native(ctx.stream()));
      std::lock_guard lock(mu_);
      NhwcPlan& p = plan(h.handle, *static_x_, *static_w_, static_type_, true);
      if (p.depthwise) choose_depthwise(h.handle, p, *static_x_, native(ctx.stream()));
      if (!p.own && !p.empty) choose_graph(h.handle, p, native(ctx.stream()));
    } catch (const rt::KernelError&) {
      // Bad attributes or shapes: the first run reports them, naming the node.
    }
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor& w = ctx.input(1);
    const rt::Tensor* b = ctx.optional_input(2);
    const rt::Tensor* z = ctx.optional_input(3);
    const ElemType t = conv_input_type(ctx, x, w, b, z);
    if (x.rank() != 4 || w.rank() != 4)
      ctx.fail(fmt::format("X {} and W {} must both have rank 4 ([N, H, W, C] and [M, kH, kW, C/group])",
                           rt::shape_str(x.shape()), rt::shape_str(w.shape())));
    cudaStream_t s = native(ctx.stream());
    CudnnHandle h = cudnn_handle(s);
    std::lock_guard lock(mu_);
    NhwcPlan& p = plan(h.handle, x.shape(), w.shape(), x.dtype(), false);
    ctx.set_path(p.path);
    const int64_t m = p.out_shape[3];
    check_bias_and_z(ctx, b, z, m, p.out_shape);
    const bool fused = p.fused && b && act_.act == ConvAct::kRelu;
    if (p.empty) {
      empty_conv_output(ctx, x.dtype(), p.out_shape, b || z || act_.act != ConvAct::kNone);
      return;
    }
    if (p.own) {  // the depthwise kernel, bias, Z and activation included
      rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), p.out_shape);
      launch_depthwise_nhwc(t, x.raw(), w.raw(), b ? b->raw() : nullptr, z ? z->raw() : nullptr, y.raw(),
                            p.dw, act_, s);
      check_launch(ctx);
      return;
    }
    if (p.graph && (b != nullptr) == p.spec.bias && (z != nullptr) == p.spec.z &&
        run_graph(ctx, h.handle, p, x, w, b, z))
      return;
    rt::Tensor& y = fused && !z ? ctx.output(0, x.dtype(), p.out_shape)
                                : ctx.output_uninitialized(0, x.dtype(), p.out_shape);
    rt::Tensor ws = conv_workspace(ctx, p.workspace), work;
    const void* in = x.raw();
    if (p.pre_pad) in = zero_padded_input(ctx, t, x, p.work_shape, p.copy, work);
    const float one = 1.f, zero = 0.f;
    auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(p.algo);
    // conv + Z + bias, then ReLU, in one call (cuDNN declining it: the unfused path from now on)
    if (fused && conv_bias_relu({h.handle, p.d, p.bias, relu_, p.algo, ws.raw(), p.workspace, in, w.raw(),
                                 b->raw(), z ? z->raw() : nullptr, y.raw()},
                                p.fused))
      return;
    cudnnStatus_t st =
        cudnnConvolutionForward(h.handle, &one, p.d.x.d, in, p.d.w.d, w.raw(), p.d.conv.d, algo,
                                p.workspace ? ws.raw() : nullptr, p.workspace, &zero, p.d.y.d, y.raw());
    // An algorithm cuDNN accepted when planning but declines to run: the next one it takes, from now on.
    for (int tries = 1; declined(st) && tries < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++tries) {
      auto next = next_forward_algo(h.handle, p.d, x.dtype(), tf32_, p.algo);
      if (!next) break;
      p.algo = next->algo;
      p.workspace = next->workspace;
      p.path = fmt::format("cuDNN NHWC forward algo {} (fallback)", p.algo);
      ctx.set_path(p.path);
      ws = conv_workspace(ctx, p.workspace);
      st = cudnnConvolutionForward(h.handle, &one, p.d.x.d, in, p.d.w.d, w.raw(), p.d.conv.d,
                                   static_cast<cudnnConvolutionFwdAlgo_t>(p.algo),
                                   p.workspace ? ws.raw() : nullptr, p.workspace, &zero, p.d.y.d, y.raw());
    }
    check_cudnn(st, "cudnnConvolutionForward");
    if (!b && !z && act_.act == ConvAct::kNone) return;
    Epilogue e = act_;
    e.channels = m;
    e.inner = 1;
    launch_epilogue(t, y.raw(), b ? b->raw() : nullptr, z ? z->raw() : nullptr, y.numel(), e, s);
    check_launch(ctx);
  }

 private:
  // The chosen operation graph; false where it cannot run this time (unaligned pointers) or cuDNN
  // declines it now (then never again: the older path from now on).
  bool run_graph(rt::KernelContext& ctx, cudnnHandle_t h, NhwcPlan& p, const rt::Tensor& x,
                 const rt::Tensor& w, const rt::Tensor* b, const rt::Tensor* z) const {
    const auto al = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 == 0; };
    if (!al(x.raw()) || !al(w.raw()) || (b && !al(b->raw())) || (z && !al(z->raw()))) return false;
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), p.out_shape);
    if (!al(y.raw())) return false;
    rt::Tensor ws;
    if (p.graph->workspace() > 0)
      ws = ctx.scratch_uninitialized(rt::DataType::kUint8, {static_cast<int64_t>(p.graph->workspace())});
    const cudnnStatus_t st =
        p.graph->run(h, x.raw(), w.raw(), b ? b->raw() : nullptr, z ? z->raw() : nullptr, y.raw(), ws.raw());
    if (st == CUDNN_STATUS_SUCCESS) return true;
    if (!declined(st)) check_cudnn(st, "cudnnBackendExecute (convolution graph)");
    p.graph.reset();
    p.path = fmt::format("cuDNN NHWC forward algo {} (graph declined)", p.algo);
    ctx.set_path(p.path);
    return false;
  }

  // The older path as compute() runs it (fused call or convolution + epilogue), on scratch buffers.
  bool run_legacy(cudnnHandle_t h, const NhwcPlan& p, const void* x, const void* w, const void* b,
                  const void* z, void* y, void* ws, int64_t out_elems, cudaStream_t s) const {
    const float one = 1.f, zero = 0.f, alpha2 = z ? 1.f : 0.f;
    const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(p.algo);
    if (p.fused && b && act_.act == ConvAct::kRelu)
      return cudnnConvolutionBiasActivationForward(h, &one, p.d.x.d, x, p.d.w.d, w, p.d.conv.d, algo, ws,
                                                   p.workspace, &alpha2, p.d.y.d, z ? z : y, p.bias.d, b,
                                                   relu_.d, p.d.y.d, y) == CUDNN_STATUS_SUCCESS;
    if (cudnnConvolutionForward(h, &one, p.d.x.d, x, p.d.w.d, w, p.d.conv.d, algo, ws, p.workspace, &zero,
                                p.d.y.d, y) != CUDNN_STATUS_SUCCESS)
      return false;
    Epilogue e = act_;
    e.channels = p.out_shape[3];
    e.inner = 1;
    if (b || z || act_.act != ConvAct::kNone)
      launch_epilogue(*elem_type(static_type_), y, b, z, out_elems, e, s);
    return true;
  }

  // Times the operation-graph plans cuDNN offers for conv + Z + bias + activation against the older path,
  // on scratch buffers, once per configuration at session build; the choice is kept on disk (the plan by
  // its place in cuDNN's heuristic list). The older path stays wherever cuDNN declines the graph or the
  // timing cannot be made.
  void choose_graph(cudnnHandle_t h, NhwcPlan& p, cudaStream_t s) const {
    p.spec.bias = has_b_;
    p.spec.z = has_z_;
    if (p.pre_pad || !conv_graph_expressible(p.spec)) return;
    // Bias (+ Z) + ReLU is already one cuDNN call writing Y once; the graph's plans are timed against it
    // only for large convolutions (ResNet-50 at batch 32 on the H100: 1.25 -> 1.14 ms, its compute-bound
    // layers 350 -> 400 TFLOP/s, session build +0.2 s; at batch 1 the plans were no faster).
    // TESSERA_CUDA_CONV_GRAPH_RELU=time|off times them always or never.
    if (has_b_ && act_.act == ConvAct::kRelu && p.fused && !time_relu_graphs(p.spec)) return;
    // TESSERA_CUDA_CONV_GRAPH: off (never), on (the fastest plan, not timed against the older path, not
    // remembered), first (the first plan cuDNN lists that finalizes, untimed, remembered apart from the
    // timed choices: deterministic, for tests of the caches).
    const char* force = std::getenv("TESSERA_CUDA_CONV_GRAPH");
    const std::string mode = force ? force : "";
    if (mode == "off") return;
    const bool first = mode == "first";
    const std::string key = fmt::format("{}|graph2|b{}z{}|act{}:{}:{}{}", p.key, int{has_b_}, int{has_z_},
                                        static_cast<int>(act_.act), act_.p0, act_.p1, first ? "|first" : "");
    if (mode.empty() || first) {
      if (auto c = cached_algo(key)) {
        if (c->algo <= 0) return;
        // The plan an earlier session of this process built, else built now (cudnn_graph.h).
        SharedPlan sp = shared_conv_graph_plan(h, p.spec, key, c->algo - 1);
        if (!sp.plan) return;
        adopt(p, std::move(sp.plan), "cached");
        if (sp.reused) p.path += ", plan reused";  // "(cached)" stays as written: tests look for it
        return;
      }
    }
    std::string why;
    auto plans = conv_graph_plans(h, p.spec, first ? 1 : kGraphCandidates, kMaxConvWorkspace, -1, &why);
    if (plans.empty()) {
      if (mode.empty() || first) remember_algo(key, {0, 0});
      p.path += fmt::format(" (no graph: {})", why);
      return;
    }
    if (first) {
      std::shared_ptr<ConvGraphPlan> chosen = std::move(plans.front());
      remember_algo(key, {chosen->index() + 1, 0});
      share_conv_graph_plan(key, chosen);
      return adopt(p, std::move(chosen), "TESSERA_CUDA_CONV_GRAPH=first");
    }
    const bool forced = mode == "on";
    const ConvGraphSpec& g = p.spec;
    const size_t elem = rt::dtype_bytes(static_type_, 1);
    const int64_t in_elems = g.n * g.h * g.w * g.c, w_elems = g.m * g.kh * g.kw * (g.c / g.groups),
                  out_elems = g.n * g.oh * g.ow * g.m;
    size_t ws_bytes = p.workspace;
    for (const auto& q : plans) ws_bytes = std::max(ws_bytes, q->workspace());
    DeviceBuffer xb(static_cast<size_t>(in_elems) * elem), wb(static_cast<size_t>(w_elems) * elem),
        bb(static_cast<size_t>(g.m) * elem), zb(static_cast<size_t>(g.z ? out_elems : 1) * elem),
        yb(static_cast<size_t>(out_elems) * elem), ws(ws_bytes);
    // Forced on without a timing: the first plan cuDNN lists.
    const auto untimed = [&] {
      if (forced) adopt(p, std::move(plans), "TESSERA_CUDA_CONV_GRAPH, untimed");
    };
    if (!xb.p || !wb.p || !bb.p || !zb.p || !yb.p || !ws.p) return untimed();
    if (cudaMemsetAsync(xb.p, 0, static_cast<size_t>(in_elems) * elem, s) != cudaSuccess ||
        cudaMemsetAsync(wb.p, 0, static_cast<size_t>(w_elems) * elem, s) != cudaSuccess ||
        cudaMemsetAsync(bb.p, 0, static_cast<size_t>(g.m) * elem, s) != cudaSuccess ||
        (g.z && cudaMemsetAsync(zb.p, 0, static_cast<size_t>(out_elems) * elem, s) != cudaSuccess))
      return untimed();
    const void* bp = g.bias ? bb.p : nullptr;
    const void* zp = g.z ? zb.p : nullptr;
    // Candidate 0: the older path (left out when the graph is forced on); then each plan.
    std::vector<std::function<bool()>> fs;
    fs.emplace_back([&] { return run_legacy(h, p, xb.p, wb.p, bp, zp, yb.p, ws.p, out_elems, s); });
    for (const auto& q : plans)
      fs.emplace_back([&, plan = q.get()] {
        return plan->run(h, xb.p, wb.p, bp, zp, yb.p, ws.p) == CUDNN_STATUS_SUCCESS;
      });
    if (forced) fs.front() = [] { return false; };
    const auto times = time_interleaved(s, fs);
    if (!forced && !times[0]) return;  // the older path could not be timed: it stays, unrecorded
    std::optional<float> best = times[0];
    int best_i = -1;
    // A plan must beat the older path by 10% (timings at session build have misled before: the H100's
    // b1 run took a plan timed faster that ran 3x slower).
    if (best) *best *= 0.9f;
    for (size_t i = 0; i < plans.size(); ++i) {
      const auto& t = times[i + 1];
      if (t && (!best || *t < *best)) {
        best = t;
        best_i = static_cast<int>(i);
      }
    }
    if (forced && best_i < 0) return untimed();
    if (!forced) remember_algo(key, {best_i < 0 ? 0 : plans[static_cast<size_t>(best_i)]->index() + 1, 0});
    if (best_i < 0) return;
    std::shared_ptr<ConvGraphPlan> chosen = std::move(plans[static_cast<size_t>(best_i)]);
    if (!forced) share_conv_graph_plan(key, chosen);  // the next session of this process reuses it
    adopt(p, std::move(chosen), forced ? "TESSERA_CUDA_CONV_GRAPH, fastest plan" : "timed faster");
  }

  static void adopt(NhwcPlan& p, std::vector<std::unique_ptr<ConvGraphPlan>> plans, const char* why) {
    if (!plans.empty()) adopt(p, std::shared_ptr<ConvGraphPlan>(std::move(plans.front())), why);
  }

  static void adopt(NhwcPlan& p, std::shared_ptr<ConvGraphPlan> plan, const char* why) {
    if (!plan) return;
    p.graph = std::move(plan);
    p.path = fmt::format("cuDNN graph conv+epilogue, heuristic place {} ({})", p.graph->index(), why);
  }

  // Times cuDNN's path (its algorithm, then the epilogue with a bias) against our depthwise kernel on
  // scratch buffers, once per configuration at session build; the choice is kept on disk. cuDNN stays
  // wherever the timing cannot be made.
  void choose_depthwise(cudnnHandle_t h, NhwcPlan& p, const rt::Shape& x, cudaStream_t s) const {
    // TESSERA_CUDA_DEPTHWISE=own|cudnn|direct settles it without timing (tests, measurements; direct is
    // our kernel without the tiling).
    if (const char* force = std::getenv("TESSERA_CUDA_DEPTHWISE"); force && *force) {
      const std::string_view f(force);
      p.own = f == "own" || f == "direct";
      p.dw.tiled = f != "direct";
      if (p.own)
        p.path =
            fmt::format("own depthwise kernel{} (TESSERA_CUDA_DEPTHWISE)", f == "direct" ? " (direct)" : "");
      return;
    }
    // "3": cuDNN (0), the tiled kernel (1) and the direct one (2) timed against each other; choices
    // timed with fewer candidates are not reused.
    const std::string key = p.key + "|depthwise3";
    if (auto c = cached_algo(key)) {
      p.own = c->algo == 1 || c->algo == 2;
      p.dw.tiled = c->algo != 2;
      if (p.own) p.path = fmt::format("own depthwise kernel{} (timed faster)", p.dw.tiled ? "" : " (direct)");
      return;
    }
    auto t = elem_type(static_type_);
    if (!t) return;
    const size_t elem = rt::dtype_bytes(static_type_, 1);
    const int64_t c = x[3], taps = p.dw.kernel_h * p.dw.kernel_w;
    const int64_t in_elems =
        p.pre_pad ? p.work_shape[0] * p.work_shape[1] * p.work_shape[2] * c : x[0] * x[1] * x[2] * c;
    const int64_t out_elems = p.out_shape[0] * p.out_shape[1] * p.out_shape[2] * c;
    DeviceBuffer xb(static_cast<size_t>(in_elems) * elem), wb(static_cast<size_t>(c * taps) * elem),
        bb(static_cast<size_t>(c) * elem), yb(static_cast<size_t>(out_elems) * elem), ws(p.workspace);
    if (!xb.p || !wb.p || !bb.p || !yb.p || !ws.p) return;
    if (cudaMemsetAsync(xb.p, 0, static_cast<size_t>(in_elems) * elem, s) != cudaSuccess ||
        cudaMemsetAsync(wb.p, 0, static_cast<size_t>(c * taps) * elem, s) != cudaSuccess ||
        cudaMemsetAsync(bb.p, 0, static_cast<size_t>(c) * elem, s) != cudaSuccess)
      return;
    Epilogue e = act_;
    e.channels = c;
    e.inner = 1;
    const float one = 1.f, zero = 0.f;
    std::vector<std::function<bool()>> fs;
    fs.emplace_back([&] {
      if (cudnnConvolutionForward(h, &one, p.d.x.d, xb.p, p.d.w.d, wb.p, p.d.conv.d,
                                  static_cast<cudnnConvolutionFwdAlgo_t>(p.algo), ws.p, p.workspace, &zero,
                                  p.d.y.d, yb.p) != CUDNN_STATUS_SUCCESS)
        return false;
      launch_epilogue(*t, yb.p, bb.p, nullptr, out_elems, e, s);
      return true;
    });
    // The tiled kernel (where it applies: at batch 1 it has few blocks and the direct one wins) and the
    // direct one.
    Depthwise tiled = p.dw, direct = p.dw;
    tiled.tiled = true;
    direct.tiled = false;
    fs.emplace_back([&] {
      if (!depthwise_tiled_takes(tiled)) return false;
      launch_depthwise_nhwc(*t, xb.p, wb.p, bb.p, nullptr, yb.p, tiled, e, s);
      return true;
    });
    fs.emplace_back([&] {
      launch_depthwise_nhwc(*t, xb.p, wb.p, bb.p, nullptr, yb.p, direct, e, s);
      return true;
    });
    const auto times = time_interleaved(s, fs);
    if (!times[0]) return;  // cuDNN could not be timed: it stays, unrecorded
    int best = 0;
    for (int i = 1; i < 3; ++i)
      if (times[static_cast<size_t>(i)] && *times[static_cast<size_t>(i)] < *times[static_cast<size_t>(best)])
        best = i;
    p.own = best != 0;
    p.dw.tiled = best != 2;
    remember_algo(key, {best, 0});
    if (p.own) p.path = fmt::format("own depthwise kernel{} (timed faster)", p.dw.tiled ? "" : " (direct)");
  }

  NhwcPlan& plan(cudnnHandle_t h, const rt::Shape& x, const rt::Shape& w, rt::DataType dt,
                 bool benchmark) const {
    const rt::Shape key = conv_plan_key(x, w, dt);
    if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
    auto p = std::make_unique<NhwcPlan>();
    const int64_t n = x[0], hh = x[1], ww = x[2], c = x[3], m = w[0], kh = w[1], kw = w[2];
    if (group_ < 1 || c != w[3] * group_)
      throw rt::KernelError(fmt::format("input X has {} channels but W {} takes {} per group x {} groups", c,
                                        rt::shape_str(w), w[3], group_));
    if (m % group_ != 0)
      throw rt::KernelError(fmt::format("group {} does not divide W's {} output channels", group_, m));
    const std::vector<int64_t> in{hh, ww}, kernel{kh, kw};
    ops::kernels::WindowGeom g = ops::kernels::resolve_window(attrs_, in, kernel);
    p->out_shape = {n, g.out[0], g.out[1], m};
    std::vector<int64_t> pads{g.pads[0], g.pads[1]};
    int64_t in_h = hh, in_w = ww;
    if (g.pads[0] != g.pads[2] || g.pads[1] != g.pads[3]) {  // cuDNN's pads are symmetric
      p->pre_pad = true;
      in_h += g.pads[0] + g.pads[2];
      in_w += g.pads[1] + g.pads[3];
      p->work_shape = {n, in_h, in_w, c};
      p->copy.rank = 4;
      for (int d = 0; d < 4; ++d) {
        p->copy.x_dims[d] = x[static_cast<size_t>(d)];
        p->copy.y_dims[d] = p->work_shape[static_cast<size_t>(d)];
      }
      p->copy.shift[1] = -g.pads[0];
      p->copy.shift[2] = -g.pads[1];
      pads = {0, 0};
    }
    for (int64_t v : {n, c, m, g.out[0], g.out[1], kh, kw}) p->empty |= v == 0;
    if (p->empty) return *plans_.emplace(key, std::move(p)).first->second;
    const cudnnDataType_t t = cudnn_type(dt);
    p->d.x.set_nhwc(t, n, c, in_h, in_w);
    p->d.y.set_nhwc(t, n, m, g.out[0], g.out[1]);
    auto wi = to_int({m, w[3], kh, kw}, "weight shape");
    check_cudnn(cudnnSetFilter4dDescriptor(p->d.w.d, t, CUDNN_TENSOR_NHWC, wi[0], wi[1], wi[2], wi[3]),
                "cudnnSetFilter4dDescriptor");
    auto pi = to_int(pads, "pads"), si = to_int(g.strides, "strides"), di = to_int(g.dilations, "dilations");
    check_cudnn(cudnnSetConvolution2dDescriptor(p->d.conv.d, pi[0], pi[1], si[0], si[1], di[0], di[1],
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                "cudnnSetConvolution2dDescriptor");
    check_cudnn(cudnnSetConvolutionGroupCount(p->d.conv.d, static_cast<int>(group_)),
                "cudnnSetConvolutionGroupCount");
    p->bias.set(t, {1, m, 1, 1});
    std::string k =
        fmt::format("{}fwd|{}{}|nhwc|x{}|w{}|y{}|p{}|s{}|d{}|g{}", algo_key_prefix(), ir::dtype_name(dt),
                    tf32_ ? "-tf32" : "", std::vector<int64_t>{n, in_h, in_w, c}, w, p->out_shape, pads,
                    g.strides, g.dilations, group_);
    AlgoPick pick = choose_algo(h, p->d, true, dt, tf32_, k, benchmark, true);
    p->algo = pick.algo;
    p->workspace = pick.workspace;
    p->path = fmt::format("cuDNN NHWC forward algo {}{}", p->algo, p->pre_pad ? " + pad" : "");
    p->key = k;
    p->spec = {dt, n, c, in_h, in_w, m, kh, kw, g.out[0], g.out[1], group_};
    for (int i = 0; i < 2; ++i) {
      p->spec.pads[i] = pads[static_cast<size_t>(i)];
      p->spec.strides[i] = g.strides[static_cast<size_t>(i)];
      p->spec.dilations[i] = g.dilations[static_cast<size_t>(i)];
    }
    p->spec.act = act_.act;
    p->spec.p0 = act_.p0;
    p->spec.p1 = act_.p1;
    if (group_ == c && m == c && c > 0) {
      p->depthwise = true;
      p->dw = {n,
               c,
               hh,
               ww,
               g.out[0],
               g.out[1],
               static_cast<int>(kh),
               static_cast<int>(kw),
               g.strides[0],
               g.strides[1],
               g.dilations[0],
               g.dilations[1],
               g.pads[0],
               g.pads[1]};
    }
    return *plans_.emplace(key, std::move(p)).first->second;
  }

  bool tf32_;
  ops::kernels::WindowAttrs attrs_;
  int64_t group_;
  Epilogue act_;
  std::optional<rt::Shape> static_x_, static_w_;
  rt::DataType static_type_;
  bool has_b_, has_z_;
  ActDesc relu_;
  mutable std::mutex mu_;
  mutable std::map<rt::Shape, std::unique_ptr<NhwcPlan>> plans_;
};

// X, W and optionally B and Z of one float type; rank 4 where known; an activation the epilogue has.
bool nhwc_conv_supports(const rt::KernelInfo& info) {
  if (!conv_inputs_supported(info, 4) || !known_activation(info)) return false;
  for (size_t i : {size_t{0}, size_t{1}}) {
    const auto& shape = info.input_type(i).shape;
    if (shape && shape->size() != 4) return false;
  }
  return true;
}

}  // namespace

void register_nhwc_conv_kernels(KernelTable& t) {
  const bool tf32 = t.precision == passes::Precision::kTf32;
  t.add(cuda_def("NhwcConv", nhwc_conv_supports, [tf32](const rt::KernelInfo& i) -> rt::KernelPtr {
          return std::make_unique<NhwcConvKernel>(i, tf32);
        }).in_domain("com.tessera"));
}

}  // namespace tessera::cuda
