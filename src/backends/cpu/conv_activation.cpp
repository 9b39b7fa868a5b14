#include "backends/cpu/conv_activation.h"

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "backends/cpu/dnnl_common.h"
#include "backends/cpu/run_hooks.h"
#include "runtime/thread_pool.h"

namespace tessera::cpu {

ConvActivation::ConvActivation(const rt::KernelInfo& info) {
  static const bool checked = env_switch("TESSERA_FINITE_SUMS").value_or(true);
  checked_ = checked;
  std::string act = info.get_string("activation", "");
  auto params = info.get_floats("activation_params", {});
  auto param = [&](size_t i, float d) { return i < params.size() ? params[i] : d; };
  if (act.empty()) {
    kind_ = Kind::kNone;
  } else if (act == "Relu") {
    kind_ = Kind::kRelu;
  } else if (act == "LeakyRelu") {
    kind_ = Kind::kLeakyRelu;
    alpha_ = param(0, 0.01f);
  } else if (act == "Clip") {
    kind_ = Kind::kClip;
    alpha_ = param(0, -FLT_MAX);
    beta_ = param(1, FLT_MAX);
  } else if (act == "Sigmoid") {
    kind_ = Kind::kSigmoid;
  } else if (act == "Tanh") {
    kind_ = Kind::kTanh;
  } else if (act == "HardSigmoid") {
    kind_ = Kind::kHardSigmoid;
    alpha_ = param(0, 0.2f);
    beta_ = param(1, 0.5f);
  } else {
    kind_ = Kind::kUnknown;
    supported_ = false;
  }
}

bool ConvActivation::is_clip(float& lo, float& hi) const {
  if (kind_ == Kind::kRelu) {  // Relu(+inf) is +inf: no upper bound, not FLT_MAX
    lo = 0.f;
    hi = std::numeric_limits<float>::infinity();
    return true;
  }
  if (kind_ != Kind::kClip) return false;
  lo = alpha_;
  hi = beta_;
  return true;
}

bool ConvActivation::fuse(bool sums_finite) const {
  switch (kind_) {
    case Kind::kLeakyRelu:
    case Kind::kTanh:
      return true;
    case Kind::kRelu:
    case Kind::kClip:
    case Kind::kHardSigmoid:
      return sums_finite;
    default:
      return false;  // none (nothing to fuse), Sigmoid (always after)
  }
}

dnnl::post_ops ConvActivation::post_ops(bool fused) const {
  dnnl::post_ops ops;
  if (!fused) return ops;
  using A = dnnl::algorithm;
  switch (kind_) {
    case Kind::kRelu:
      ops.append_eltwise(1.f, A::eltwise_relu, 0.f, 0.f);
      break;
    case Kind::kLeakyRelu:
      ops.append_eltwise(1.f, A::eltwise_relu, alpha_, 0.f);
      break;
    case Kind::kClip:
      ops.append_eltwise(1.f, A::eltwise_clip, alpha_, beta_);
      break;
    case Kind::kTanh:
      ops.append_eltwise(1.f, A::eltwise_tanh, 0.f, 0.f);
      break;
    case Kind::kHardSigmoid:
      // max(0, min(1, alpha * x + beta)): oneDNN 2.6 has no hardsigmoid, but a linear step then a clip.
      ops.append_eltwise(1.f, A::eltwise_linear, alpha_, beta_);
      ops.append_eltwise(1.f, A::eltwise_clip, 0.f, 1.f);
      break;
    default:
      break;
  }
  return ops;
}

std::optional<double> ConvActivation::output_bound(double sums) const {
  switch (kind_) {
    case Kind::kNone:
    case Kind::kRelu:
      return sums;
    case Kind::kLeakyRelu:
      return sums * std::max(1.0, std::fabs(static_cast<double>(alpha_)));
    case Kind::kClip: {
      // clip(v) is v, lo or hi: |.| <= max(sums, |lo|) (hi wins only above v, or below lo's magnitude),
      // and it lies in [lo, hi].
      const double lo = std::fabs(alpha_), hi = std::fabs(beta_);
      return std::min(std::max(lo, hi), std::max(sums, lo));
    }
    case Kind::kSigmoid:
    case Kind::kTanh:
    case Kind::kHardSigmoid:
      return 1.0;
    default:
      return std::nullopt;
  }
}

bool ConvActivation::keeps_zero() const {
  switch (kind_) {
    case Kind::kSigmoid:
      return false;
    case Kind::kHardSigmoid:
      return beta_ <= 0.f;
    case Kind::kClip:
      return alpha_ <= 0.f && beta_ >= 0.f;
    default:
      return true;
  }
}

void ConvActivation::apply(rt::ThreadPool& pool, float* y, int64_t n) const {
  EltwiseOp op;
  switch (kind_) {
    case Kind::kNone:
    case Kind::kUnknown:
      return;
    case Kind::kClip: {
      // NaN stays NaN: neither comparison holds for it.
      const float lo = alpha_, hi = beta_;
      pool.parallel_for(n, 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          float v = y[i];
          y[i] = v < lo ? lo : (v > hi ? hi : v);
        }
      });
      return;
    }
    case Kind::kRelu:
      op.kind = EltwiseKind::kRelu;
      break;
    case Kind::kLeakyRelu:
      op.kind = EltwiseKind::kLeakyRelu;
      op.alpha = alpha_;
      break;
    case Kind::kSigmoid:
      op.kind = EltwiseKind::kSigmoid;
      break;
    case Kind::kTanh:
      op.kind = EltwiseKind::kTanh;
      break;
    case Kind::kHardSigmoid:
      op.kind = EltwiseKind::kHardSigmoid;
      op.alpha = alpha_;
      op.beta = beta_;
      break;
  }
  eltwise_rows(op, y, nullptr, 0, y, n, pool);
}

