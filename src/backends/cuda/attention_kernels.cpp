// The CUDA backend's ONNX Attention (opsets 23-25). The checks and messages follow the CPU reference
// (ops/attention/attention_kernel.cpp); the math runs in attention_row.cu (every feature) or, for
// float16/bfloat16 without softcap or the qk_matmul output, in the tensor-core flash kernel
// (attention_flash.cu). A past key/value cache is concatenated into the present outputs (or scratch when
// they are not wanted), which the kernels then read as K and V.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "backends/cuda/attention_host.h"
#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernel_util.h"
#include "ops/attention/attention_inputs.h"

namespace tessera::cuda {

namespace {

using namespace ops::attention_io;

// Strides of a (batch, heads, seq, size) view of a 3-D packed or 4-D contiguous tensor.
AttnOperand operand(const rt::Tensor& t, bool packed, int64_t heads, int64_t size) {
  if (packed) return {t.raw(), t.dim(1) * heads * size, size, heads * size};
  return {t.raw(), t.dim(1) * t.dim(2) * size, t.dim(2) * size, size};
}

class Attention : public rt::OpKernel {
 public:
  explicit Attention(const rt::KernelInfo& info) : attrs_(read_attrs(info)) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& q = ctx.input(kQ);
    const rt::Tensor& k = ctx.input(kK);
    const rt::Tensor& v = ctx.input(kV);
    if (k.dtype() != q.dtype() || v.dtype() != q.dtype()) ctx.fail("Q, K and V must have one element type");
    const Dims d = read_dims(ctx, q, k, v, attrs_.q_heads, attrs_.kv_heads);
    const ElemType t = *elem_type(q.dtype());

    AttnParams p;
    p.t = t;
    p.q = operand(q, d.packed, d.q_heads, d.head);
    rt::Tensor k_cache, v_cache, nonpad;  // scratch, alive until the kernels are queued
    p.k = cache(ctx, kK, kPastKey, kPresentKey, d, d.head, k_cache);
    p.v = cache(ctx, kV, kPastValue, kPresentValue, d, d.v_head, v_cache);
    p.batch = d.batch;
    p.q_heads = d.q_heads;
    p.kv_heads = d.kv_heads;
    p.q_seq = d.q_seq;
    p.keys = d.total;
    p.head = d.head;
    p.v_head = d.v_head;
    p.scale = attrs_.scale ? *attrs_.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(d.head)));
    p.softcap = attrs_.softcap;
    p.left = attrs_.left;
    p.right = attrs_.right;
    p.past_len = d.past;
    if (const rt::Tensor* m = ctx.optional_input(kMask))
      p.add = attention_mask(ctx, *m, {d.batch, d.q_heads, d.q_seq, d.total}, "attn_mask");
    nonpad = upload_nonpad(ctx, d);
    if (nonpad.defined()) p.nonpad = static_cast<const int64_t*>(nonpad.raw());

    const rt::Shape y_shape = d.packed ? rt::Shape{d.batch, d.q_seq, d.q_heads * d.v_head}
                                       : rt::Shape{d.batch, d.q_heads, d.q_seq, d.v_head};
    rt::Tensor& y = ctx.output_uninitialized(kY, q.dtype(), y_shape);
    p.y = y.raw();
    if (d.packed) {
      p.y_sb = d.q_seq * d.q_heads * d.v_head, p.y_sh = d.v_head, p.y_ss = d.q_heads * d.v_head;
    } else {
      p.y_sb = d.q_heads * d.q_seq * d.v_head, p.y_sh = d.q_seq * d.v_head, p.y_ss = d.v_head;
    }
    if (ctx.wants_output(kQkOut)) {
      p.qk = ctx.output_uninitialized(kQkOut, q.dtype(), {d.batch, d.q_heads, d.q_seq, d.total}).raw();
      p.qk_mode = static_cast<int>(attrs_.mode);
    }
    run_attention(ctx, p);
  }

 private:
  // K or V as the kernels read them: the input itself, or [past ; new] in the present output (scratch
  // when the present output is not wanted). The present output is written whenever it is wanted.
  // `scratch` holds the scratch until the caller has queued the kernels reading it (a freed block is
  // reused by the next allocation on the stream).
  AttnOperand cache(rt::KernelContext& ctx, size_t in, size_t past_in, size_t present_out, const Dims& d,
                    int64_t size, rt::Tensor& scratch) const {
    const rt::Tensor& x = ctx.input(in);
    AttnOperand src = operand(x, d.packed, d.kv_heads, size);
    const rt::Tensor* past = ctx.optional_input(past_in);
    const bool want = ctx.wants_output(present_out);
    if (!past && !want) return src;
    const rt::Shape shape{d.batch, d.kv_heads, d.total, size};
    void* dst = nullptr;
    if (want) {
      dst = ctx.output_uninitialized(present_out, x.dtype(), shape).raw();
    } else {
      scratch = ctx.scratch_uninitialized(x.dtype(), shape);
      dst = scratch.raw();
    }
    const ElemType t = *elem_type(x.dtype());
    const cudaStream_t s = native(ctx.stream());
    if (past)
      launch_attention_cache_copy(t, operand(*past, false, d.kv_heads, size), d.batch, d.kv_heads, d.past,
                                  size, dst, d.total, 0, s);
    launch_attention_cache_copy(t, src, d.batch, d.kv_heads, d.kv_seq, size, dst, d.total, d.past, s);
    check_launch(ctx);
    return {dst, d.kv_heads * d.total * size, d.total * size, size};
  }

  // nonpad_kv_seqlen (a host input: its values are checked here) copied to the device; empty if absent.
  static rt::Tensor upload_nonpad(rt::KernelContext& ctx, const Dims& d) {
    if (!ctx.optional_input(kNonpad)) return {};
    const std::vector<int64_t> n = read_nonpad(ctx, d);
    return upload_ints(ctx, n.data(), d.batch);
  }

  Attrs attrs_;
};

bool attention_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || info.input_count() < 3) return false;
  const rt::DataType t = info.input_dtype(kQ);
  if (!elem_type(t)) return false;
  for (size_t i : {kK, kV, kPastKey, kPastValue})
    if (info.has_input(i) && info.input_dtype(i) != t) return false;
  if (info.has_input(kMask) && !mask_type(info.input_dtype(kMask))) return false;
  if (info.has_input(kNonpad) && info.input_dtype(kNonpad) != rt::DataType::kInt64) return false;
  return true;
}

}  // namespace

void register_attention_kernels(KernelTable& t) {
  t.add(
      cuda_def(
          "Attention", attention_supported,
          [](const rt::KernelInfo& info) -> rt::KernelPtr { return std::make_unique<Attention>(info); }, 23),
      HostIo{{kNonpad}, {}});
  register_fused_attention_kernel(t);
}

}  // namespace tessera::cuda
