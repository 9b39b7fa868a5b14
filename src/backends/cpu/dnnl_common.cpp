#include "backends/cpu/dnnl_common.h"

#include <omp.h>

#include "ir/model.h"
#include "runtime/thread_pool.h"

namespace tessera::cpu {

dnnl::engine& dnnl_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::memory::dims to_dims(const rt::Shape& s) {
  return dnnl::memory::dims(s.begin(), s.end());
}

dnnl::memory::format_tag plain_tag(size_t rank) {
  using tag = dnnl::memory::format_tag;
  switch (rank) {
    case 1:
      return tag::a;
    case 2:
      return tag::ab;
    case 3:
      return tag::abc;
    case 4:
      return tag::abcd;
    case 5:
      return tag::abcde;
    case 6:
      return tag::abcdef;
    default:
      return tag::undef;
  }
}

rt::KernelPtr make_reference_kernel(const rt::KernelInfo& info) {
  for (const rt::KernelDef* d : rt::KernelRegistry::global().all()) {
    if (d->backend != "cpu" || d->priority != 0 || d->op_type != info.op_type()) continue;
    if (d->domain != ir::canonical_domain(info.node().domain)) continue;
    if (info.since_version() < d->since_min || info.since_version() > d->since_max) continue;
    return d->create(info);
  }
  return nullptr;
}

void set_dnnl_threads(rt::KernelContext& ctx) {
  int n = ctx.threads().size();
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
}

}  // namespace tessera::cpu