namespace {

// The largest magnitude's bit pattern over x[0, n): for non-negative floats the integer order is the
// float order, and infinities and NaNs lie at 0x7f800000 and above. Integer max vectorises where float
// max (with its NaN rules) does not; the build targets baseline x86-64, where the unsigned max is
// emulated (4 GB/s), so the AVX2 version (vpmaxud, 50 GB/s from cache) runs where the CPU has it.
[[gnu::always_inline]] inline uint32_t max_magnitude_loop(const float* x, int64_t n) {
  uint32_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    m = std::max(m, bits & 0x7fffffffu);
  }
  return m;
}
uint32_t max_magnitude_baseline(const float* x, int64_t n) {
  return max_magnitude_loop(x, n);
}
[[gnu::target("avx2")]] uint32_t max_magnitude_avx2(const float* x, int64_t n) {
  return max_magnitude_loop(x, n);
}

std::atomic<int64_t> g_data_reads{0};

uint32_t max_magnitude_bits(rt::ThreadPool& pool, const float* x, int64_t n) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  g_data_reads.fetch_add(1, std::memory_order_relaxed);
  std::atomic<uint32_t> result{0};
  pool.parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
    const uint32_t m = avx2 ? max_magnitude_avx2(x + b, e - b) : max_magnitude_baseline(x + b, e - b);
    uint32_t cur = result.load(std::memory_order_relaxed);
    while (m > cur && !result.compare_exchange_weak(cur, m)) {
    }
  });
  return result.load();
}

constexpr uint32_t kInfBits = 0x7f800000u;

double magnitude(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The largest magnitude of a convolution's bias (0 without one); nullopt when a value is not finite or
// near overflow.
std::optional<double> bias_bound(const rt::Tensor* bias) {
  double m = 0;
  if (!bias) return m;
  for (float v : std::span(bias->data<float>(), static_cast<size_t>(bias->numel()))) {
    if (!(std::fabs(v) < 1e30f)) return std::nullopt;
    m = std::max(m, static_cast<double>(std::fabs(v)));
  }
  return m;
}

}  // namespace

