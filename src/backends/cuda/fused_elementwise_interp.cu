// The interpreter kernel of FusedElementwise: any program, any broadcast pattern, one element per loop
// iteration with the registers in local memory. Slower than the generated kernel (which keeps every
// value in a register and loads 16 bytes at a time); it runs where NVRTC cannot compile a program
// (a GPU newer than the NVRTC library, a missing libnvrtc), so that the node still runs on the GPU.
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/fused_elementwise.h"
#include "backends/cuda/fused_elementwise_device.h"
#include "ops/fused/elementwise_program.h"

namespace tessera::cuda {

namespace {

TESSERA_FUSED_DEVICE_CODE(TESSERA_FUSED_EXPAND)

using ops::fused::EwOp;

__device__ float load_as(int32_t type, const void* p, int64_t i) {
  switch (static_cast<FusedType>(type)) {
    case FusedType::kFloat:
      return tf_f(static_cast<const float*>(p)[i]);
    case FusedType::kHalf:
      return tf_f(static_cast<const tf_h16*>(p)[i]);
    case FusedType::kBFloat16:
      return tf_f(static_cast<const tf_b16*>(p)[i]);
    case FusedType::kBool:
      return tf_f(static_cast<const unsigned char*>(p)[i]);
  }
  return 0.0f;
}

__device__ void store_as(int32_t type, void* p, int64_t i, float v) {
  switch (static_cast<FusedType>(type)) {
    case FusedType::kFloat:
      return tf_to(static_cast<float*>(p)[i], v);
    case FusedType::kHalf:
      return tf_to(static_cast<tf_h16*>(p)[i], v);
    case FusedType::kBFloat16:
      return tf_to(static_cast<tf_b16*>(p)[i], v);
    case FusedType::kBool:
      return tf_to(static_cast<unsigned char*>(p)[i], v);
  }
}

__device__ int64_t input_index(const FusedParams& p, int32_t mode, int k, int64_t i) {
  switch (static_cast<FusedMode>(mode)) {
    case FusedMode::kSame:
      return i;
    case FusedMode::kScalar:
      return 0;
    case FusedMode::kRow:
      return i % p.mod[k];
    case FusedMode::kCol:
      return (i / p.div[k]) % p.mod[k];
    case FusedMode::kStrided:
      break;
  }
  if (p.small) {
    int32_t rest = static_cast<int32_t>(i), off = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int32_t dim = static_cast<int32_t>(p.dims[d]);
      off += (rest % dim) * static_cast<int32_t>(p.strides[k][d]);
      rest /= dim;
    }
    return off;
  }
  int64_t rest = i, off = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    off += (rest % p.dims[d]) * p.strides[k][d];
    rest /= p.dims[d];
  }
  return off;
}

__device__ float apply(const FusedInstr& in, const float* a) {
  switch (static_cast<EwOp>(in.op)) {
    case EwOp::kAdd:
      return a[0] + a[1];
    case EwOp::kSub:
      return a[0] - a[1];
    case EwOp::kMul:
      return a[0] * a[1];
    case EwOp::kDiv:
      return a[0] / a[1];
    case EwOp::kPow:
      return tf_pow(a[0], a[1]);
    case EwOp::kMax:
      return tf_max(a[0], a[1]);
    case EwOp::kMin:
      return tf_min(a[0], a[1]);
    case EwOp::kWhere:
      return a[0] != 0.0f ? a[1] : a[2];
    case EwOp::kClip:
      return tf_clip(a[0], a[1], a[2]);
    case EwOp::kLeakyRelu:
      return tf_leaky_relu(a[0], a[1]);
    case EwOp::kRelu:
      return tf_relu(a[0]);
    case EwOp::kSigmoid:
      return tf_sigmoid(a[0]);
    case EwOp::kTanh:
      return tanhf(a[0]);
    case EwOp::kExp:
      return expf(a[0]);
    case EwOp::kLog:
      return logf(a[0]);
    case EwOp::kNeg:
      return -a[0];
    case EwOp::kAbs:
      return fabsf(a[0]);
    case EwOp::kSqrt:
      return sqrtf(a[0]);
    case EwOp::kErf:
      return erff(a[0]);
    case EwOp::kReciprocal:
      return 1.0f / a[0];
    case EwOp::kCast:
      if (in.to == static_cast<int32_t>(FusedType::kHalf)) return tf_round_h16(a[0]);
      if (in.to == static_cast<int32_t>(FusedType::kBFloat16)) return tf_round_b16(a[0]);
      return a[0];
  }
  return a[0];
}

__global__ void interp_kernel(const FusedInterpProgram prog, const FusedParams p) {
  float r[kFusedMaxInputs + kFusedMaxStatements];
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < p.n;
       i += int64_t{gridDim.x} * blockDim.x) {
    for (int k = 0; k < prog.n_inputs; ++k)
      r[k] = load_as(prog.in_type[k], p.in[k], input_index(p, prog.in_mode[k], k, i));
    for (int s = 0; s < prog.n_code; ++s) {
      const FusedInstr& in = prog.code[s];
      float a[3];
      for (int j = 0; j < 3; ++j) a[j] = in.arg[j] >= 0 ? r[in.arg[j]] : in.lit[j];
      r[prog.n_inputs + s] = apply(in, a);
    }
    for (int o = 0; o < prog.n_outputs; ++o) store_as(prog.out_type[o], p.out[o], i, r[prog.out_reg[o]]);
  }
}

}  // namespace

void launch_fused_interp(const FusedInterpProgram& prog, const FusedParams& p, cudaStream_t s) {
  if (p.n == 0) return;
  interp_kernel<<<grid_for(p.n), 256, 0, s>>>(prog, p);
}

}  // namespace tessera::cuda
