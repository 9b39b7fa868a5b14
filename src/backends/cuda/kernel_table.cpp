#include "backends/cuda/kernel_table.h"

#include <algorithm>

namespace tessera::cuda {

void KernelTable::add(rt::KernelDef def, HostIo io) {
  if (!io.inputs.empty() || !io.outputs.empty()) io_[{def.domain, def.op_type}] = std::move(io);
  registry_.add(std::move(def));
}

const HostIo* KernelTable::io(const rt::KernelInfo& node) const {
  auto it = io_.find({node.node().domain, node.op_type()});
  return it == io_.end() ? nullptr : &it->second;
}

bool KernelTable::input_on_host(const rt::KernelInfo& node, size_t input) const {
  const HostIo* h = io(node);
  return h && std::find(h->inputs.begin(), h->inputs.end(), input) != h->inputs.end();
}

bool KernelTable::output_on_host(const rt::KernelInfo& node, size_t output) const {
  const HostIo* h = io(node);
  return h && std::find(h->outputs.begin(), h->outputs.end(), output) != h->outputs.end();
}

}  // namespace tessera::cuda
