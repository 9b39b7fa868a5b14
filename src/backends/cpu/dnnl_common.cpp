#include "backends/cpu/dnnl_common.h"

#include <omp.h>

#include <atomic>
#include <cstdlib>

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

namespace {

std::atomic<int64_t> g_fallbacks{0};

// The reference kernel, counting its runs and telling the profiler that the fast kernel fell back.
class CountedReference : public rt::OpKernel {
 public:
  explicit CountedReference(rt::KernelPtr k) : k_(std::move(k)) {}
  void compute(rt::KernelContext& ctx) const override {
    g_fallbacks.fetch_add(1, std::memory_order_relaxed);
    ctx.set_path("reference fallback");
    k_->compute(ctx);
  }

 private:
  rt::KernelPtr k_;
};

}  // namespace

rt::KernelPtr make_reference_kernel(const rt::KernelInfo& info) {
  for (const rt::KernelDef* d : rt::KernelRegistry::cpu().all()) {
    if (d->priority != 0 || d->op_type != info.op_type()) continue;
    if (d->domain != ir::canonical_domain(info.node().domain)) continue;
    if (info.since_version() < d->since_min || info.since_version() > d->since_max) continue;
    rt::KernelPtr k = d->create(info);
    if (!k) return nullptr;
    return std::make_unique<CountedReference>(std::move(k));
  }
  return nullptr;
}

bool inputs_float(const rt::KernelInfo& info, std::initializer_list<size_t> which) {
  for (size_t i : which)
    if (info.has_input(i) && info.input_dtype(i) != ir::DataType::kFloat) return false;
  return true;
}

int64_t inferred_rank(const rt::KernelInfo& info, size_t i) {
  const auto& shape = info.input_type(i).shape;
  return shape ? static_cast<int64_t>(shape->size()) : -1;
}

int64_t reference_fallbacks() {
  return g_fallbacks.load(std::memory_order_relaxed);
}

const dnnl::memory& ReorderedWeights::get(const rt::Tensor& w, const dnnl::memory::desc& plain,
                                          const dnnl::memory::desc& want, dnnl::stream& strm) {
  if (memory_ && source_.storage() == w.storage()) return memory_;
  dnnl::memory from(plain, dnnl_engine(), const_cast<void*>(w.raw()));
  memory_ = dnnl::memory(want, dnnl_engine());
  dnnl::reorder(from, memory_).execute(strm, from, memory_);
  source_ = w;
  return memory_;
}

void PreparedWeights::prepare(const rt::Tensor& w, const dnnl::memory::desc& plain,
                              const dnnl::memory::desc& want) {
  dnnl::stream strm(dnnl_engine());
  dnnl::memory from(plain, dnnl_engine(), const_cast<void*>(w.raw()));
  main_ = dnnl::memory(want, dnnl_engine());
  dnnl::reorder(from, main_).execute(strm, from, main_);
  strm.wait();
  used_ = false;
  plain_ = plain;
  others_.clear();
}

const dnnl::memory& PreparedWeights::get(const dnnl::memory::desc& want, dnnl::stream& strm) {
  const bool first = !used_;
  used_ = true;
  if (main_.get_desc() == want) return main_;
  for (const auto& m : others_)
    if (m.get_desc() == want) return m;
  dnnl::memory m(want, dnnl_engine());
  dnnl::reorder(main_, m).execute(strm, main_, m);
  strm.wait();
  if (first) {  // the layout prepared for was a guess no primitive used: replace it
    main_ = m;
    return main_;
  }
  others_.push_back(m);
  return others_.back();
}

std::vector<float> PreparedWeights::plain(dnnl::stream& strm) const {
  std::vector<float> out(plain_.get_size() / sizeof(float));
  dnnl::memory to(plain_, dnnl_engine(), out.data());
  dnnl::reorder(main_, to).execute(strm, const_cast<dnnl::memory&>(main_), to);
  strm.wait();
  return out;
}

size_t PreparedWeights::bytes() const {
  if (!main_) return 0;
  size_t n = main_.get_desc().get_size();
  for (const auto& m : others_) n += m.get_desc().get_size();
  return n;
}

std::optional<bool> env_switch(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  const std::string s = v;
  if (s == "on") return true;
  if (s == "off") return false;
  return std::nullopt;
}

void set_dnnl_threads(rt::KernelContext& ctx) {
  int n = ctx.threads().size();
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
}

}  // namespace tessera::cpu