namespace {
std::atomic<int64_t> g_weight_reads{0};
}  // namespace

int64_t FiniteSums::weight_reads() {
  return g_weight_reads.load(std::memory_order_relaxed);
}

int64_t FiniteSums::data_reads() {
  return g_data_reads.load(std::memory_order_relaxed);
}

FiniteSums::FiniteSums(const float* w, int64_t out_channels, int64_t per_channel) {
  g_weight_reads.fetch_add(1, std::memory_order_relaxed);
  known_ = true;
  weights_finite_ = true;
  for (int64_t o = 0; o < out_channels; ++o) {
    double l1 = 0;
    for (int64_t i = 0; i < per_channel; ++i) l1 += std::fabs(static_cast<double>(w[o * per_channel + i]));
    if (!std::isfinite(l1)) weights_finite_ = false;
    w_l1_ = std::max(w_l1_, l1);
  }
}

std::optional<double> FiniteSums::check(rt::ThreadPool& pool, const rt::Tensor& x,
                                        const rt::Tensor* z) const {
  if (!weights_finite_) return std::nullopt;
  KnownMagnitudes& scanned = KnownMagnitudes::instance();
  // The largest magnitude of `t`: remembered unless `reread`, else read (and then remembered).
  auto bits = [&](const rt::Tensor& t, bool reread, bool& exact) {
    exact = true;
    if (!reread) {
      if (auto known = scanned.find(t)) {
        exact = known->exact;
        return known->bits;
      }
    }
    const uint32_t b = max_magnitude_bits(pool, t.data<float>(), t.numel());
    scanned.add(t, b, true);
    return b;
  };
  auto bound = [&](bool reread, bool& exact) -> std::optional<double> {
    bool x_exact = true, z_exact = true;
    const uint32_t xm = bits(x, reread, x_exact);
    exact = x_exact;
    if (xm >= kInfBits) return std::nullopt;
    double zmax = 0;
    if (z) {
      const uint32_t zm = bits(*z, reread, z_exact);
      exact = exact && z_exact;
      if (zm >= kInfBits) return std::nullopt;
      zmax = magnitude(zm);
    }
    const double b = magnitude(xm) * w_l1_ + zmax;
    if (!(b < static_cast<double>(FLT_MAX) / 1024)) return std::nullopt;
    return b;
  };
  bool exact = true;
  if (auto b = bound(false, exact)) return b;
  if (exact) return std::nullopt;
  // A remembered bound grown too large over a chain of convolutions (each multiplies it by its weights'
  // sums) says nothing of the data: read it (a bound of infinity means a value may be infinite or NaN,
  // which the read finds too).
  return bound(true, exact);
}

std::optional<double> FiniteSums::remembered_bound(const rt::Tensor& x, const rt::Tensor* z) const {
  if (!weights_finite_) return std::nullopt;
  KnownMagnitudes& scanned = KnownMagnitudes::instance();
  const auto xm = scanned.find(x);
  if (!xm || xm->bits >= kInfBits) return std::nullopt;
  double zmax = 0;
  if (z) {
    const auto zm = scanned.find(*z);
    if (!zm || zm->bits >= kInfBits) return std::nullopt;
    zmax = magnitude(zm->bits);
  }
  const double b = magnitude(xm->bits) * w_l1_ + zmax;
  if (!(b < static_cast<double>(FLT_MAX) / 1024)) return std::nullopt;
  return b;
}

std::optional<double> conv_sums_bound(const FiniteSums& constant, rt::ThreadPool& pool, const rt::Tensor& x,
                                      const rt::Tensor* w, const rt::Tensor* bias, const rt::Tensor* z) {
  const std::optional<double> b = bias_bound(bias);
  if (!b) return std::nullopt;
  std::optional<double> sums;
  if (constant.known()) {
    sums = constant.check(pool, x, z);
  } else {  // weights that are not constant: their bounds now
    if (!w) return std::nullopt;
    if (w->numel() == 0) return b;  // no products: the sums are the bias
    sums = FiniteSums(w->data<float>(), w->dim(0), w->numel() / w->dim(0)).check(pool, x, z);
  }
  if (!sums) return std::nullopt;
  return *sums + *b;
}

