// Conversions between NCHW and the blocked layout (ops/layout/blocked.h), for the reference kernels of
// the blocked ops and for tests.
#pragma once

#include "runtime/kernel.h"

namespace tessera::ops::layout {

// x [N, C, H, W] -> y [N, ceil(C/block), H, W, block], padded channels zero. y must have that shape.
void to_blocked(rt::ThreadPool& pool, const rt::Tensor& x, rt::Tensor& y);
// x [N, Cb, H, W, b] -> y [N, C, H, W], C <= Cb * b (the rest dropped). y must have that shape.
void from_blocked(rt::ThreadPool& pool, const rt::Tensor& x, rt::Tensor& y);

}  // namespace tessera::ops::layout
