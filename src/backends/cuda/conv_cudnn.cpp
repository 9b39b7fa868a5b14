#include "backends/cuda/conv_cudnn.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <optional>

#include "backends/cuda/conv_algo_cache.h"
#include "backends/cuda/conv_epilogue.h"
#include "backends/cuda/kernel_util.h"

namespace tessera::cuda {

cudnnDataType_t cudnn_type(rt::DataType t) {
  switch (t) {
    case rt::DataType::kFloat16:
      return CUDNN_DATA_HALF;
    case rt::DataType::kBFloat16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

std::vector<int> to_int(const std::vector<int64_t>& v, const char* what) {
  std::vector<int> out;
  for (int64_t x : v) {
    if (x > INT_MAX || x < INT_MIN)
      throw rt::KernelError(fmt::format("{} {} is beyond cuDNN's 32-bit sizes", what, v));
    out.push_back(static_cast<int>(x));
  }
  return out;
}

TensorDesc::TensorDesc() {
  check_cudnn(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
}
TensorDesc::~TensorDesc() {
  cudnnDestroyTensorDescriptor(d);
}

void TensorDesc::set(cudnnDataType_t t, const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * std::max<int64_t>(dims[i + 1], 1);
  auto di = to_int(dims, "shape"), si = to_int(strides, "strides");
  check_cudnn(cudnnSetTensorNdDescriptor(d, t, static_cast<int>(di.size()), di.data(), si.data()),
              "cudnnSetTensorNdDescriptor");
}

void TensorDesc::set_nhwc(cudnnDataType_t t, int64_t n, int64_t c, int64_t h, int64_t w) {
  auto v = to_int({n, c, h, w, n * c * h * w}, "shape");
  check_cudnn(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, t, v[0], v[1], v[2], v[3]),
              "cudnnSetTensor4dDescriptor");
}

FilterDesc::FilterDesc() {
  check_cudnn(cudnnCreateFilterDescriptor(&d), "cudnnCreateFilterDescriptor");
}
FilterDesc::~FilterDesc() {
  cudnnDestroyFilterDescriptor(d);
}
ConvDesc::ConvDesc() {
  check_cudnn(cudnnCreateConvolutionDescriptor(&d), "cudnnCreateConvolutionDescriptor");
}
ConvDesc::~ConvDesc() {
  cudnnDestroyConvolutionDescriptor(d);
}
ActDesc::ActDesc() {
  check_cudnn(cudnnCreateActivationDescriptor(&d), "cudnnCreateActivationDescriptor");
}
ActDesc::~ActDesc() {
  cudnnDestroyActivationDescriptor(d);
}

// FusedConv's activation, applied by the epilogue kernel (every activation FusedConv has) or, for ReLU,
// by cudnnConvolutionBiasActivationForward.
Epilogue read_activation(const rt::KernelInfo& info) {
  Epilogue e;
  if (info.op_type() != "FusedConv" && info.op_type() != "NhwcConv") return e;
  std::string name = info.get_string("activation", "");
  std::vector<float> p = info.get_floats("activation_params", {});
  struct Entry {
    const char* name;
    ConvAct act;
    size_t params;
  };
  static const Entry kActs[] = {{"", ConvAct::kNone, 0},
                                {"Relu", ConvAct::kRelu, 0},
                                {"Tanh", ConvAct::kTanh, 0},
                                {"Sigmoid", ConvAct::kSigmoid, 0},
                                {"LeakyRelu", ConvAct::kLeakyRelu, 1},
                                {"Clip", ConvAct::kClip, 2},
                                {"HardSigmoid", ConvAct::kHardSigmoid, 2}};
  for (const auto& a : kActs) {
    if (name != a.name) continue;
    if (p.size() < a.params)
      throw rt::KernelError(
          fmt::format("activation {} needs {} activation_params, got {}", name, a.params, p.size()));
    e.act = a.act;
    if (a.params > 0) e.p0 = p[0];
    if (a.params > 1) e.p1 = p[1];
    return e;
  }
  throw rt::KernelError(fmt::format("unsupported activation '{}'", name));
}

bool known_activation(const rt::KernelInfo& info) {
  try {
    read_activation(info);
    return true;
  } catch (const rt::KernelError&) {
    return false;
  }
}

namespace {

bool excluded(int algo, bool forward, rt::DataType dt) {
  if (forward) {
    if (algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD) return dt != rt::DataType::kFloat;
    return algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT || algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
           algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
  }
  if (algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD) return dt != rt::DataType::kFloat;
  return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT || algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
         algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}

// Float32 on FMA-only kernels unless the session allows TF32; the suggestion otherwise.
// 16-bit types on tensor cores: with DEFAULT_MATH, cuDNN 9 ran float16 NHWC convolutions as float32
// NCHW kernels between conversions (seen on the H100). `strict` false relaxes that for the rare
// configuration no algorithm takes with TENSOR_OP_MATH.
cudnnMathType_t math_for(rt::DataType t, int suggested, bool tf32, bool strict = true) {
  if (t == rt::DataType::kFloat && !tf32) return CUDNN_FMA_MATH;
  if (t != rt::DataType::kFloat && strict) return CUDNN_TENSOR_OP_MATH;
  return suggested == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ? CUDNN_TENSOR_OP_MATH
                                                            : static_cast<cudnnMathType_t>(suggested);
}

// Workspace of `algo` under `math` (set on d.conv), or nullopt when cuDNN does not take the pair.
std::optional<size_t> workspace_for(cudnnHandle_t h, ConvDescs& d, bool forward, int algo,
                                    cudnnMathType_t math) {
  if (cudnnSetConvolutionMathType(d.conv.d, math) != CUDNN_STATUS_SUCCESS) return std::nullopt;
  size_t bytes = 0;
  cudnnStatus_t s =
      forward
          ? cudnnGetConvolutionForwardWorkspaceSize(h, d.x.d, d.w.d, d.conv.d, d.y.d,
                                                    static_cast<cudnnConvolutionFwdAlgo_t>(algo), &bytes)
          : cudnnGetConvolutionBackwardDataWorkspaceSize(
                h, d.w.d, d.x.d, d.conv.d, d.y.d, static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &bytes);
  if (s != CUDNN_STATUS_SUCCESS || bytes > kMaxConvWorkspace) return std::nullopt;
  return bytes;
}

struct Candidate {
  int algo, math;
};

// The candidates cuDNN ranks, fastest first: timed on the GPU, or by the heuristic.
std::vector<Candidate> ranked(cudnnHandle_t h, ConvDescs& d, bool forward, bool benchmark) {
  std::vector<Candidate> out;
  int found = 0;
  if (forward) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnStatus_t s =
        benchmark ? cudnnFindConvolutionForwardAlgorithm(h, d.x.d, d.w.d, d.conv.d, d.y.d,
                                                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf)
                  : cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.d, d.w.d, d.conv.d, d.y.d,
                                                           CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf);
    if (s != CUDNN_STATUS_SUCCESS) return out;  // the heuristic below still has every algorithm
    for (int i = 0; i < found; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS) out.push_back({perf[i].algo, perf[i].mathType});
    return out;
  }
  cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  check_cudnn(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                  h, d.w.d, d.x.d, d.conv.d, d.y.d, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf),
              "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  for (int i = 0; i < found; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS) out.push_back({perf[i].algo, perf[i].mathType});
  return out;
}

}  // namespace

std::optional<AlgoPick> next_forward_algo(cudnnHandle_t h, ConvDescs& d, rt::DataType dt, bool tf32,
                                          int after) {
  const int count = static_cast<int>(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  for (int k = 1; k < count; ++k) {
    const int a = (after + k) % count;
    if (excluded(a, true, dt)) continue;
    for (bool strict : {true, false})
      if (auto ws = workspace_for(h, d, true, a, math_for(dt, CUDNN_DEFAULT_MATH, tf32, strict)))
        return AlgoPick{a, *ws};
  }
  return std::nullopt;
}

AlgoPick choose_algo(cudnnHandle_t h, ConvDescs& d, bool forward, rt::DataType dt, bool tf32,
                     const std::string& config, bool benchmark, bool prefer_implicit_gemm) {
  // Channels-last 16-bit: the implicit GEMMs on tensor cores, cuDNN's native NHWC path, without timing.
  if (forward && prefer_implicit_gemm && dt != rt::DataType::kFloat) {
    for (int algo :
         {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM})
      if (auto ws = workspace_for(h, d, forward, algo, CUDNN_TENSOR_OP_MATH)) return {algo, *ws};
  }
  benchmark = benchmark && forward;
  const std::string key = config + "|v2";  // v1 entries chose 16-bit math types that are no longer used
  const std::string timed_key = key + "|find";
  for (const std::string& k : {timed_key, key}) {
    if (k == key && benchmark) break;  // a timed choice was asked for: the heuristic's is not enough
    auto c = cached_algo(k);
    if (!c || excluded(c->algo, forward, dt)) continue;
    if (auto ws = workspace_for(h, d, forward, c->algo, static_cast<cudnnMathType_t>(c->math)))
      return {c->algo, *ws};
  }
  check_cudnn(cudnnSetConvolutionMathType(d.conv.d, math_for(dt, CUDNN_DEFAULT_MATH, tf32)),
              "cudnnSetConvolutionMathType");
  std::vector<Candidate> cands = ranked(h, d, forward, benchmark);
  // Then every algorithm, for the rare configuration nothing usable is ranked for.
  const int count = forward ? static_cast<int>(CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
                            : static_cast<int>(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
  const size_t timed = cands.size();
  for (int a = 0; a < count; ++a) cands.push_back({a, CUDNN_DEFAULT_MATH});
  for (bool strict : {true, false}) {
    for (size_t i = 0; i < cands.size(); ++i) {
      const Candidate& c = cands[i];
      if (excluded(c.algo, forward, dt)) continue;
      const cudnnMathType_t math = math_for(dt, c.math, tf32, strict);
      if (auto ws = workspace_for(h, d, forward, c.algo, math)) {
        remember_algo(benchmark && i < timed ? timed_key : key, {c.algo, static_cast<int>(math)});
        return {c.algo, *ws};
      }
    }
  }
  throw rt::KernelError("cuDNN has no algorithm for this convolution");
}

std::optional<rt::Shape> static_input_shape(const rt::KernelInfo& info, size_t i) {
  const auto& shape = info.input_type(i).shape;
  if (!shape || !ir::shape_is_static(*shape)) return std::nullopt;
  rt::Shape out;
  for (const auto& d : *shape) out.push_back(d.value);
  return out;
}

rt::Shape conv_plan_key(const rt::Shape& x, const rt::Shape& w, rt::DataType dt) {
  rt::Shape key = x;
  key.insert(key.end(), w.begin(), w.end());
  key.push_back(static_cast<int64_t>(dt));
  return key;
}

bool conv_inputs_supported(const rt::KernelInfo& info, size_t max_inputs) {
  const size_t n = info.input_count();
  if (n < 2 || n > max_inputs || !all_tensors(info) || !info.has_input(0) || !info.has_input(1)) return false;
  const rt::DataType t = info.input_dtype(0);
  if (!elem_type(t)) return false;
  for (size_t i = 0; i < n; ++i)
    if (info.has_input(i) && info.input_dtype(i) != t) return false;
  return true;
}

void set_relu(ActDesc& relu) {
  check_cudnn(cudnnSetActivationDescriptor(relu.d, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0),
              "cudnnSetActivationDescriptor");
}

ElemType conv_input_type(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Tensor& w,
                         const rt::Tensor* b, const rt::Tensor* z) {
  auto t = elem_type(x.dtype());
  if (!t || w.dtype() != x.dtype() || (b && b->dtype() != x.dtype()) || (z && z->dtype() != x.dtype()))
    ctx.fail("inputs X, W, B (and Z) must have one float element type");
  return *t;
}

void check_bias_and_z(rt::KernelContext& ctx, const rt::Tensor* b, const rt::Tensor* z, int64_t channels,
                      const rt::Shape& out_shape) {
  if (b && (b->rank() != 1 || b->dim(0) != channels))
    ctx.fail(fmt::format("input B has shape {}; it must be [{}], one value per output channel",
                         rt::shape_str(b->shape()), channels));
  if (z && z->shape() != out_shape)
    ctx.fail(fmt::format("input Z has shape {}; it must be the output's {}", rt::shape_str(z->shape()),
                         rt::shape_str(out_shape)));
}

void empty_conv_output(rt::KernelContext& ctx, rt::DataType dt, const rt::Shape& out_shape, bool epilogue) {
  rt::Tensor& y = ctx.output(0, dt, out_shape);
  if (y.numel() > 0 && epilogue)
    ctx.fail("a convolution over an empty input with a bias, Z or activation is not supported on the GPU");
}

rt::Tensor conv_workspace(rt::KernelContext& ctx, size_t bytes) {
  if (bytes == 0) return {};
  return ctx.scratch_uninitialized(rt::DataType::kUint8, {static_cast<int64_t>(bytes)});
}

const void* zero_padded_input(rt::KernelContext& ctx, ElemType t, const rt::Tensor& x,
                              const rt::Shape& work_shape, const ShiftedCopy& copy, rt::Tensor& work) {
  work = ctx.scratch_uninitialized(x.dtype(), work_shape);
  launch_shifted_copy(t, x.raw(), work.raw(), copy, native(ctx.stream()));
  check_launch(ctx);
  return work.raw();
}

bool conv_bias_relu(const BiasReluCall& c, bool& fused) {
  const float one = 1.f, alpha2 = c.z ? 1.f : 0.f;
  cudnnStatus_t st = cudnnConvolutionBiasActivationForward(
      c.h, &one, c.d.x.d, c.x, c.d.w.d, c.w, c.d.conv.d, static_cast<cudnnConvolutionFwdAlgo_t>(c.algo),
      c.workspace, c.workspace_bytes, &alpha2, c.d.y.d, c.z ? c.z : c.y, c.bias.d, c.b, c.relu.d, c.d.y.d,
      c.y);
  if (st == CUDNN_STATUS_SUCCESS) return true;
  if (!declined(st)) check_cudnn(st, "cudnnConvolutionBiasActivationForward");
  fused = false;
  return false;
}

}  // namespace tessera::cuda
