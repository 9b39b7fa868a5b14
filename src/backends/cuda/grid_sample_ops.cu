// GridSample on the GPU (see grid_sample_ops.h): one thread per (batch, output position), looping over
// the channels with the taps worked out once. __dmul_rn / __dadd_rn keep products and sums unfused, as
// the CPU computes them.
#include "backends/cuda/grid_sample_ops.h"
#include "backends/cuda/resize_util.cuh"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

struct Tap {
  int64_t index;  // -1: outside (zeros padding)
  double weight;
};

// Mirrors v into [lo, hi] by the nearer border, as often as needed.
__device__ double reflect(double v, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (v < lo) {
    const double m = fmod(lo - v, 2 * range);
    return m < range ? lo + m : hi - (m - range);
  }
  if (v > hi) {
    const double m = fmod(v - hi, 2 * range);
    return m < range ? hi - m : lo + (m - range);
  }
  return v;
}

__device__ int64_t pixel(const GridSampleSpec& s, int64_t i, int64_t size, double lo, double hi) {
  if (i >= 0 && i < size) return i;
  if (s.padding == 0) return -1;
  if (s.padding == 1) return i < 0 ? 0 : size - 1;
  int64_t r = static_cast<int64_t>(reflect(static_cast<double>(i), lo, hi));
  return r < 0 ? 0 : (r > size - 1 ? size - 1 : r);
}

__device__ double cubic(double t) {
  constexpr double a = -0.75;
  t = fabs(t);
  if (t <= 1) return __dadd_rn(__dmul_rn(__dmul_rn(__dadd_rn(__dmul_rn(a + 2, t), -(a + 3)), t), t), 1.0);
  if (t < 2) {
    const double u = __dadd_rn(__dmul_rn(a, t), -(5 * a));
    return __dadd_rn(__dmul_rn(__dadd_rn(__dmul_rn(u, t), 8 * a), t), -(4 * a));
  }
  return 0;
}

__device__ int axis_taps(const GridSampleSpec& s, double n, int64_t size, Tap* taps) {
  const double sz = static_cast<double>(size);
  double v = s.align_corners ? __dmul_rn((n + 1) / 2, sz - 1) : __dadd_rn(__dmul_rn(n + 1, sz), -1.0) / 2;
  const double lo = s.align_corners ? 0.0 : -0.5;
  const double hi = s.align_corners ? sz - 1 : sz - 0.5;
  if (s.mode == 0) v = rint(v);
  if (v < lo || v > hi) {
    if (s.padding == 1) v = fmin(fmax(v, 0.0), sz - 1);
    if (s.padding == 2) v = reflect(v, lo, hi);
  }
  if (!isfinite(v) || v < lo - 4 || v > hi + 4) {
    taps[0] = {s.padding == 0 ? -1 : 0, 1.0};
    return 1;
  }
  if (s.mode == 0) {
    taps[0] = {pixel(s, static_cast<int64_t>(v), size, lo, hi), 1.0};
    return 1;
  }
  const double f = floor(v);
  const int64_t i0 = static_cast<int64_t>(f);
  const double t = v - f;
  if (s.mode == 1) {
    taps[0] = {pixel(s, i0, size, lo, hi), 1 - t};
    taps[1] = {pixel(s, i0 + 1, size, lo, hi), t};
    return 2;
  }
  for (int k = 0; k < 4; ++k) taps[k] = {pixel(s, i0 - 1 + k, size, lo, hi), cubic(t + 1 - k)};
  return 4;
}

__device__ __forceinline__ double grid_at(ScalarType t, const void* g, int64_t i) {
  switch (t) {
    case ScalarType::kHalf:
      return __half2float(static_cast<const __half*>(g)[i]);
    case ScalarType::kBFloat16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(g)[i]);
    case ScalarType::kDouble:
      return static_cast<const double*>(g)[i];
    default:
      return static_cast<const float*>(g)[i];
  }
}

