// Pooling kernels on the GPU (own kernels rather than cuDNN's, whose pooling has neither asymmetric pads,
// dilations nor ceil_mode's partial windows): MaxPool, AveragePool and LpPool over 1 to 3 spatial axes
// with one thread per output value, and the global forms with one block per (batch, channel) plane.
// float32, float16 and bfloat16, computed in float32 and rounded once.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"

namespace tessera::cuda {

enum class PoolKind { kMax, kAverage, kLp };
// The element types of the windowed pools: the float types, and 8-bit integers for MaxPool.
enum class PoolType { kFloat, kHalf, kBFloat16, kInt8, kUint8 };

inline constexpr int kMaxPoolAxes = 3;

struct PoolGeom {
  int spatial = 0;
  int64_t planes = 0;  // batch * channels
  int64_t in[kMaxPoolAxes] = {}, out[kMaxPoolAxes] = {}, kernel[kMaxPoolAxes] = {};
  int64_t stride[kMaxPoolAxes] = {}, dilation[kMaxPoolAxes] = {};
  int64_t pad_begin[kMaxPoolAxes] = {}, pad_end[kMaxPoolAxes] = {};
  bool count_include_pad = false;
  float p = 2.f;          // LpPool's exponent
  int storage_order = 0;  // MaxPool's Indices: 0 row-major, 1 column-major spatial offsets
};

// Window positions outside the input are skipped. The average divides by the positions inside the input,
// or with count_include_pad by those inside [-pad_begin, in + pad_end); MaxPool keeps the first value
// and then any greater one (as the CPU reference does, so a leading NaN wins and later ones do not);
// `indices` (MaxPool's second output, or null) gets the maximum's flat index into X (the plane's offset
// plus its spatial offset in storage_order), -1 for a window with no position inside X. 8-bit integer
// types take kMax only.
void launch_pool(PoolKind kind, PoolType t, const void* x, void* y, int64_t* indices, const PoolGeom& g,
                 cudaStream_t s);

// One value per plane of `size` values. Max ignores NaN unless the plane is all NaN, as std::max does in
// the reference; an empty plane averages to NaN.
void launch_global_pool(PoolKind kind, ElemType t, const void* x, void* y, int64_t planes, int64_t size,
                        float p, cudaStream_t s);

// A 2-D window over [batch, channels, in_h, in_w] (NCHW) or [batch, in_h, in_w, channels] (NHWC).
struct Pool2d {
  int64_t batch = 0, channels = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool count_include_pad = false;
};

// kMax or kAverage over channels-last tensors, with the window rules of launch_pool; float types only.
void launch_pool_nhwc(PoolKind kind, ElemType t, const void* x, void* y, const Pool2d& g, cudaStream_t s);
// The same over NCHW: launch_pool's 2-D case for the float types (kMax with optional indices, kAverage).
void launch_pool2d_nchw(PoolKind kind, ElemType t, const void* x, void* y, int64_t* indices, const Pool2d& g,
                        int storage_order, cudaStream_t s);

}  // namespace tessera::cuda
