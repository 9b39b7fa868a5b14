// Device side of the patch convolution (conv_patch_kernels.cpp): a convolution whose kernel equals its
// stride, without pads, dilation or groups (ViT's 16x16 stride-16 patch embedding), is a plain matrix
// product once the input is cut into its non-overlapping patches: P [N*oH*oW, K] times W^T [K, M].
// This kernel makes P (a pure copy, whatever the element type).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace tessera::cuda {

// The patch matrix as runs of contiguous input memory, in copy units (`unit` bytes each):
// P[row = (n, y, x)][col = (a, i, r)] = X[((n * planes + a) * h + y * kh + i) * pitch + x * run + r].
// NHWC: planes 1, pitch W*C, run kW*C (W's order [M, kH, kW, C]); NCHW: planes C, pitch W, run kW (W's
// order [M, C, kH, kW]); pitch and run are counted in units.
struct PatchGeom {
  int64_t n = 0, oh = 0, ow = 0;  // batch and output rows / columns
  int64_t planes = 1, h = 0, kh = 0;
  int64_t pitch = 0, run = 0;
  int unit = 1;  // bytes per copy unit: 16, 8, 4, 2 or 1
  int64_t rows() const { return n * oh * ow; }
  int64_t cols() const { return planes * kh * run; }  // units per row of P
};

// The largest copy unit (16 bytes down to 1) dividing both byte counts and both addresses.
int patch_unit(int64_t run_bytes, int64_t pitch_bytes, const void* x, const void* p);

// Copies the patches of x into p (g.rows() x g.cols() units, row-major).
void launch_patchify(const PatchGeom& g, const void* x, void* p, cudaStream_t s);

}  // namespace tessera::cuda
