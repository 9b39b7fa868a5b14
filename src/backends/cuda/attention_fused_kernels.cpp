// The CUDA backend's com.tessera FusedAttention (semantics in ops/fused/fused_attention.h): the
// operands are read in place through their layouts' strides, so the Transposes around the attention
// the exporters wrote are gone; float16/bfloat16 with head sizes that are multiples of 16 up to 128 take the
// flash kernel.
#include <fmt/format.h>

#include "backends/cuda/attention_host.h"
#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernel_util.h"
#include "ops/fused/fused_attention.h"

namespace tessera::cuda {

namespace {

namespace fused = ops::fused;

// The operand's view (dims and strides of batch, heads, seq, size) as the kernels read it.
fused::OperandView view_of(const rt::KernelContext& ctx, const rt::Tensor& t,
                           const std::vector<int64_t>& axes, int64_t part, const char* what,
                           AttnOperand& op) {
  fused::OperandView v;
  if (auto e = fused::operand_view(t.shape(), axes, part, what, v)) ctx.fail(*e);
  if (v.strides[3] != 1 && v.dims[3] > 1)
    ctx.fail(fmt::format("{}: the head size axis must be the innermost one", what));
  const int64_t bytes = ir::dtype_bits(t.dtype()) / 8;
  op = {static_cast<const char*>(t.raw()) + v.offset * bytes, v.strides[0], v.strides[1], v.strides[2]};
  return v;
}

// A mask whose every axis is 1 or full (a key axis of 1 broadcasts here, unlike ONNX's short masks).
AttnMask broadcast_mask(const rt::KernelContext& ctx, const rt::Tensor& t, const std::array<int64_t, 4>& full,
                        const char* what) {
  AttnMask m = attention_mask(ctx, t, full, what);
  if (t.dim(-1) == full[3]) return m;
  if (t.dim(-1) != 1)
    ctx.fail(fmt::format("{} {} does not broadcast to [{},{},{},{}]", what, rt::shape_str(t.shape()), full[0],
                         full[1], full[2], full[3]));
  m.stride[3] = 0;
  m.keys = full[3];
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

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& qt = ctx.input(fused::kFaQ);
    AttnParams p;
    const fused::OperandView q = view_of(ctx, qt, axes_[0], parts_[0], "q", p.q);
    const fused::OperandView k = view_of(ctx, ctx.input(fused::kFaK), axes_[1], parts_[1], "k", p.k);
    const fused::OperandView v = view_of(ctx, ctx.input(fused::kFaV), axes_[2], parts_[2], "v", p.v);
    const int64_t batch = q.dims[0], hq = q.dims[1], sq = q.dims[2], d = q.dims[3];
    const int64_t hkv = k.dims[1], skv = k.dims[2], dv = v.dims[3];
    if (k.dims[0] != batch || v.dims[0] != batch || k.dims[3] != d || v.dims[1] != hkv || v.dims[2] != skv ||
        hkv <= 0 || hq % hkv != 0)
      ctx.fail(
          fmt::format("Q {}, K {} and V {} do not fit: batch, head size, key/value heads and sequence "
                      "lengths must agree, query heads a multiple of key/value heads",
                      rt::shape_str(qt.shape()), rt::shape_str(ctx.input(1).shape()),
                      rt::shape_str(ctx.input(2).shape())));
    p.t = *elem_type(qt.dtype());
    p.batch = batch, p.q_heads = hq, p.kv_heads = hkv, p.q_seq = sq, p.keys = skv, p.head = d, p.v_head = dv;
    p.scale = scale_;
    p.keep_fill = fill_;
    if (causal_) p.right = 0;
    const std::array<int64_t, 4> full{batch, hq, sq, skv};
    if (const rt::Tensor* b = ctx.optional_input(fused::kFaBias))
      p.add = broadcast_mask(ctx, *b, full, "attn_bias");
    if (const rt::Tensor* m = ctx.optional_input(fused::kFaKeep))
      p.keep = broadcast_mask(ctx, *m, full, "keep");
    const int64_t logical[4] = {batch, hq, sq, dv};
    const rt::Shape y_shape = fused::output_shape(axes_[3], logical);
    AttnOperand y;
    view_of(ctx, ctx.output_uninitialized(0, qt.dtype(), y_shape), axes_[3], 0, "y", y);
    p.y = const_cast<void*>(y.p);
    p.y_sb = y.sb, p.y_sh = y.sh, p.y_ss = y.ss;
    run_attention(ctx, p);
  }

 private:
  float scale_, fill_;
  bool causal_;
  std::vector<int64_t> axes_[4];  // Q, K, V, Y
  int64_t parts_[3];
};

bool fused_attention_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || info.input_count() < 3 || !elem_type(info.input_dtype(0))) return false;
  for (size_t i = 0; i < 3; ++i) {
    if (!info.has_input(i) || info.input_dtype(i) != info.input_dtype(0)) return false;
  }
  if (info.has_input(fused::kFaBias)) {
    auto t = mask_type(info.input_dtype(fused::kFaBias));
    if (!t || *t == MaskType::kBool) return false;
  }
  if (info.has_input(fused::kFaKeep) && info.input_dtype(fused::kFaKeep) != rt::DataType::kBool) return false;
  return true;
}

}  // namespace

void register_fused_attention_kernel(KernelTable& t) {
  rt::KernelDef def = cuda_def(
      fused::kFusedAttention, fused_attention_supported,
      [](const rt::KernelInfo& info) -> rt::KernelPtr { return std::make_unique<FusedAttention>(info); });
  def.domain = "com.tessera";
  t.add(std::move(def));
}

}  // namespace tessera::cuda
