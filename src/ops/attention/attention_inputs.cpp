// ONNX Attention's input checks, shared by the CPU and CUDA kernels (attention_inputs.h).
#include "ops/attention/attention_inputs.h"

#include <fmt/format.h>

namespace tessera::ops::attention_io {

namespace {

void read_past(const rt::KernelContext& ctx, Dims& d, const rt::Tensor& k, const rt::Tensor& v) {
  const rt::Tensor* pk = ctx.optional_input(kPastKey);
  const rt::Tensor* pv = ctx.optional_input(kPastValue);
  if (!pk != !pv) ctx.fail("past_key and past_value must be given together");
  d.total = d.kv_seq;
  if (!pk) return;
  auto check = [&](const rt::Tensor& p, int64_t size, const rt::Tensor& like, const char* what) {
    if (p.rank() != 4 || p.dim(0) != d.batch || p.dim(1) != d.kv_heads || p.dim(3) != size)
      ctx.fail(fmt::format("{} {} must be (batch {}, kv_heads {}, past_seq, {})", what,
                           rt::shape_str(p.shape()), d.batch, d.kv_heads, size));
    if (p.dtype() != like.dtype()) ctx.fail(fmt::format("{} has another element type than its input", what));
  };
  check(*pk, d.head, k, "past_key");
  check(*pv, d.v_head, v, "past_value");
  if (pk->dim(2) != pv->dim(2))
    ctx.fail(
        fmt::format("past_key and past_value sequence lengths differ: {} and {}", pk->dim(2), pv->dim(2)));
  d.past = pk->dim(2);
  d.total = d.past + d.kv_seq;
}

}  // namespace

Attrs read_attrs(const rt::KernelInfo& info) {
  Attrs a;
  a.q_heads = info.has_attr("q_num_heads") ? info.get_int("q_num_heads") : 0;
  a.kv_heads = info.has_attr("kv_num_heads") ? info.get_int("kv_num_heads") : 0;
  a.mode = info.get_int("qk_matmul_output_mode", 0);
  a.softcap = info.get_float("softcap", 0.0f);
  a.left = info.since_version() >= 25 ? info.get_int("left_window_size", -1) : -1;
  a.right = info.since_version() >= 25 ? info.get_int("right_window_size", -1) : -1;
  if (info.has_attr("scale")) a.scale = info.get_float("scale");
  if (a.mode < 0 || a.mode > 3)
    throw rt::KernelError(fmt::format("qk_matmul_output_mode must be 0, 1, 2 or 3, got {}", a.mode));
  if (info.get_int("is_causal", 0) != 0) a.right = 0;
  return a;
}

Dims read_dims(const rt::KernelContext& ctx, const rt::Tensor& q, const rt::Tensor& k, const rt::Tensor& v,
               int64_t q_heads_attr, int64_t kv_heads_attr) {
  Dims d;
  if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4)) {
    ctx.fail(fmt::format("Q {}, K {} and V {} must all be 3-D or all be 4-D", rt::shape_str(q.shape()),
                         rt::shape_str(k.shape()), rt::shape_str(v.shape())));
  }
  d.batch = q.dim(0);
  if (k.dim(0) != d.batch || v.dim(0) != d.batch)
    ctx.fail(fmt::format("batch sizes of Q {}, K {} and V {} differ", rt::shape_str(q.shape()),
                         rt::shape_str(k.shape()), rt::shape_str(v.shape())));
  if (q.rank() == 4) {
    d.q_heads = q.dim(1);
    d.kv_heads = k.dim(1);
    d.q_seq = q.dim(2);
    d.kv_seq = k.dim(2);
    d.head = q.dim(3);
    d.v_head = v.dim(3);
    if (v.dim(1) != d.kv_heads) ctx.fail(fmt::format("K has {} heads but V has {}", d.kv_heads, v.dim(1)));
    if (k.dim(3) != d.head) ctx.fail(fmt::format("head size of Q ({}) and K ({}) differ", d.head, k.dim(3)));
  } else {
    d.packed = true;
    if (q_heads_attr <= 0 || kv_heads_attr <= 0)
      ctx.fail("3-D Q, K and V need positive attributes q_num_heads and kv_num_heads");
    d.q_heads = q_heads_attr;
    d.kv_heads = kv_heads_attr;
    d.q_seq = q.dim(1);
    d.kv_seq = k.dim(1);
    auto split = [&](const rt::Tensor& t, int64_t heads, const char* what) {
      if (t.dim(2) % heads != 0)
        ctx.fail(fmt::format("hidden size {} of {} is not divisible by {} heads", t.dim(2), what, heads));
      return t.dim(2) / heads;
    };
    d.head = split(q, d.q_heads, "Q");
    if (split(k, d.kv_heads, "K") != d.head)
      ctx.fail(fmt::format("head size of Q ({}) and K ({}) differ", d.head, k.dim(2) / d.kv_heads));
    d.v_head = split(v, d.kv_heads, "V");
  }
  if (v.dim(-2) != d.kv_seq)
    ctx.fail(fmt::format("K and V sequence lengths differ: {} and {}", d.kv_seq, v.dim(-2)));
  if (d.q_heads <= 0 || d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0)
    ctx.fail(fmt::format("query heads {} are not a positive multiple of key/value heads {}", d.q_heads,
                         d.kv_heads));
  read_past(ctx, d, k, v);
  return d;
}

std::vector<int64_t> read_nonpad(const rt::KernelContext& ctx, const Dims& d) {
  const rt::Tensor* t = ctx.optional_input(kNonpad);
  if (!t) return {};
  if (t->dtype() != rt::DataType::kInt64 || t->rank() != 1 || t->dim(0) != d.batch)
    ctx.fail(fmt::format("nonpad_kv_seqlen must be int64 of shape [{}], got {}", d.batch,
                         rt::shape_str(t->shape())));
  std::vector<int64_t> n = t->to_int64_vector();
  for (size_t b = 0; b < n.size(); ++b) {
    if (n[b] < 0 || n[b] > d.total)
      ctx.fail(fmt::format("nonpad_kv_seqlen[{}] = {} is outside [0, {}]", b, n[b], d.total));
  }
  return n;
}

}  // namespace tessera::ops::attention_io
