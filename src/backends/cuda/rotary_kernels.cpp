// The CUDA backend's RotaryEmbedding (ai.onnx 23): 3-D (with num_heads) and 4-D inputs, interleaved or
// not, rotary_embedding_dim, caches indexed by position_ids or given per (batch, seq). Shapes are
// checked on the host as the CPU reference does (ops/attention/rotary_embedding_kernel.cpp).
#include <fmt/format.h>

#include "backends/cuda/data_util.h"
#include "backends/cuda/kernel_util.h"
#include "backends/cuda/rotary_ops.h"

namespace tessera::cuda {

namespace {

using rt::DataType;

bool rotary_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !info.has_input(0) || !info.has_input(1) || !info.has_input(2)) return false;
  const DataType t = info.input_dtype(0);
  if (t != DataType::kFloat && t != DataType::kFloat16 && t != DataType::kBFloat16 && t != DataType::kDouble)
    return false;
  if (info.input_dtype(1) != t || info.input_dtype(2) != t) return false;  // the CPU names the mismatch
  return !info.has_input(3) || info.input_dtype(3) == DataType::kInt64;
}

class Rotary : public rt::OpKernel {
 public:
  explicit Rotary(const rt::KernelInfo& info)
      : interleaved_(info.get_int("interleaved", 0) != 0),
        num_heads_(info.has_attr("num_heads") ? info.get_int("num_heads") : 0),
        rotary_dim_(info.get_int("rotary_embedding_dim", 0)) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor& cos = ctx.input(1);
    const rt::Tensor& sin = ctx.input(2);
    const rt::Tensor* pos = ctx.optional_input(3);
    RotarySpec s;
    s.interleaved = interleaved_;
    if (x.rank() == 4) {
      s.batch = x.dim(0), s.heads = x.dim(1), s.seq = x.dim(2), s.head = x.dim(3);
    } else if (x.rank() == 3) {
      if (num_heads_ <= 0) ctx.fail("a 3-D input needs a positive num_heads attribute");
      if (x.dim(2) % num_heads_ != 0)
        ctx.fail(fmt::format("hidden size {} is not divisible by num_heads {}", x.dim(2), num_heads_));
      s.batch = x.dim(0), s.heads = num_heads_, s.seq = x.dim(1), s.head = x.dim(2) / num_heads_,
      s.packed = true;
    } else {
      ctx.fail(fmt::format("input must be 3-D or 4-D, got {}", rt::shape_str(x.shape())));
    }
    s.rot = rotary_dim_ > 0 ? rotary_dim_ : s.head;
    if (s.rot % 2 != 0 || s.rot > s.head)
      ctx.fail(
          fmt::format("rotary_embedding_dim {} must be even and at most the head size {}", s.rot, s.head));
    if (cos.shape() != sin.shape())
      ctx.fail(fmt::format("cos_cache {} and sin_cache {} differ in shape", rt::shape_str(cos.shape()),
                           rt::shape_str(sin.shape())));
    const int64_t half = s.rot / 2;
    if (pos) {
      if (pos->rank() != 2 || pos->dim(0) != s.batch || pos->dim(1) != s.seq)
        ctx.fail(fmt::format("position_ids {} must be (batch {}, seq {})", rt::shape_str(pos->shape()),
                             s.batch, s.seq));
      if (cos.rank() != 2 || cos.dim(1) != half)
        ctx.fail(fmt::format("cos_cache {} must be (max_position, {})", rt::shape_str(cos.shape()), half));
      s.positions = cos.dim(0);
    } else if (cos.rank() != 3 || cos.dim(0) != s.batch || cos.dim(1) != s.seq || cos.dim(2) != half) {
      ctx.fail(fmt::format("without position_ids cos_cache {} must be (batch {}, seq {}, {})",
                           rt::shape_str(cos.shape()), s.batch, s.seq, half));
    }
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
    launch_rotary(*scalar_type(x.dtype()), x.raw(), cos.raw(), sin.raw(),
                  pos ? static_cast<const int64_t*>(pos->raw()) : nullptr, y.raw(), s, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  bool interleaved_;
  int64_t num_heads_, rotary_dim_;
};

}  // namespace

void register_rotary_kernels(KernelTable& t) {
  t.add(cuda_def(
      "RotaryEmbedding", rotary_supported,
      [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Rotary>(i); }, 23));
}

}  // namespace tessera::cuda
