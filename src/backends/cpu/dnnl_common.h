// Shared pieces of the oneDNN kernels: one engine for the process, memory descriptors from tensors,
// and the fallback to the reference kernel for what oneDNN is not used for (other element types,
// shapes it does not take).
#pragma once

#include <initializer_list>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace tessera::cpu {

dnnl::engine& dnnl_engine();

// dnnl dims of a tensor shape.
dnnl::memory::dims to_dims(const rt::Shape& s);
// The plain row-major format tag for a rank (a, ab, abc, abcd, abcde).
dnnl::memory::format_tag plain_tag(size_t rank);

// The reference kernel of the same node, for inputs the fast kernel does not take. Each compute() of the
// returned kernel counts in reference_fallbacks() and sets the path "reference fallback"
// (KernelContext::set_path).
rt::KernelPtr make_reference_kernel(const rt::KernelInfo& info);

// What the kernels' `supports` read from inference (KernelInfo): whether every input among `which`
// that the node has is float32 (an optional input left out passes; an unknown type does not), and input
// i's rank (-1 when unknown).
bool inputs_float(const rt::KernelInfo& info, std::initializer_list<size_t> which);
int64_t inferred_rank(const rt::KernelInfo& info, size_t i);

// How many times, in this process, a fast kernel handed a node to its reference kernel: tests check that
// the fast path really ran.
int64_t reference_fallbacks();

// A primitive's weights in the layout it chose, reordered from the plain tensor once, and again only when
// the tensor's storage changes (the tensor is held, so the same storage means the same values).
class ReorderedWeights {
 public:
  // The weights of `w` (laid out as `plain`) in layout `want`.
  const dnnl::memory& get(const rt::Tensor& w, const dnnl::memory::desc& plain,
                          const dnnl::memory::desc& want, dnnl::stream& strm);
  // The reordered copy's size (0 before the first get).
  size_t bytes() const { return memory_ ? memory_.get_desc().get_size() : 0; }

 private:
  dnnl::memory memory_;
  rt::Tensor source_;
};

// A constant weight held only in a primitive's layout from session build (OpKernel::prepare), its
// original released. The first primitive that uses it may want another layout (oneDNN chooses by the
// threads it is made for): the copy is reordered into that one and the prepared one dropped. Later
// primitives for other shapes that want yet another layout get a copy of their own (kept per layout),
// so the original is never needed again. The caller holds the kernel's mutex.
class PreparedWeights {
 public:
  // Reorders `w` (laid out as `plain`) into `want`.
  void prepare(const rt::Tensor& w, const dnnl::memory::desc& plain, const dnnl::memory::desc& want);
  explicit operator bool() const { return static_cast<bool>(main_); }
  // The weights in layout `want`.
  const dnnl::memory& get(const dnnl::memory::desc& want, dnnl::stream& strm);
  // The weights back in their plain layout (for kernels that pack them their own way).
  std::vector<float> plain(dnnl::stream& strm) const;
  size_t bytes() const;

 private:
  dnnl::memory main_;
  bool used_ = false;  // whether a primitive has used main_ yet
  dnnl::memory::desc plain_;
  std::vector<dnnl::memory> others_;
};

// The reordered weights held in a kernel's primitive cache (a map of entries with a `weights` member),
// for OpKernel::prepared_bytes. The caller holds the kernel's mutex.
template <class Cache>
size_t reordered_bytes(const Cache& cache) {
  size_t n = 0;
  for (const auto& [key, e] : cache) n += e.weights.bytes();
  return n;
}

// A switch between one of Tessera's own kernels and oneDNN's, from the environment (TESSERA_OWN_CONV,
// TESSERA_OWN_GEMM, TESSERA_OWN_GEMV, TESSERA_WINOGRAD): true for "on", false for "off", nullopt when unset
// or anything else (the kernel's own default). bench/ab_switch.sh compares the two settings.
std::optional<bool> env_switch(const char* name);

// Runs oneDNN primitives on as many OpenMP threads as the session's pool has.
void set_dnnl_threads(rt::KernelContext& ctx);

// The registration of a oneDNN kernel: every version of the op, above the reference kernel.
inline constexpr int kDnnlPriority = 10;
template <class K>
rt::KernelDef dnnl_kernel(std::string op_type, std::string domain = {}) {
  rt::KernelDef d = rt::KernelDef::of<K>(std::move(op_type)).in_domain(std::move(domain));
  d.priority = kDnnlPriority;
  d.name = "dnnl";
  // A kernel with a static `supports(const KernelInfo&)` declines, when the session is built, the nodes
  // it does not take (other element types, ranks, attributes): the reference kernel runs them.
  if constexpr (requires(const rt::KernelInfo& i) { K::supports(i); }) d.supports = &K::supports;
  return d;
}

}  // namespace tessera::cpu