template <class T>
__global__ void grid_sample_kernel(const T* x, ScalarType grid_type, const void* grid, T* y,
                                   GridSampleSpec s) {
  const int64_t n = s.batch * s.out_plane;
  for (int64_t p = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; p < n;
       p += int64_t{gridDim.x} * blockDim.x) {
    const int64_t b = p / s.out_plane, o = p % s.out_plane;
    Tap taps[kGridSpatial][4];
    int count[kGridSpatial];
    int64_t stride[kGridSpatial];
    int64_t st = 1;
    for (int d = s.spatial - 1; d >= 0; --d) {
      // Coordinate k of the grid is for spatial axis spatial-1-k (x is the innermost axis).
      count[d] =
          axis_taps(s, grid_at(grid_type, grid, p * s.spatial + (s.spatial - 1 - d)), s.in_dims[d], taps[d]);
      stride[d] = st;
      st *= s.in_dims[d];
    }
    for (int64_t c = 0; c < s.channels; ++c) {
      const T* plane = x + (b * s.channels + c) * s.in_plane;
      double acc = 0;
      int k[kGridSpatial];
      for (int d = 0; d < s.spatial; ++d) k[d] = 0;
      while (true) {
        double w = 1;
        int64_t off = 0;
        bool zero = false;
        for (int d = 0; d < s.spatial; ++d) {
          const Tap& t = taps[d][k[d]];
          w = __dmul_rn(w, t.weight);
          if (t.index < 0) zero = true;
          off += t.index * stride[d];
        }
        if (!zero && w != 0) acc = __dadd_rn(acc, __dmul_rn(w, as_double(plane, off)));
        int d = s.spatial - 1;
        for (; d >= 0; --d) {
          if (++k[d] < count[d]) break;
          k[d] = 0;
        }
        if (d < 0) break;
      }
      store_double(y, (b * s.channels + c) * s.out_plane + o, acc);
    }
  }
}

// Normalised coordinate of pixel i of an axis of length len; a single pixel sits at the centre, 0.
__device__ double base_coord(int64_t i, int64_t len, bool align_corners) {
  if (len <= 1) return 0.0;
  const double l = static_cast<double>(len);
  if (align_corners) return -1.0 + 2.0 * static_cast<double>(i) / (l - 1);
  return (2.0 * static_cast<double>(i) + 1.0) / l - 1.0;
}

template <class T>
__global__ void affine_grid_kernel(const T* theta, T* grid, int64_t n, int nd, int64_t d_len, int64_t h_len,
                                   int64_t w_len, bool align_corners) {
  const int64_t total = n * d_len * h_len * w_len;
  for (int64_t p = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; p < total;
       p += int64_t{gridDim.x} * blockDim.x) {
    const int64_t x = p % w_len, y = (p / w_len) % h_len, z = (p / (w_len * h_len)) % d_len;
    const int64_t b = p / (w_len * h_len * d_len);
    double v[4] = {base_coord(x, w_len, align_corners), base_coord(y, h_len, align_corners), 0.0, 0.0};
    if (nd == 3) v[2] = base_coord(z, d_len, align_corners);
    v[nd] = 1.0;
    const int64_t m = b * nd * (nd + 1);
    for (int r = 0; r < nd; ++r) {
      double acc = 0;
      for (int c = 0; c <= nd; ++c) acc += as_double(theta, m + r * (nd + 1) + c) * v[c];
      store_double(grid, p * nd + r, acc);
    }
  }
}

}  // namespace

void launch_affine_grid(ScalarType t, const void* theta, void* grid, int64_t n, int nd, int64_t d_len,
                        int64_t h_len, int64_t w_len, bool align_corners, cudaStream_t s) {
  const int64_t total = n * d_len * h_len * w_len;
  if (total == 0) return;
  by_scalar_type<float>(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    affine_grid_kernel<T><<<grid_for(total), kThreads, 0, s>>>(
        static_cast<const T*>(theta), static_cast<T*>(grid), n, nd, d_len, h_len, w_len, align_corners);
  });
}

void launch_grid_sample(ScalarType x_type, const void* x, ScalarType grid_type, const void* grid, void* y,
                        const GridSampleSpec& spec, cudaStream_t s) {
  const int64_t n = spec.batch * spec.out_plane;
  if (n == 0 || spec.channels == 0) return;
  by_scalar_type<float>(x_type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    grid_sample_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), grid_type, grid,
                                                           static_cast<T*>(y), spec);
  });
}

}  // namespace tessera::cuda
