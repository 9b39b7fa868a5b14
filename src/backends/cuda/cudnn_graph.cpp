#include "backends/cuda/cudnn_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cfloat>
#include <cstdint>
#include <map>
#include <mutex>

#include "backends/cuda/conv_cudnn.h"

namespace tessera::cuda {

namespace {

// An owned backend descriptor.
struct Desc {
  cudnnBackendDescriptor_t d = nullptr;
  explicit Desc(cudnnBackendDescriptorType_t type) {
    if (cudnnBackendCreateDescriptor(type, &d) != CUDNN_STATUS_SUCCESS) d = nullptr;
  }
  ~Desc() {
    if (d) cudnnBackendDestroyDescriptor(d);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
};

// Sets attributes and finalizes, remembering the first failure: a graph cuDNN does not take is simply
// not offered, whatever step declined it.
struct Builder {
  bool ok = true;
  int calls = 0;       // attribute sets and finalizes so far
  int failed_at = -1;  // the first that failed (for diagnostics)
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  template <class V>
  void set(const Desc& desc, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
           int64_t count, const V* values) {
    record(desc.d ? cudnnBackendSetAttribute(desc.d, name, type, count, const_cast<V*>(values))
                  : CUDNN_STATUS_ALLOC_FAILED);
  }
  template <class V>
  void set1(const Desc& desc, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, V value) {
    set(desc, name, type, 1, &value);
  }
  void desc(const Desc& d, cudnnBackendAttributeName_t name, const Desc& value) {
    set1(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, value.d);
  }
  void finalize(const Desc& d) { record(d.d ? cudnnBackendFinalize(d.d) : CUDNN_STATUS_ALLOC_FAILED); }
  void record(cudnnStatus_t st) {
    if (ok && st != CUDNN_STATUS_SUCCESS) {
      ok = false;
      failed_at = calls;
      status = st;
    }
    ++calls;
  }
};

// Place mode * 1000 + position in cuDNN's heuristic lists of an engine known to be pathological.
constexpr int kSlowFallback = 1000;

// Session build time: at most this many runtime-compiled plans are finalized (compiled) per graph.
constexpr int kMaxCompiled = 2;

std::atomic<uint64_t> finalized{0};  // conv_graph_plans_finalized()

// Unique ids of the graph's tensors in the variant pack.
enum Uid : int64_t { kX = 1, kW, kB, kZ, kY, kConv = 101, kAfterZ, kAfterB };

}  // namespace

// Everything an execution plan was made from, kept while any plan of it lives.
struct ConvGraphPlan::Descs {
  std::vector<std::unique_ptr<Desc>> all;  // tensors, operations, the graph, heuristics, engine configs
  std::vector<int64_t> uids;               // X, W, [B], [Z], Y: the order run() passes pointers in
  Desc& add(cudnnBackendDescriptorType_t type) {
    all.push_back(std::make_unique<Desc>(type));
    return *all.back();
  }
};

namespace {

using Descs = ConvGraphPlan::Descs;

const Desc& tensor(Descs& g, Builder& b, int64_t uid, cudnnDataType_t type, std::array<int64_t, 4> dims,
                   std::array<int64_t, 4> strides, bool is_virtual) {
  Desc& t = g.add(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  b.set1(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, type);
  b.set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
  b.set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
  b.set1(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid);
  b.set1(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, int64_t{16});
  b.set1(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, is_virtual);
  b.finalize(t);
  return t;
}

// Dims [N, C, H, W] of a channels-last tensor, with its strides.
std::array<int64_t, 4> nhwc_strides(int64_t c, int64_t h, int64_t w) {
  return {h * w * c, 1, w * c, c};
}

// A pointwise node y = op(x[, b]) with its descriptor.
void pointwise(Descs& g, Builder& b, std::vector<const Desc*>& ops, cudnnPointwiseMode_t mode, const Desc& x,
               const Desc* other, const Desc& y, const ConvGraphSpec* clip) {
  Desc& pw = g.add(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  b.set1(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode);
  b.set1(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT);
  if (clip) {  // ReLU with clips: Clip [p0, p1], or ReLU as [0, the largest float]
    const bool c = clip->act == ConvAct::kClip;
    const double lower = c ? clip->p0 : 0.0, upper = c ? clip->p1 : FLT_MAX, slope = 0.0;
    b.set1(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_DOUBLE, lower);
    b.set1(pw, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_DOUBLE, upper);
    b.set1(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_DOUBLE, slope);
  }
  b.finalize(pw);
  Desc& op = g.add(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  b.desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
  b.desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  if (other) b.desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *other);
  b.desc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
  b.finalize(op);
  ops.push_back(&op);
}

// The operation graph: conv (float32 virtual output), + Z, + bias, then ReLU/clip; the last node writes Y.
const Desc* build_graph(cudnnHandle_t h, const ConvGraphSpec& s, Descs& g, Builder& b) {
  const cudnnDataType_t t = cudnn_type(s.type);
  const int64_t cg = s.c / s.groups;
  const auto ydims = std::array<int64_t, 4>{s.n, s.m, s.oh, s.ow};
  const auto ystrides = nhwc_strides(s.m, s.oh, s.ow);
  const Desc& x = tensor(g, b, kX, t, {s.n, s.c, s.h, s.w}, nhwc_strides(s.c, s.h, s.w), false);
  const Desc& w = tensor(g, b, kW, t, {s.m, cg, s.kh, s.kw}, nhwc_strides(cg, s.kh, s.kw), false);
  const Desc& y = tensor(g, b, kY, t, ydims, ystrides, false);
  g.uids = {kX, kW};
  const int stages = (s.z ? 1 : 0) + (s.bias ? 1 : 0) + (s.act != ConvAct::kNone ? 1 : 0);
  int left = stages;
  // The tensor a stage writes: Y for the last one, else a float32 virtual tensor.
  auto out = [&](int64_t uid) -> const Desc& {
    return --left == 0 ? y : tensor(g, b, uid, CUDNN_DATA_FLOAT, ydims, ystrides, true);
  };

  Desc& conv = g.add(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  b.set1(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, int64_t{2});
  b.set1(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT);
  b.set1(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, CUDNN_CROSS_CORRELATION);
  b.set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, s.dilations);
  b.set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, s.strides);
  b.set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, s.pads);
  b.set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, s.pads);
  b.finalize(conv);

