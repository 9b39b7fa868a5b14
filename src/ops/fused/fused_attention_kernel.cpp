// Reference kernel of com.tessera FusedAttention (semantics in fused_attention.h), in double like the
// ONNX Attention reference (ops/attention/attention_kernel.cpp), whose conventions it keeps: a row whose
// scores are all -inf gets zero probabilities, and keys of probability 0 add nothing to the output.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/attention/ref_util.h"
#include "ops/fused/fused_attention.h"
#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace refk = tessera::ops::refk;
namespace fused = tessera::ops::fused;
using rt::KernelContext;
using rt::Tensor;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// An operand read as (batch, heads, seq, size) through its view.
struct View {
  std::vector<double> v;
  tessera::ops::fused::OperandView at_;
  int64_t dim(int w) const { return at_.dims[w]; }
  double at(int64_t b, int64_t h, int64_t s, int64_t e) const {
    return v[static_cast<size_t>(at_.offset + b * at_.strides[0] + h * at_.strides[1] + s * at_.strides[2] +
                                 e * at_.strides[3])];
  }
};

View view(const KernelContext& ctx, const Tensor& t, const std::vector<int64_t>& axes, int64_t part,
          const char* what) {
  View out;
  if (auto e = fused::operand_view(t.shape(), axes, part, what, out.at_)) ctx.fail(*e);
  out.v = refk::to_doubles(t, what);
  return out;
}

// A mask broadcast to (B, Hq, Sq, Skv): every axis 1 or full (right-aligned, rank 1 to 4).
struct Mask {
  std::vector<double> v;
  int64_t strides[4] = {0, 0, 0, 0};
  bool present = false;
  double at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return v[static_cast<size_t>(b * strides[0] + h * strides[1] + i * strides[2] + j * strides[3])];
  }
};

Mask read_mask(const KernelContext& ctx, size_t input, const int64_t (&full)[4], const char* what) {
  Mask m;
  const Tensor* t = ctx.optional_input(input);
  if (!t) return m;
  m.present = true;
  if (t->rank() < 1 || t->rank() > 4)
    ctx.fail(fmt::format("{} must have rank 1 to 4, got {}", what, rt::shape_str(t->shape())));
  int64_t dims[4] = {1, 1, 1, 1};
  for (int k = 0; k < t->rank(); ++k) dims[4 - t->rank() + k] = t->dim(k);
  int64_t stride = 1;
  for (int k = 3; k >= 0; --k) {
    if (dims[k] != 1 && dims[k] != full[k])
      ctx.fail(fmt::format("{} {} does not broadcast to [{},{},{},{}]", what, rt::shape_str(t->shape()),
                           full[0], full[1], full[2], full[3]));
    m.strides[k] = dims[k] == 1 ? 0 : stride;
    stride *= dims[k];
  }
  m.v = refk::to_doubles(*t, what);
  return m;
}

class FusedAttention : public rt::OpKernel {
 public:
  explicit FusedAttention(const rt::KernelInfo& info)
      : scale_(info.get_float("scale")),
        fill_(info.get_float("mask_fill", 0.0f)),
        causal_(info.get_int("causal", 0) != 0),
        axes_{info.get_ints("q_axes", fused::kBshd), info.get_ints("k_axes", fused::kBshd),
              info.get_ints("v_axes", fused::kBshd), info.get_ints("y_axes", fused::kBshd)},
        parts_{info.get_int("q_part", 0), info.get_int("k_part", 0), info.get_int("v_part", 0)} {
    if (auto e = fused::check_axes(axes_[3], axes_[3].size(), 0, "y")) throw rt::KernelError(*e);
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& qt = ctx.input(fused::kFaQ);
    refk::require_float(qt, "Q");
    if (ctx.input(fused::kFaK).dtype() != qt.dtype() || ctx.input(fused::kFaV).dtype() != qt.dtype())
      ctx.fail("Q, K and V must have one element type");
    const View q = view(ctx, qt, axes_[0], parts_[0], "q");
    const View k = view(ctx, ctx.input(fused::kFaK), axes_[1], parts_[1], "k");
    const View v = view(ctx, ctx.input(fused::kFaV), axes_[2], parts_[2], "v");
    const int64_t batch = q.dim(0), hq = q.dim(1), sq = q.dim(2), d = q.dim(3);
    const int64_t hkv = k.dim(1), skv = k.dim(2), dv = v.dim(3);
    if (k.dim(0) != batch || v.dim(0) != batch || k.dim(3) != d || v.dim(1) != hkv || v.dim(2) != skv ||
        hkv <= 0 || hq % hkv != 0)
      ctx.fail(
          fmt::format("Q {}, K {} and V {} do not fit: batch, head size, key/value heads and sequence "
                      "lengths must agree, query heads a multiple of key/value heads",
                      rt::shape_str(qt.shape()), rt::shape_str(ctx.input(1).shape()),
                      rt::shape_str(ctx.input(2).shape())));
    const int64_t full[4] = {batch, hq, sq, skv};
    const Mask bias = read_mask(ctx, fused::kFaBias, full, "attn_bias");
    const Mask keep = read_mask(ctx, fused::kFaKeep, full, "keep");

    const int64_t logical[4] = {batch, hq, sq, dv};
    const rt::Shape y_shape = fused::output_shape(axes_[3], logical);
    std::vector<double> y(static_cast<size_t>(rt::shape_numel(y_shape)), 0.0);
    fused::OperandView yv;
    fused::operand_view(y_shape, axes_[3], 0, "y", yv);
    const int64_t* ys = yv.strides;
    ctx.threads().parallel_for(batch * hq * sq, 8, [&](int64_t begin, int64_t end) {
      std::vector<double> x(static_cast<size_t>(skv));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t i = r % sq, h = (r / sq) % hq, b = r / (sq * hq), kh = h / (hq / hkv);
        double mx = kNegInf;
        for (int64_t j = 0; j < skv; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d; ++e) dot += q.at(b, h, i, e) * k.at(b, kh, j, e);
          double s = dot * scale_;
          if (keep.present && keep.at(b, h, i, j) == 0) s = fill_;
          if (bias.present) s += bias.at(b, h, i, j);
          if (causal_ && j > i) s = kNegInf;
          x[static_cast<size_t>(j)] = s;
          mx = std::max(mx, s);
        }
        double sum = 0;
        for (double& s : x) {
          s = mx == kNegInf ? 0.0 : std::exp(s - mx);
          sum += s;
        }
        double* yrow = &y[static_cast<size_t>(b * ys[0] + h * ys[1] + i * ys[2])];
        for (int64_t j = 0; j < skv; ++j) {
          const double p = x[static_cast<size_t>(j)];
          if (p == 0) continue;
          for (int64_t e = 0; e < dv; ++e) yrow[e * ys[3]] += p / sum * v.at(b, kh, j, e);
        }
      }
    });
    refk::store_doubles(ctx.output(0, qt.dtype(), y_shape), y, "FusedAttention Y");
  }

 private:
  double scale_, fill_;
  bool causal_;
  std::vector<int64_t> axes_[4];  // Q, K, V, Y
  int64_t parts_[3];
};

}  // namespace

TESSERA_REGISTER_KERNELS(fused_fused_attention) {
  reg.add(tessera::rt::KernelDef::of<FusedAttention>(fused::kFusedAttention).in_domain("com.tessera"));
}
