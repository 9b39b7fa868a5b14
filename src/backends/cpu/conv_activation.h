// FusedConv's activation on the oneDNN convolutions (plain and blocked), within the accuracy bounds of
// the standalone ops (docs/accuracy.md). oneDNN 2.6's post-ops are right for some activations only:
// - LeakyRelu and Tanh: right everywhere, fused as post-ops.
// - Relu, Clip and HardSigmoid: right for every number, but their max/min turn a NaN into a bound. They
//   are fused when the convolution's sums cannot be NaN (inputs, weights, bias and Z finite, and no sum
//   can overflow: see FiniteSums); otherwise the convolution runs without them and apply() follows.
// - Sigmoid: oneDNN's post-op flushes subnormal results (x below -87), so it always runs after the
//   convolution, on Tessera's own vectorised math (own_eltwise.h).
#pragma once

#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/own_eltwise.h"
#include "runtime/kernel.h"

namespace tessera::rt {
class ThreadPool;
}

namespace tessera::cpu {

class ConvActivation {
 public:
  explicit ConvActivation(const rt::KernelInfo& info);

  // False for an activation neither form knows (the fast kernel declines the node).
  bool supported() const { return supported_; }
  bool none() const { return kind_ == Kind::kNone; }
  // Whether the activation is the own kernels' clip (Relu or Clip) with bounds `lo`, `hi`.
  bool is_clip(float& lo, float& hi) const;
  // The post-ops that compute the activation inside the primitive when `fused`; empty otherwise.
  dnnl::post_ops post_ops(bool fused) const;
  // Whether the post-ops may be fused for a run whose convolution sums stay finite (`sums_finite`).
  bool fuse(bool sums_finite) const;
  // Whether fuse() depends on `sums_finite` (then the kernel checks the sums before choosing).
  // TESSERA_FINITE_SUMS=off fuses oneDNN's post-op unchecked, as ONNX Runtime does (a NaN sum then
  // comes out of Relu, Clip or HardSigmoid as a number): to measure what the check costs
  // (`SWITCH=TESSERA_FINITE_SUMS bash bench/ab_switch.sh resnet50`), not for use.
  bool needs_finite_sums() const {
    return (kind_ == Kind::kRelu || kind_ == Kind::kClip || kind_ == Kind::kHardSigmoid) && checked_;
  }
  // y = act(y) in float32 as the standalone op computes it (NaN kept), for `n` values split over the
  // pool.
  void apply(rt::ThreadPool& pool, float* y, int64_t n) const;
  // A bound of |act(v)| for |v| <= `sums`; nullopt for an unknown activation.
  std::optional<double> output_bound(double sums) const;
  // Whether act(0) is 0 (else a blocked output's padded lanes must be cleared after apply()).
  bool keeps_zero() const;

 private:
  enum class Kind { kNone, kRelu, kLeakyRelu, kClip, kSigmoid, kTanh, kHardSigmoid, kUnknown };
  Kind kind_ = Kind::kNone;
  float alpha_ = 0.f, beta_ = 0.f;  // LeakyRelu alpha; Clip lo, hi; HardSigmoid alpha, beta
  bool supported_ = true;
  bool checked_ = true;  // TESSERA_FINITE_SUMS is not off
};

// What decides whether a convolution's sums can be NaN: a NaN needs a NaN or infinite operand, or two
// sums overflowing to infinities of opposite signs. Built from the plain OIHW weights once; check()
// then looks at the input values of a run (the kernels check the bias, a few values, themselves).
class FiniteSums {
 public:
  FiniteSums() = default;
  FiniteSums(const float* w, int64_t out_channels, int64_t per_channel);
  // Whether it was built from weights (a default-constructed one refuses every input).
  bool known() const { return known_; }
  // How many times, in this process, weights were read to build one: a kernel with constant weights
  // does it once, at session build (tests check that runs do not).
  static int64_t weight_reads();
  // How many times, in this process, a check read a tensor's values (what remembering bounds saves).
  static int64_t data_reads();
  // Whether every sum of a convolution over `x` (plus `z`, may be null) is finite: x and z finite and
  // max|x| * max_oc sum|w_oc| + max|z| far below FLT_MAX (a margin that covers Winograd's transforms and
  // rounding). Returns the bound of the sums' magnitudes (max|x| * max_oc sum|w_oc| + max|z|) when
  // finite. What KnownMagnitudes knows of x and z is used instead of reading them, and what a read finds
  // is remembered there. A remembered bound is an upper bound that grows from convolution to
  // convolution: when it is too large, the tensors are read again for their real largest magnitude
  // before the fusion is refused.
  std::optional<double> check(rt::ThreadPool& pool, const rt::Tensor& x, const rt::Tensor* z) const;
  // The same bound from what KnownMagnitudes remembers of x and z alone, reading neither: nullopt when
  // either is not remembered or the bound is not finite. For kernels that need no check (their
  // activation is right for NaN) but tell the next convolution what their output holds.
  std::optional<double> remembered_bound(const rt::Tensor& x, const rt::Tensor* z) const;