  std::vector<const Desc*> ops;
  const Desc& conv_y = stages == 0 ? y : tensor(g, b, kConv, CUDNN_DATA_FLOAT, ydims, ystrides, true);
  Desc& cop = g.add(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  b.desc(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
  b.desc(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
  b.desc(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, conv_y);
  b.desc(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
  b.set1(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1.f);
  b.set1(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 0.f);
  b.finalize(cop);
  ops.push_back(&cop);

  const Desc* cur = &conv_y;
  if (s.z) {
    const Desc& z = tensor(g, b, kZ, t, ydims, ystrides, false);
    const Desc& next = out(kAfterZ);
    pointwise(g, b, ops, CUDNN_POINTWISE_ADD, *cur, &z, next, nullptr);
    cur = &next;
  }
  if (s.bias) {
    const Desc& bias = tensor(g, b, kB, t, {1, s.m, 1, 1}, {s.m, 1, s.m, s.m}, false);
    const Desc& next = out(kAfterB);
    pointwise(g, b, ops, CUDNN_POINTWISE_ADD, *cur, &bias, next, nullptr);
    cur = &next;
  }
  if (s.act != ConvAct::kNone) pointwise(g, b, ops, CUDNN_POINTWISE_RELU_FWD, *cur, nullptr, out(0), &s);
  if (s.bias) g.uids.push_back(kB);
  if (s.z) g.uids.push_back(kZ);
  g.uids.push_back(kY);

  Desc& graph = g.add(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const Desc* op : ops) raw.push_back(op->d);
  b.set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(raw.size()),
        raw.data());
  if (h) b.set1(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, h);
  b.finalize(graph);
  return b.ok ? &graph : nullptr;
}

struct EngineNotes {
  bool acceptable = false;       // no FFT or Winograd: they round more (conv_cudnn.h), as for the legacy
  bool runtime_compiled = true;  // finalizing compiles a kernel (NVRTC): hundreds of ms each
};

EngineNotes engine_notes(cudnnBackendDescriptor_t cfg) {
  EngineNotes out;
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  int64_t got = 0;
  if (!engine.d || cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                            1, &got, &engine.d) != CUDNN_STATUS_SUCCESS)
    return out;
  std::array<cudnnBackendBehaviorNote_t, 32> behavior{};
  int64_t nb = 0;
  if (cudnnBackendGetAttribute(engine.d, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                               static_cast<int64_t>(behavior.size()), &nb,
                               behavior.data()) == CUDNN_STATUS_SUCCESS) {
    out.runtime_compiled = false;
    for (int64_t i = 0; i < nb && i < static_cast<int64_t>(behavior.size()); ++i)
      out.runtime_compiled |= behavior[static_cast<size_t>(i)] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
  }
  std::array<cudnnBackendNumericalNote_t, 32> notes{};
  int64_t count = 0;
  if (cudnnBackendGetAttribute(engine.d, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               static_cast<int64_t>(notes.size()), &count,
                               notes.data()) != CUDNN_STATUS_SUCCESS)
    return out;
  for (int64_t i = 0; i < count && i < static_cast<int64_t>(notes.size()); ++i) {
    switch (notes[static_cast<size_t>(i)]) {
      case CUDNN_NUMERICAL_NOTE_FFT:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13:
        return out;
      default:
        break;
    }
  }
  out.acceptable = true;
  return out;
}

// The engine configurations cuDNN's heuristic `mode` lists for the graph, in its order.
std::vector<Desc*> heuristic_configs(Descs& g, const Desc& graph, cudnnBackendHeurMode_t mode) {
  Builder b;
  Desc& heur = g.add(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  b.desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
  b.set1(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode);
  b.finalize(heur);
  int64_t count = 0;
  if (!b.ok || cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                        0, &count, nullptr) != CUDNN_STATUS_SUCCESS)
    return {};
  count = std::min<int64_t>(count, 64);
  std::vector<Desc*> cfgs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    Desc& cfg = g.add(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    if (!cfg.d) return {};
    cfgs.push_back(&cfg);
    raw.push_back(cfg.d);
  }
  int64_t got = 0;
  if (count == 0 ||
      cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                               &got, raw.data()) != CUDNN_STATUS_SUCCESS)
    return {};
  cfgs.resize(static_cast<size_t>(std::clamp<int64_t>(got, 0, count)));
  return cfgs;
}

}  // namespace

bool conv_graph_expressible(const ConvGraphSpec& s) {
  const bool act_ok =
      s.act == ConvAct::kNone || s.act == ConvAct::kRelu || (s.act == ConvAct::kClip && s.p0 < s.p1);
  const bool type_ok = s.type == rt::DataType::kFloat16 || s.type == rt::DataType::kBFloat16;
  return act_ok && type_ok && (s.bias || s.z || s.act != ConvAct::kNone) && s.groups == 1 && s.n > 0 &&
         s.c > 0 && s.m > 0 && s.oh > 0 && s.ow > 0;
}

ConvGraphPlan::ConvGraphPlan(std::shared_ptr<Descs> graph, cudnnBackendDescriptor_t plan, int64_t workspace,
                             int index)
    : graph_(std::move(graph)), plan_(plan), workspace_(workspace), index_(index) {}

ConvGraphPlan::~ConvGraphPlan() {
  if (plan_) cudnnBackendDestroyDescriptor(plan_);
}

cudnnStatus_t ConvGraphPlan::run(cudnnHandle_t h, const void* x, const void* w, const void* b, const void* z,
                                 void* y, void* workspace) const {
  std::vector<void*> ptrs;
  for (int64_t uid : graph_->uids) {
    switch (uid) {
      case kX:
        ptrs.push_back(const_cast<void*>(x));
        break;
      case kW:
        ptrs.push_back(const_cast<void*>(w));
        break;
      case kB:
        ptrs.push_back(const_cast<void*>(b));
        break;
      case kZ:
        ptrs.push_back(const_cast<void*>(z));
        break;
      default:
        ptrs.push_back(y);
    }
  }
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  if (!pack.d) return CUDNN_STATUS_ALLOC_FAILED;
  const auto n = static_cast<int64_t>(ptrs.size());
  cudnnStatus_t st = cudnnBackendSetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                              CUDNN_TYPE_VOID_PTR, n, ptrs.data());
  if (st == CUDNN_STATUS_SUCCESS)
    st = cudnnBackendSetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n,
                                  graph_->uids.data());
  if (st == CUDNN_STATUS_SUCCESS)
    st = cudnnBackendSetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                  &workspace);
  if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(pack.d);
  if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendExecute(h, plan_, pack.d);
  return st;
}

