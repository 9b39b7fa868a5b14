// Reference kernel of RotaryEmbedding (ai.onnx 23). Each head's first rotary_embedding_dim features
// (all by default) are rotated in pairs by the angle of their position: the pairs are (i, i + rot/2)
// by default and (2i, 2i + 1) when interleaved; the remaining features pass through. cos/sin come
// from (max_position, rot/2) caches indexed by position_ids, or are given per (batch, seq) directly.
#include <fmt/format.h>

#include "ops/attention/ref_util.h"
#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using rt::KernelContext;
using rt::Tensor;

enum In { kX, kCos, kSin, kPositionIds };

class RotaryEmbedding : public rt::OpKernel {
 public:
  explicit RotaryEmbedding(const rt::KernelInfo& info)
      : interleaved_(info.get_int("interleaved", 0) != 0),
        num_heads_(info.has_attr("num_heads") ? info.get_int("num_heads") : 0),
        rotary_dim_(info.get_int("rotary_embedding_dim", 0)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(kX);
    const Tensor& cos = ctx.input(kCos);
    const Tensor& sin = ctx.input(kSin);
    if (cos.dtype() != x.dtype() || sin.dtype() != x.dtype())
      ctx.fail("cos_cache and sin_cache must have the element type of the input");
    Geometry g = geometry(ctx, x);
    const Tensor* pos = ctx.optional_input(kPositionIds);
    check_caches(ctx, cos, sin, pos, g);
    std::vector<int64_t> ids = pos ? pos->to_int64_vector() : std::vector<int64_t>{};
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] < 0 || ids[i] >= cos.dim(0))
        ctx.fail(
            fmt::format("position_ids[{}] = {} is outside the caches' {} positions", i, ids[i], cos.dim(0)));
    }
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    rt::dispatch(rt::FloatTypes{}, x.dtype(), "RotaryEmbedding",
                 [&]<class T>() { run<T>(ctx, x, cos, sin, ids, g, y); });
  }

 private:
  struct Geometry {
    int64_t batch, heads, seq, head, rot;
    bool packed;
  };

  Geometry geometry(const KernelContext& ctx, const Tensor& x) const {
    Geometry g{};
    if (x.rank() == 4) {
      g = {x.dim(0), x.dim(1), x.dim(2), x.dim(3), 0, false};
    } else if (x.rank() == 3) {
      if (num_heads_ <= 0) ctx.fail("a 3-D input needs a positive num_heads attribute");
      if (x.dim(2) % num_heads_ != 0)
        ctx.fail(fmt::format("hidden size {} is not divisible by num_heads {}", x.dim(2), num_heads_));
      g = {x.dim(0), num_heads_, x.dim(1), x.dim(2) / num_heads_, 0, true};
    } else {
      ctx.fail(fmt::format("input must be 3-D or 4-D, got {}", rt::shape_str(x.shape())));
    }
    g.rot = rotary_dim_ > 0 ? rotary_dim_ : g.head;
    if (g.rot % 2 != 0 || g.rot > g.head)
      ctx.fail(
          fmt::format("rotary_embedding_dim {} must be even and at most the head size {}", g.rot, g.head));
    return g;
  }

  static void check_caches(const KernelContext& ctx, const Tensor& cos, const Tensor& sin, const Tensor* pos,
                           const Geometry& g) {
    if (cos.shape() != sin.shape())
      ctx.fail(fmt::format("cos_cache {} and sin_cache {} differ in shape", rt::shape_str(cos.shape()),
                           rt::shape_str(sin.shape())));
    const int64_t half = g.rot / 2;
    if (pos) {
      if (pos->rank() != 2 || pos->dim(0) != g.batch || pos->dim(1) != g.seq)
        ctx.fail(fmt::format("position_ids {} must be (batch {}, seq {})", rt::shape_str(pos->shape()),
                             g.batch, g.seq));
      if (cos.rank() != 2 || cos.dim(1) != half)
        ctx.fail(fmt::format("cos_cache {} must be (max_position, {})", rt::shape_str(cos.shape()), half));
    } else if (cos.rank() != 3 || cos.dim(0) != g.batch || cos.dim(1) != g.seq || cos.dim(2) != half) {
      ctx.fail(fmt::format("without position_ids cos_cache {} must be (batch {}, seq {}, {})",
                           rt::shape_str(cos.shape()), g.batch, g.seq, half));
    }
  }

  template <class T>
  void run(KernelContext& ctx, const Tensor& x, const Tensor& cos, const Tensor& sin,
           const std::vector<int64_t>& ids, const Geometry& g, Tensor& y) const {
    using C = rt::compute_t<T>;
    const T* px = x.data<T>();
    const T* pc = cos.data<T>();
    const T* ps = sin.data<T>();
    T* py = y.data<T>();
    const int64_t half = g.rot / 2;
    const int64_t rows = g.batch * g.heads * g.seq;
    ctx.threads().parallel_for(rows, 64, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        // r enumerates (batch, head, seq) in the 4-D layout.
        const int64_t s = r % g.seq, h = (r / g.seq) % g.heads, b = r / (g.seq * g.heads);
        const int64_t off = g.packed ? ((b * g.seq + s) * g.heads + h) * g.head : r * g.head;
        const int64_t cache_row = ids.empty() ? (b * g.seq + s) : ids[static_cast<size_t>(b * g.seq + s)];
        const T* c = pc + cache_row * half;
        const T* sn = ps + cache_row * half;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = interleaved_ ? 2 * i : i;
          const int64_t i2 = interleaved_ ? 2 * i + 1 : i + half;
          const C x1 = static_cast<C>(px[off + i1]), x2 = static_cast<C>(px[off + i2]);
          const C cv = static_cast<C>(c[i]), sv = static_cast<C>(sn[i]);
          py[off + i1] = static_cast<T>(x1 * cv - x2 * sv);
          py[off + i2] = static_cast<T>(x2 * cv + x1 * sv);
        }
        for (int64_t i = g.rot; i < g.head; ++i) py[off + i] = px[off + i];
      }
    });
  }

  bool interleaved_;
  int64_t num_heads_, rotary_dim_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(attention_rotary_embedding) {
  reg.add(tessera::rt::KernelDef::of<RotaryEmbedding>("RotaryEmbedding"));
}
