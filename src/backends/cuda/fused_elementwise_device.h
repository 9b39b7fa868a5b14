// The device functions of FusedElementwise's ops, written once for both of its kernels: the interpreter
// (fused_elementwise_interp.cu, compiled by nvcc) expands the macro below into code, the code generator
// (fused_elementwise_codegen.cpp) stringifies it into the head of every NVRTC source. No includes: the
// float16/bfloat16 conversions are the PTX instructions themselves (round to nearest even), the math
// functions are CUDA's accurate ones (expf, tanhf, erff, powf: a few ulp; no fast-math intrinsics).
// Every op computes in float32; a value is rounded to its element type once, when stored (or by Cast).
#pragma once

#define TESSERA_FUSED_EXPAND(...) __VA_ARGS__
#define TESSERA_FUSED_STRINGIFY(...) #__VA_ARGS__

// clang-format off
#define TESSERA_FUSED_DEVICE_CODE(EMIT) EMIT(                                                              \
struct tf_h16 { unsigned short b; };                                                                        \
struct tf_b16 { unsigned short b; };                                                                        \
__device__ __forceinline__ float tf_f(float v) { return v; }                                                 \
__device__ __forceinline__ float tf_f(tf_h16 v) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.b)); return f; } \
__device__ __forceinline__ float tf_f(tf_b16 v) { return __uint_as_float(((unsigned int)v.b) << 16); }       \
__device__ __forceinline__ float tf_f(unsigned char v) { return v ? 1.0f : 0.0f; }                           \
__device__ __forceinline__ void tf_to(float& d, float v) { d = v; }                                          \
__device__ __forceinline__ void tf_to(tf_h16& d, float v) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(d.b) : "f"(v)); } \
__device__ __forceinline__ void tf_to(tf_b16& d, float v) { asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(d.b) : "f"(v)); } \
__device__ __forceinline__ void tf_to(unsigned char& d, float v) { d = v != 0.0f; }                           \
__device__ __forceinline__ float tf_round_h16(float v) { tf_h16 h; tf_to(h, v); return tf_f(h); }           \
__device__ __forceinline__ float tf_round_b16(float v) { tf_b16 h; tf_to(h, v); return tf_f(h); }           \
__device__ __forceinline__ float tf_max(float a, float b) { return (a != a || b != b) ? a + b : fmaxf(a, b); } \
__device__ __forceinline__ float tf_min(float a, float b) { return (a != a || b != b) ? a + b : fminf(a, b); } \
__device__ __forceinline__ float tf_pow(float a, float b) { return b == 2.0f ? a * a : (b == 1.0f ? a : powf(a, b)); } \
__device__ __forceinline__ float tf_clip(float x, float lo, float hi) { float v = x < lo ? lo : x; return v > hi ? hi : v; } \
__device__ __forceinline__ float tf_leaky_relu(float x, float alpha) { return x < 0.0f ? alpha * x : x; }     \
__device__ __forceinline__ float tf_relu(float x) { return x > 0.0f ? x : (x == x ? 0.0f : x); }             \
__device__ __forceinline__ float tf_sigmoid(float x) {                                                      \
  if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));                                                           \
  float e = expf(x);                                                                                        \
  return e / (1.0f + e);                                                                                    \
}                                                                                                           \
)
// clang-format on