std::vector<std::unique_ptr<ConvGraphPlan>> conv_graph_plans(cudnnHandle_t h, const ConvGraphSpec& s, int max,
                                                             size_t max_workspace, int only,
                                                             std::string* why) {
  std::vector<std::unique_ptr<ConvGraphPlan>> plans;
  const auto say = [&](std::string text) {
    if (why) *why = std::move(text);
  };
  if (!conv_graph_expressible(s) || max <= 0) {
    say("not expressible as a graph");
    return plans;
  }
  auto g = std::make_shared<Descs>();
  Builder b;
  const Desc* graph = build_graph(h, s, *g, b);
  if (!graph) {
    say(fmt::format("building the graph failed at step {}: {}", b.failed_at, cudnnGetErrorString(b.status)));
    return plans;
  }
  int listed = 0, rejected = 0, failed = 0;
  cudnnStatus_t last = CUDNN_STATUS_SUCCESS;
  // Heuristic A first; its fallback list where A offers nothing that finalizes. A place in the list is
  // mode * 1000 + position, so that a cached choice names its list.
  constexpr cudnnBackendHeurMode_t kModes[] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
  for (int mi = 0; mi < 2 && plans.empty(); ++mi) {
    if (only >= 0 && only / 1000 != mi) continue;
    std::vector<Desc*> cfgs = heuristic_configs(*g, *graph, kModes[mi]);
    listed += static_cast<int>(cfgs.size());
    int compiled = 0;  // runtime-compiled candidates tried so far
    for (size_t i = 0; i < cfgs.size() && static_cast<int>(plans.size()) < max; ++i) {
      const int index = mi * 1000 + static_cast<int>(i);
      if (only >= 0 && index != only) continue;
      // The fallback list's first engine ran MobileNetV2's 1x1 + bias + ReLU6 graphs 10-300x slower than
      // the other paths on the H100 (cuDNN 9.14), and once was timed faster than it ran: never offered.
      if (index == kSlowFallback) {
        ++rejected;
        continue;
      }
      const EngineNotes notes = engine_notes(cfgs[i]->d);
      if (!notes.acceptable || (notes.runtime_compiled && compiled >= kMaxCompiled && only < 0)) {
        ++rejected;
        continue;
      }
      compiled += notes.runtime_compiled ? 1 : 0;
      cudnnBackendDescriptor_t plan = nullptr;
      if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) !=
          CUDNN_STATUS_SUCCESS)
        continue;
      int64_t ws = 0, got = 0;
      Builder pb;  // the same failure bookkeeping for the plan's steps
      pb.record(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
      pb.record(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]->d));
      if (pb.ok) pb.record(cudnnBackendFinalize(plan));
      if (pb.ok) finalized.fetch_add(1, std::memory_order_relaxed);
      if (pb.ok)
        pb.record(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                           1, &got, &ws));
      if (!pb.ok || ws < 0 || static_cast<size_t>(ws) > max_workspace) {
        ++failed;
        if (!pb.ok) last = pb.status;
        cudnnBackendDestroyDescriptor(plan);
        continue;
      }
      plans.push_back(std::make_unique<ConvGraphPlan>(g, plan, ws, index));
    }
  }
  if (plans.empty())
    say(fmt::format(
        "cuDNN listed {} engine configurations: {} left out (FFT/Winograd, compile limit), {} did not "
        "finalize (last: {})",
        listed, rejected, failed, cudnnGetErrorString(last)));
  return plans;
}

