// What the CUDA kernels register into: the backend's kernel registry and, per operator, the inputs its
// kernel reads in host memory and the outputs it makes there (Backend::input_on_host): a Reshape's
// shape, a Slice's starts and a Resize's sizes decide launch parameters, so they stay on the host, and
// Shape/Size make host tensors from a device tensor's metadata.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "passes/target.h"
#include "runtime/kernel.h"

namespace tessera::cuda {

struct HostIo {
  std::vector<size_t> inputs;   // read on the host
  std::vector<size_t> outputs;  // made on the host
};

class KernelTable {
 public:
  // `io` applies to every version of the operator the definition covers.
  void add(rt::KernelDef def, HostIo io = {});
  const rt::KernelRegistry& registry() const { return registry_; }
  // The session's precision (BackendOptions), set before the kernels register: kTf32 lets float32
  // matrix products and convolutions use TF32 tensor cores; otherwise float32 stays float32.
  passes::Precision precision = passes::Precision::kFp16;
  bool input_on_host(const rt::KernelInfo& node, size_t input) const;
  bool output_on_host(const rt::KernelInfo& node, size_t output) const;

 private:
  const HostIo* io(const rt::KernelInfo& node) const;
  rt::KernelRegistry registry_;
  std::map<std::pair<std::string, std::string>, HostIo> io_;  // (domain, op) -> host inputs/outputs
};

// Registration, one function per kernel family (each in its own file), all called by the backend.
void register_elementwise_kernels(KernelTable& t);  // elementwise_kernels.cpp
void register_data_kernels(KernelTable& t);         // data_kernels.cpp: shape, copy, gather, cast...
void register_reduce_kernels(KernelTable& t);       // reduce_kernels.cpp: reductions, softmax, norms
void register_matmul_kernels(KernelTable& t);       // matmul_kernels.cpp: cuBLASLt MatMul/Gemm
void register_conv_kernels(KernelTable& t);         // conv_kernels.cpp: cuDNN convolutions, pooling
void register_contrib_kernels(KernelTable& t);      // contrib_kernels.cpp: com.microsoft fused forms
void register_attention_kernels(KernelTable& t);    // attention_kernels.cpp: Attention, FusedAttention
void register_quantize_kernels(KernelTable& t);     // quantize_kernels.cpp: Quantize/DequantizeLinear
void register_resize_kernels(KernelTable& t);       // resize_kernels.cpp: Resize, Upsample
void register_grid_sample_kernels(KernelTable& t);  // grid_sample_kernels.cpp: GridSample, AffineGrid
void register_rotary_kernels(KernelTable& t);       // rotary_kernels.cpp: RotaryEmbedding
void register_einsum_kernels(KernelTable& t);       // einsum_kernels.cpp: Einsum
void register_col2im_kernels(KernelTable& t);       // col2im_kernels.cpp: Col2Im
void register_linalg_kernels(KernelTable& t);       // linalg_kernels.cpp: Det
void register_dft_kernels(KernelTable& t);          // dft_kernels.cpp: DFT, STFT

inline void register_cuda_kernels(KernelTable& t) {
  register_elementwise_kernels(t);
  register_data_kernels(t);
  register_reduce_kernels(t);
  register_matmul_kernels(t);
  register_conv_kernels(t);
  register_contrib_kernels(t);
  register_attention_kernels(t);
  register_quantize_kernels(t);
  register_resize_kernels(t);
  register_grid_sample_kernels(t);
  register_dft_kernels(t);
  register_rotary_kernels(t);
  register_einsum_kernels(t);
  register_col2im_kernels(t);
  register_linalg_kernels(t);
}

}  // namespace tessera::cuda
