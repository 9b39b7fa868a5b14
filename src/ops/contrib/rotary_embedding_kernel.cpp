// Reference kernel of com.microsoft RotaryEmbedding (ONNX Runtime's RoPE). Input is (batch, seq, hidden)
// or (batch, heads, seq, head_size); position_ids is (batch, seq), or one value p0 giving token s the
// position p0 + s; cos/sin_cache are (max_position, rotary_dim / 2). The first rotary_dim features of
// every head rotate (rotary_embedding_dim, else the whole head), the rest pass through. Head size of a
// 3-D input: hidden / num_heads, or the caches' rotary dim when num_heads is 0. The `scale` attribute is
// not used by ONNX Runtime's kernels and is ignored here too; is_packed_batching is refused.
#include <fmt/format.h>

#include "ops/contrib/attention_common_kernel.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace ca = tessera::ops::contrib_attn;
using rt::KernelContext;
using rt::Tensor;

enum In { kInput, kPositionIds, kCos, kSin };

class RotaryEmbedding : public rt::OpKernel {
 public:
  explicit RotaryEmbedding(const rt::KernelInfo& info)
      : interleaved_(info.get_int("interleaved", 0) != 0),
        packed_batching_(info.get_int("is_packed_batching", 0) != 0),
        heads_(info.get_int("num_heads", 0)),
        rotary_attr_(info.get_int("rotary_embedding_dim", 0)) {
    if (heads_ < 0 || rotary_attr_ < 0)
      throw rt::KernelError("num_heads and rotary_embedding_dim must not be negative");
  }

  void compute(KernelContext& ctx) const override {
    if (packed_batching_) ctx.fail("is_packed_batching is not supported");
    const Tensor& x = ctx.input(kInput);
    const Tensor& ids = ctx.input(kPositionIds);
    const Tensor& cos_t = ctx.input(kCos);
    const Tensor& sin_t = ctx.input(kSin);
    const rt::DataType dt = x.dtype();
    ca::require_same_type(ctx, cos_t, dt, "cos_cache");
    ca::require_same_type(ctx, sin_t, dt, "sin_cache");
    if (cos_t.rank() != 2 || cos_t.shape() != sin_t.shape() || cos_t.dim(1) == 0) {
      ctx.fail(fmt::format("cos_cache {} and sin_cache {} must both be (max_position, rotary_dim / 2)",
                           ca::shape_of(cos_t), ca::shape_of(sin_t)));
    }
    const int64_t max_pos = cos_t.dim(0), half = cos_t.dim(1);
    if (rotary_attr_ > 0 && rotary_attr_ != 2 * half) {
      ctx.fail(fmt::format("rotary_embedding_dim {} does not match the caches' width {} (rotary_dim / 2)",
                           rotary_attr_, half));
    }
    const int64_t rotary = 2 * half;
    int64_t batch = 0, seq = 0, heads = 0, head = 0;
    bool bnsh = false;
    if (x.rank() == 4) {
      bnsh = true;
      batch = x.dim(0), heads = x.dim(1), seq = x.dim(2), head = x.dim(3);
    } else if (x.rank() == 3) {
      batch = x.dim(0), seq = x.dim(1);
      const int64_t hidden = x.dim(2);
      if (heads_ > 0) {
        if (hidden % heads_ != 0)
          ctx.fail(fmt::format("hidden size {} is not divisible by num_heads {}", hidden, heads_));
        heads = heads_, head = hidden / heads_;
      } else {
        if (rotary_attr_ > 0) ctx.fail("rotary_embedding_dim on a 3-D input needs num_heads");
        if (hidden % rotary != 0)
          ctx.fail(fmt::format("hidden size {} is not divisible by the caches' rotary dim {} (set num_heads)",
                               hidden, rotary));
        head = rotary, heads = hidden / rotary;
      }
    } else {
      ctx.fail(
          fmt::format("input must be 3-D (batch, seq, hidden) or 4-D (batch, heads, seq, head_size), got {}",
                      ca::shape_of(x)));
    }
    if (rotary > head) ctx.fail(fmt::format("rotary dim {} exceeds the head size {}", rotary, head));

    if (ids.dtype() != rt::DataType::kInt64) ctx.fail("position_ids must be int64");
    std::vector<int64_t> pos(static_cast<size_t>(batch * seq));
    if (ids.numel() == 1 && ids.rank() <= 1) {
      const int64_t p0 = ids.data<int64_t>()[0];
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t s = 0; s < seq; ++s) pos[static_cast<size_t>(b * seq + s)] = p0 + s;
    } else if (ids.rank() == 2 && ids.dim(0) == batch && ids.dim(1) == seq) {
      std::copy_n(ids.data<int64_t>(), batch * seq, pos.begin());
    } else {
      ctx.fail(fmt::format("position_ids {} must hold one offset or be (batch, seq) = ({}, {})",
                           ca::shape_of(ids), batch, seq));
    }
    for (size_t i = 0; i < pos.size(); ++i) {
      if (pos[i] < 0 || pos[i] >= max_pos)
        ctx.fail(
            fmt::format("position_ids value {} (batch {}, token {}) is outside the cos/sin cache of {} rows",
                        pos[i], static_cast<int64_t>(i) / seq, static_cast<int64_t>(i) % seq, max_pos));
    }

    std::vector<float> xf = ca::to_floats(x, "RotaryEmbedding input");
    const std::vector<float> cf = ca::to_floats(cos_t, "cos_cache"), sf = ca::to_floats(sin_t, "sin_cache");
    const int64_t vectors = batch * seq * heads;
    ctx.threads().parallel_for(vectors, std::max<int64_t>(1, 8192 / std::max<int64_t>(head, 1)),
                               [&](int64_t v0, int64_t v1) {
                                 for (int64_t r = v0; r < v1; ++r) {
                                   // r walks the tensor in memory order; recover its batch and token.
                                   int64_t b = 0, s = 0;
                                   if (bnsh) {
                                     s = r % seq, b = r / (seq * heads);
                                   } else {
                                     s = (r / heads) % seq, b = r / (heads * seq);
                                   }
                                   const int64_t p = pos[static_cast<size_t>(b * seq + s)];
                                   ca::rotate(xf.data() + r * head, cf.data() + p * half,
                                              sf.data() + p * half, rotary, interleaved_);
                                 }
                               });
    ca::store_floats(ctx.output(0, dt, x.shape()), xf, "RotaryEmbedding output");
  }

 private:
  bool interleaved_, packed_batching_;
  int64_t heads_, rotary_attr_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(contrib_rotary_embedding) {
  reg.add(tessera::rt::KernelDef::of<RotaryEmbedding>("RotaryEmbedding").in_domain("com.microsoft"));
}
