// Shared pieces of the oneDNN kernels: one engine for the process, memory descriptors from tensors,
// and the fallback to the reference kernel for what oneDNN is not used for (other element types,
// shapes it does not take).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/kernel.h"

namespace tessera::cpu {

dnnl::engine& dnnl_engine();

// dnnl dims of a tensor shape.
dnnl::memory::dims to_dims(const rt::Shape& s);
// The plain row-major format tag for a rank (a, ab, abc, abcd, abcde).
dnnl::memory::format_tag plain_tag(size_t rank);

// The reference kernel of the same node, for inputs the fast kernel does not take.
rt::KernelPtr make_reference_kernel(const rt::KernelInfo& info);

// Runs oneDNN primitives on as many OpenMP threads as the session's pool has.
void set_dnnl_threads(rt::KernelContext& ctx);

}  // namespace tessera::cpu
