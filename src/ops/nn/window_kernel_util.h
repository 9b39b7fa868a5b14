// Run-time window arithmetic of the sliding-window reference kernels (convolutions, pooling, Col2Im):
// the attributes read once from the node, the padding and output sizes resolved for the actual input,
// and the im2col / col2im rearrangements the convolutions multiply through.
//
// window.h does the same checks for shape inference on ir::Dim sizes through an InferenceContext; this
// is its counterpart on concrete sizes, reporting rt::KernelError.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace tessera::ops::kernels {

// The window attributes as written; empty lists where the node leaves them out.
struct WindowAttrs {
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
};
WindowAttrs read_window_attrs(const rt::KernelInfo& info);

// Concrete geometry for one input: spatial sizes of the input and output, the kernel, and the pads
// (begin values then end values).
struct WindowGeom {
  std::vector<int64_t> in, out, kernel, strides, dilations, pads;
  size_t spatial() const { return in.size(); }
  int64_t in_size() const;      // product of `in`
  int64_t out_size() const;     // product of `out`
  int64_t kernel_size() const;  // product of `kernel`
};

// Resolves attributes against the input's spatial sizes. `kernel` comes from the weight (convolutions)
// or is empty (pooling: kernel_shape is then required). Checks every list length and value and that
// the window fits; auto_pad SAME_* / VALID replace the pads.
WindowGeom resolve_window(const WindowAttrs& a, std::span<const int64_t> in_spatial,
                          std::span<const int64_t> kernel);

// Output size of one axis given explicit pads (floor, or ceil with the last window starting inside the
// input or its begin padding); KernelError when the window does not fit.
int64_t window_out_dim(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                       int64_t pad_end, bool ceil_mode, size_t axis);

// col[(c * K + kpos) * out_size + o] = x[c, o*stride - pad + kpos*dilation], or `pad` outside, for the
// `channels` planes of x (each of g.in_size() values). Split over rows through the pool.
template <class T>
void im2col(rt::ThreadPool* pool, const WindowGeom& g, const T* x, int64_t channels, T* col, T pad = T(0));

// The adjoint of im2col: image[c, ...] (zeroed first) accumulates every column value at its source
// position; values landing in padding are dropped. Split over channels.
template <class T>
void col2im(rt::ThreadPool* pool, const WindowGeom& g, const T* col, int64_t channels, T* image);

}  // namespace tessera::ops::kernels
