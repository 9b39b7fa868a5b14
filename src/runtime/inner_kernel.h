// A kernel of another op, run from inside a kernel: FusedConv computes its convolution through Conv's
// kernel, the blocked-layout kernels compute through the plain op's reference kernel. The inner node
// is derived from the outer one at creation; at run time the inner kernel allocates from the outer
// node's allocator and uses its threads.
#pragma once

#include <climits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace tessera::rt {

class InnerKernel {
 public:
  // `node`: the inner node (its op, domain, attributes and input names; only the count of inputs and
  // outputs matters). `opset`: the version of its domain to bind the schema at. `max_priority` 0 takes
  // the reference kernel, which the oracles of the fast kernels need. Throws KernelError when the
  // schema or a kernel is missing.
  InnerKernel(ir::Node node, int opset, int max_priority = INT_MAX);

  // Runs on `inputs` (nullptr for an absent optional input); returns the outputs.
  std::vector<Value> run(KernelContext& outer, std::span<const Value* const> inputs) const;

 private:
  std::unique_ptr<ir::Node> node_;  // KernelInfo keeps a pointer to it: stable address
  std::unique_ptr<KernelInfo> info_;
  KernelPtr kernel_;
};

}  // namespace tessera::rt
