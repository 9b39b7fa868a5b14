// cuDNN pieces shared by the NCHW (conv_kernels.cpp) and channels-last (conv_nhwc_kernels.cpp)
// convolutions: owned descriptors, type mapping, the choice of algorithm, and the steps of compute() both
// take alike (input checks, the fused bias + ReLU call, the zero-padded input copy).
//
// The algorithm is chosen once per configuration: at session build (prepare, static shapes) by timing
// the candidates on the GPU (cudnnFindConvolutionForwardAlgorithm, which allocates and synchronises by
// itself, so it never runs inside compute() or a CUDA graph capture), otherwise from cuDNN's heuristic.
// Either choice is kept on disk (conv_algo_cache.h) under a key that says which it was.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/conv_epilogue.h"
#include "backends/cuda/conv_util.h"
#include "backends/cuda/cudnn_handle.h"
#include "runtime/kernel.h"

namespace tessera::cuda {

// The most workspace an algorithm may ask for.
inline constexpr size_t kMaxConvWorkspace = size_t{1} << 30;

cudnnDataType_t cudnn_type(rt::DataType t);
std::vector<int> to_int(const std::vector<int64_t>& v, const char* what);

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc();
  ~TensorDesc();
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  // A packed row-major tensor.
  void set(cudnnDataType_t t, const std::vector<int64_t>& dims);
  // A packed channels-last [N, H, W, C] tensor, given as N, C, H, W.
  void set_nhwc(cudnnDataType_t t, int64_t n, int64_t c, int64_t h, int64_t w);
};

struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc();
  ~FilterDesc();
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};

struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc();
  ~ConvDesc();
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

struct ActDesc {
  cudnnActivationDescriptor_t d = nullptr;
  ActDesc();
  ~ActDesc();
  ActDesc(const ActDesc&) = delete;
  ActDesc& operator=(const ActDesc&) = delete;
};

// What an algorithm choice works on: cuDNN's input x, filter w, output y and the convolution. For the
// backward-data direction (ConvTranspose) x is the gradient input (the node's X) and y the result.
struct ConvDescs {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
};

// FusedConv's (and NhwcConv's) activation for the epilogue kernel: every activation FusedConv has; only
// ReLU also goes into cudnnConvolutionBiasActivationForward. Other ops: none. KernelError for an unknown
// activation or missing activation_params.
Epilogue read_activation(const rt::KernelInfo& info);
bool known_activation(const rt::KernelInfo& info);

// A status saying cuDNN does not take the call as configured (the BAD_PARAM and NOT_SUPPORTED families,
// cuDNN 9's sub-codes included), as opposed to a failure of a call it took.
inline bool declined(cudnnStatus_t s) {
  const int family = static_cast<int>(s) / 1000;
  return family == 2 || family == 3;
}

struct AlgoPick {
  int algo = 0;
  size_t workspace = 0;
};

// Chooses (and sets the math type of d.conv for) the algorithm of one configuration: the disk cache's
// when cuDNN still takes it, else timed candidates when `benchmark` (forward only), else the heuristic's
// first acceptable one; 16-bit types on TENSOR_OP_MATH (a DEFAULT_MATH choice ran float16 NHWC as float32
// NCHW kernels between conversions on the H100), relaxed only where no algorithm takes it. With
// `prefer_implicit_gemm` (channels-last 16-bit forward), IMPLICIT_PRECOMP_GEMM and then IMPLICIT_GEMM on
// tensor cores come first, untimed. FFT and non-fused Winograd are never used (larger rounding errors:
// float16 results 1% off were seen), nor fused Winograd for 16-bit types. Float32 stays on FMA kernels unless
// `tf32`. `key` names the configuration (shapes, window, type, layout).
AlgoPick choose_algo(cudnnHandle_t h, ConvDescs& d, bool forward, rt::DataType dt, bool tf32,
                     const std::string& key, bool benchmark, bool prefer_implicit_gemm = false);