 private:
  bool known_ = false;
  bool weights_finite_ = false;
  double w_l1_ = 0;
};

// The bound of a convolution's sums (bias and Z included) for this run when they are all finite, for
// the convolution kernels: from `constant` (bounds of constant weights, read at session build) when it
// is known, else from `w`'s values now; x and z read only where nothing is remembered of them.
std::optional<double> conv_sums_bound(const FiniteSums& constant, rt::ThreadPool& pool, const rt::Tensor& x,
                                      const rt::Tensor* w, const rt::Tensor* bias, const rt::Tensor* z);
// The same from what is remembered of x and z, reading neither; nullopt when either is not known or the
// weights are not constant.
std::optional<double> conv_remembered_bound(const FiniteSums& constant, const rt::Tensor& x,
                                            const rt::Tensor* bias, const rt::Tensor* z);

// The largest magnitude (as float bits) of float tensors in the current run, by storage: found by
// FiniteSums' scans, or known from how a kernel made them (a convolution: the bound of its sums; a
// pooling, a residual Add, a Relu: from what is known of their inputs). A residual is the input of the
// block's first convolution, and each convolution's input the output of the one before (or of a pool,
// an Add, a Relu of such outputs): none is read again. Within a run a tensor does not change, but for a
// kernel writing its output into an input's storage (KernelContext::output_reusing), which forgets it
// first; between runs a tensor the caller holds may, so Session::run begins by forgetting everything
// (cpu::begin_run). A storage is known by its owner (a tensor allocated again at the same address is
// another one); a view of the same storage and size (a Reshape's output) shares what is known.
class KnownMagnitudes {
 public:
  static KnownMagnitudes& instance();
  struct Known {
    uint32_t bits;
    bool exact;  // read from the data (else a bound from how the tensor was made)
  };
  // The largest magnitude's bits of `t` when scanned or made before.
  std::optional<Known> find(const rt::Tensor& t);
  // Remembers `bits` for `t` (replacing what was known of it).
  void add(const rt::Tensor& t, uint32_t bits, bool exact);
  // `t`'s storage is about to be overwritten.
  void forget(const rt::Tensor& t);
  void clear();

 private:
  struct Entry {
    std::weak_ptr<void> owner;
    const void* data;
    int64_t numel;
    uint32_t bits;
    bool exact;
  };
  static bool same_owner(const Entry& e, const rt::Tensor& t);
  std::mutex mu_;
  std::vector<Entry> entries_;
};

// A bound of `t`'s magnitudes known to KnownMagnitudes (all of them finite); nullopt when nothing is.
std::optional<double> known_bound(const rt::Tensor& t);
// Whether float tensor `t` may hold a NaN: no when a finite bound of it is known, else its values are
// read (and what was found remembered). For kernels whose fast path drops NaN (oneDNN's max pooling).
bool may_hold_nan(rt::ThreadPool& pool, const rt::Tensor& t);

// Tells KnownMagnitudes that `y` holds magnitudes of at most `bound` (rounded up to a float).
void remember_bound(const rt::Tensor& y, double bound);
// For kernels whose output is no larger than `scale` times their input's largest magnitude (a pooling,
// a Relu): tells KnownMagnitudes so when it knows `x`.
void pass_bound(const rt::Tensor& x, const rt::Tensor& y, double scale = 1.0);

// Clears the padded lanes of a blocked [N, Cb, H, W, b] float tensor holding `channels` channels.
void clear_blocked_padding(float* y, const rt::Shape& blocked_shape, int64_t channels);

}  // namespace tessera::cpu
