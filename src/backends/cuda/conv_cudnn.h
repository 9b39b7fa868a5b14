// cuDNN pieces shared by the NCHW (conv_kernels.cpp) and channels-last (conv_nhwc_kernels.cpp)
// convolutions: owned descriptors, type mapping, and the choice of algorithm.
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

}  // namespace tessera::cuda