std::optional<double> conv_remembered_bound(const FiniteSums& constant, const rt::Tensor& x,
                                            const rt::Tensor* bias, const rt::Tensor* z) {
  if (!constant.known()) return std::nullopt;
  const std::optional<double> sums = constant.remembered_bound(x, z);
  const std::optional<double> b = sums ? bias_bound(bias) : std::nullopt;
  if (!b) return std::nullopt;
  return *sums + *b;
}

std::optional<double> known_bound(const rt::Tensor& t) {
  const auto known = KnownMagnitudes::instance().find(t);
  if (!known || known->bits >= kInfBits) return std::nullopt;
  return magnitude(known->bits);
}

void remember_bound(const rt::Tensor& y, double bound) {
  if (!(bound < static_cast<double>(FLT_MAX))) return;
  float f = static_cast<float>(bound);
  f = std::nextafter(f, std::numeric_limits<float>::infinity());  // rounded up
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  KnownMagnitudes::instance().add(y, bits & 0x7fffffffu, false);
}

bool may_hold_nan(rt::ThreadPool& pool, const rt::Tensor& t) {
  KnownMagnitudes& known = KnownMagnitudes::instance();
  if (const auto k = known.find(t); k && (k->bits <= kInfBits || k->exact)) return k->bits > kInfBits;
  const uint32_t bits = max_magnitude_bits(pool, t.data<float>(), t.numel());
  known.add(t, bits, true);
  return bits > kInfBits;
}

void pass_bound(const rt::Tensor& x, const rt::Tensor& y, double scale) {
  if (const std::optional<double> b = known_bound(x)) remember_bound(y, *b * scale);
}

KnownMagnitudes& KnownMagnitudes::instance() {
  static KnownMagnitudes s;
  return s;
}

bool KnownMagnitudes::same_owner(const Entry& e, const rt::Tensor& t) {
  const std::weak_ptr<void>& o = e.owner;
  return !o.owner_before(t.storage()) && !t.storage().owner_before(o);
}

std::optional<KnownMagnitudes::Known> KnownMagnitudes::find(const rt::Tensor& t) {
  std::lock_guard lock(mu_);
  for (const Entry& e : entries_)
    if (e.data == t.raw() && e.numel == t.numel() && !e.owner.expired() && same_owner(e, t))
      return Known{e.bits, e.exact};
  return std::nullopt;
}

void KnownMagnitudes::add(const rt::Tensor& t, uint32_t bits, bool exact) {
  std::lock_guard lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) {
    return e.owner.expired() || (e.data == t.raw() && e.numel == t.numel() && same_owner(e, t));
  });
  entries_.push_back(Entry{t.storage(), t.raw(), t.numel(), bits, exact});
}

void KnownMagnitudes::clear() {
  std::lock_guard lock(mu_);
  entries_.clear();
}

void begin_run() {
  KnownMagnitudes::instance().clear();
}

void KnownMagnitudes::forget(const rt::Tensor& t) {
  std::lock_guard lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) { return e.owner.expired() || same_owner(e, t); });
}

void clear_blocked_padding(float* y, const rt::Shape& s, int64_t channels) {
  if (s.size() != 5) return;
  const int64_t blocks = s[1], pixels = s[2] * s[3], b = s[4];
  const int64_t used = channels - (blocks - 1) * b;
  if (used <= 0 || used >= b) return;
  for (int64_t n = 0; n < s[0]; ++n) {
    float* last = y + ((n * blocks + blocks - 1) * pixels) * b;
    for (int64_t p = 0; p < pixels; ++p) std::fill(last + p * b + used, last + (p + 1) * b, 0.f);
  }
}

}  // namespace tessera::cpu