// The forward algorithm after `after` in cuDNN's numbering, cyclically (FFT and Winograd left out as
// above), that cuDNN takes for the configuration, tensor cores first for 16-bit types; sets its math type
// on d.conv; nullopt when no other one. For an algorithm cuDNN accepted when planning but declines to run.
std::optional<AlgoPick> next_forward_algo(cudnnHandle_t h, ConvDescs& d, rt::DataType dt, bool tf32,
                                          int after);

// One configuration of a cuDNN convolution, ready to run: descriptors, algorithm, and the zero-padded
// copy (or crop) around cuDNN's part. Each kernel's plan adds what only it needs.
struct CudnnConvPlan {
  ConvDescs d;  // x: what cuDNN reads; y: what it writes
  TensorDesc bias;
  int algo = 0;
  size_t workspace = 0;
  bool fused = true;     // cudnnConvolutionBiasActivationForward takes it (false once cuDNN declined)
  rt::Shape out_shape;   // the node's output
  rt::Shape work_shape;  // the scratch tensor of the copy (a padded input, or an output before its crop)
  ShiftedCopy copy;
  bool empty = false;  // a zero-sized axis: no cuDNN call (its descriptors take no zero sizes)
  std::string path;
};

// The static shape of input i as inferred at session build, or nullopt.
std::optional<rt::Shape> static_input_shape(const rt::KernelInfo& info, size_t i);

// The key of a kernel's plan cache: X's and W's shapes and the element type.
rt::Shape conv_plan_key(const rt::Shape& x, const rt::Shape& w, rt::DataType dt);

// Whether a node's X, W and optionally B (and Z, up to `max_inputs` inputs) are tensors of one float type
// the kernels compute in.
bool conv_inputs_supported(const rt::KernelInfo& info, size_t max_inputs);

// Sets `relu` to the ReLU that cudnnConvolutionBiasActivationForward applies.
void set_relu(ActDesc& relu);

// X, W, B (and Z) of one float element type at run time: that type; fails the node otherwise.
ElemType conv_input_type(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Tensor& w,
                         const rt::Tensor* b, const rt::Tensor* z);
// Fails the node unless B is [channels] and Z has the output's shape (when given).
void check_bias_and_z(rt::KernelContext& ctx, const rt::Tensor* b, const rt::Tensor* z, int64_t channels,
                      const rt::Shape& out_shape);
// The output of a convolution with a zero-sized axis (no cuDNN call: its descriptors take no zero sizes):
// empty inputs sum to zeros; fails the node when a bias, Z or activation would apply to them.
void empty_conv_output(rt::KernelContext& ctx, rt::DataType dt, const rt::Shape& out_shape, bool epilogue);
// Scratch workspace of `bytes` for cuDNN (an empty tensor when 0).
rt::Tensor conv_workspace(rt::KernelContext& ctx, size_t bytes);
// X copied, zero-padded, into the scratch tensor `work` of `work_shape` (cuDNN takes symmetric pads only);
// returns the copy's data.
const void* zero_padded_input(rt::KernelContext& ctx, ElemType t, const rt::Tensor& x,
                              const rt::Shape& work_shape, const ShiftedCopy& copy, rt::Tensor& work);

// What one cudnnConvolutionBiasActivationForward call reads: y = ReLU(conv(x, w) + z + b), z optional.
struct BiasReluCall {
  cudnnHandle_t h;
  ConvDescs& d;
  const TensorDesc& bias;
  const ActDesc& relu;
  int algo;
  void* workspace;
  size_t workspace_bytes;
  const void *x, *w, *b, *z;
  void* y;
};
// Runs the call; returns false, and clears `fused` so that the kernel takes the unfused path from now on,
// when cuDNN declines the configuration. Other cuDNN errors throw.
bool conv_bias_relu(const BiasReluCall& c, bool& fused);

}  // namespace tessera::cuda
