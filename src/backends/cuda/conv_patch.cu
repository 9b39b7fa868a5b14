#include <cstdint>

#include "backends/cuda/conv_patch.h"
#include "backends/cuda/device_types.cuh"

namespace tessera::cuda {

namespace {

// One thread per copy unit of P, grid-stride; I is the index type (32-bit where everything fits).
template <class U, class I>
__global__ void patchify(const U* __restrict__ x, U* __restrict__ p, PatchGeom g, I total) {
  const I run = static_cast<I>(g.run), kh = static_cast<I>(g.kh);
  const I ow = static_cast<I>(g.ow), oh = static_cast<I>(g.oh), planes = static_cast<I>(g.planes);
  const I h = static_cast<I>(g.h), pitch = static_cast<I>(g.pitch), cols = planes * kh * run;
  for (I i = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<I>(gridDim.x) * blockDim.x) {
    const I col = i % cols, row = i / cols;
    const I r = col % run, plane_row = col / run;  // (a, i) flattened
    const I ki = plane_row % kh, a = plane_row / kh;
    const I xo = row % ow, rest = row / ow;
    const I yo = rest % oh, n = rest / oh;
    p[i] = x[((n * planes + a) * h + yo * kh + ki) * pitch + xo * run + r];
  }
}

template <class U>
void launch_unit(const PatchGeom& g, const void* x, void* p, cudaStream_t s) {
  const int64_t total = g.rows() * g.cols();
  if (total == 0) return;
  const int64_t src_extent = g.n * g.planes * g.h * g.pitch;
  const auto* xs = static_cast<const U*>(x);
  auto* ps = static_cast<U*>(p);
  if (total < INT32_MAX && src_extent < INT32_MAX)
    patchify<U, uint32_t><<<grid_for(total), 256, 0, s>>>(xs, ps, g, static_cast<uint32_t>(total));
  else
    patchify<U, int64_t><<<grid_for(total), 256, 0, s>>>(xs, ps, g, total);
}

}  // namespace

int patch_unit(int64_t run_bytes, int64_t pitch_bytes, const void* x, const void* p) {
  const auto ax = reinterpret_cast<uintptr_t>(x), ap = reinterpret_cast<uintptr_t>(p);
  for (int u : {16, 8, 4, 2})
    if (run_bytes % u == 0 && pitch_bytes % u == 0 && ax % u == 0 && ap % u == 0) return u;
  return 1;
}

void launch_patchify(const PatchGeom& g, const void* x, void* p, cudaStream_t s) {
  switch (g.unit) {
    case 16:
      return launch_unit<uint4>(g, x, p, s);
    case 8:
      return launch_unit<uint2>(g, x, p, s);
    case 4:
      return launch_unit<uint32_t>(g, x, p, s);
    case 2:
      return launch_unit<uint16_t>(g, x, p, s);
    default:
      return launch_unit<uint8_t>(g, x, p, s);
  }
}

}  // namespace tessera::cuda