namespace {

struct PlanCache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<ConvGraphPlan>> plans;  // by device|key|place
};

PlanCache& plan_cache() {
  static auto* c = new PlanCache;  // never destroyed: see cudnn_graph.h
  return *c;
}

std::string plan_key(const std::string& key, int index) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) cudaGetLastError();
  return fmt::format("{}|{}|{}", device, key, index);
}

}  // namespace

SharedPlan shared_conv_graph_plan(cudnnHandle_t h, const ConvGraphSpec& s, const std::string& key,
                                  int index) {
  const std::string k = plan_key(key, index);
  PlanCache& c = plan_cache();
  {
    std::lock_guard lock(c.mu);
    if (auto it = c.plans.find(k); it != c.plans.end()) return {it->second, true};
  }
  // Built outside the lock (a runtime-compiled engine takes long); two sessions building the same plan at
  // once both build it, and the first one kept is shared from then on.
  auto plans = conv_graph_plans(h, s, 1, kMaxConvWorkspace, index);
  if (plans.empty()) return {};
  std::shared_ptr<ConvGraphPlan> plan = std::move(plans.front());
  std::lock_guard lock(c.mu);
  auto [it, added] = c.plans.emplace(k, std::move(plan));
  return {it->second, !added};
}

void share_conv_graph_plan(const std::string& key, std::shared_ptr<ConvGraphPlan> plan) {
  if (!plan) return;
  const std::string k = plan_key(key, plan->index());
  PlanCache& c = plan_cache();
  std::lock_guard lock(c.mu);
  c.plans.emplace(k, std::move(plan));
}

uint64_t conv_graph_plans_finalized() {
  return finalized.load(std::memory_order_relaxed);
}

}  // namespace tessera::cuda

// For tests (tests/cuda/conv_plan_cache_test.cpp), found with dlsym in the loaded backend library.
extern "C" __attribute__((visibility("default"))) uint64_t tessera_cuda_conv_plans_finalized() {
  return tessera::cuda::conv_graph_plans_finalized();
}
