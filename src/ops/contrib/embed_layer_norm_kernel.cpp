// Reference kernel of com.microsoft EmbedLayerNormalization (BERT's embedding block): for each token,
// word_embedding[input_ids] + position_embedding[position] (+ segment_embedding[segment_ids]),
// layer-normalised over the hidden axis with gamma and beta (epsilon default 1e-12, as ONNX Runtime).
// position is position_ids[b, s] (or [0, s] for a (1, seq) tensor) when given, else s. mask_index is
// the number of non-zero mask entries per sequence (0 without a mask, as ONNX Runtime writes);
// embedding_sum is the sum before normalisation. Ids outside their table are errors.
#include <fmt/format.h>

#include <cmath>

#include "ops/contrib/attention_common_kernel.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace ca = tessera::ops::contrib_attn;
using rt::KernelContext;
using rt::Tensor;

enum In { kInputIds, kSegmentIds, kWordEmb, kPosEmb, kSegEmb, kGamma, kBeta, kMask, kPositionIds };
enum Out { kOutput, kMaskIndex, kEmbeddingSum };

class EmbedLayerNorm : public rt::OpKernel {
 public:
  explicit EmbedLayerNorm(const rt::KernelInfo& info) : eps_(info.get_float("epsilon", 1e-12f)) {
    if (!(eps_ >= 0)) throw rt::KernelError(fmt::format("epsilon must not be negative, got {}", eps_));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& ids = ctx.input(kInputIds);
    const Tensor& word = ctx.input(kWordEmb);
    const Tensor& pos_emb = ctx.input(kPosEmb);
    const Tensor* seg_ids = ctx.optional_input(kSegmentIds);
    const Tensor* seg_emb = ctx.optional_input(kSegEmb);
    const Tensor& gamma = ctx.input(kGamma);
    const Tensor& beta = ctx.input(kBeta);
    const Tensor* mask = ctx.optional_input(kMask);
    const Tensor* pos_ids = ctx.optional_input(kPositionIds);
    const rt::DataType dt = word.dtype();
    if (ids.rank() != 2)
      ctx.fail(fmt::format("input_ids must be 2-D (batch, seq), got {}", ca::shape_of(ids)));
    const int64_t batch = ids.dim(0), seq = ids.dim(1);
    if (word.rank() != 2)
      ctx.fail(fmt::format("word_embedding must be 2-D (vocab, hidden), got {}", ca::shape_of(word)));
    const int64_t hidden = word.dim(1);
    if (!seg_ids != !seg_emb) ctx.fail("segment_ids and segment_embedding must be given together");
    for (auto [t, name] : {std::pair{&pos_emb, "position_embedding"}, {seg_emb, "segment_embedding"}}) {
      if (!t) continue;
      ca::require_same_type(ctx, *t, dt, name);
      if (t->rank() != 2 || t->dim(1) != hidden)
        ctx.fail(fmt::format("{} {} must be 2-D (rows, hidden = {})", name, ca::shape_of(*t), hidden));
    }
    for (auto [t, name] : {std::pair{&gamma, "gamma"}, {&beta, "beta"}}) {
      ca::require_same_type(ctx, *t, dt, name);
      if (t->rank() != 1 || t->dim(0) != hidden)
        ctx.fail(fmt::format("{} {} must be 1-D (hidden = {})", name, ca::shape_of(*t), hidden));
    }
    for (auto [t, name] : {std::pair{seg_ids, "segment_ids"}, {mask, "mask"}}) {
      if (!t) continue;
      if (t->dtype() != rt::DataType::kInt32) ctx.fail(fmt::format("{} must be int32", name));
      if (t->shape() != ids.shape())
        ctx.fail(fmt::format("{} {} must have the shape of input_ids {}", name, ca::shape_of(*t),
                             ca::shape_of(ids)));
    }
    bool pos_broadcast = false;
    if (pos_ids) {
      if (pos_ids->dtype() != rt::DataType::kInt32) ctx.fail("position_ids must be int32");
      if (pos_ids->rank() != 2 || pos_ids->dim(1) != seq ||
          (pos_ids->dim(0) != batch && pos_ids->dim(0) != 1))
        ctx.fail(fmt::format("position_ids {} must be (batch, seq) = ({}, {}) or (1, seq)",
                             ca::shape_of(*pos_ids), batch, seq));
      pos_broadcast = pos_ids->dim(0) == 1 && batch != 1;
    }
    if (ids.dtype() != rt::DataType::kInt32) ctx.fail("input_ids must be int32");

    // Every index checked before any is used.
    const int32_t* pid = ids.data<int32_t>();
    const int32_t* psid = seg_ids ? seg_ids->data<int32_t>() : nullptr;
    const int32_t* ppos = pos_ids ? pos_ids->data<int32_t>() : nullptr;
    const int64_t tokens = batch * seq;
    auto position = [&](int64_t t) -> int64_t {
      if (!ppos) return t % seq;
      return ppos[pos_broadcast ? t % seq : t];
    };
    for (int64_t t = 0; t < tokens; ++t) {
      if (pid[t] < 0 || pid[t] >= word.dim(0))
        ctx.fail(fmt::format("input_ids value {} at [{}, {}] is outside the word_embedding's {} rows", pid[t],
                             t / seq, t % seq, word.dim(0)));
      const int64_t p = position(t);
      if (p < 0 || p >= pos_emb.dim(0))
        ctx.fail(fmt::format("position {} of token [{}, {}] is outside the position_embedding's {} rows", p,
                             t / seq, t % seq, pos_emb.dim(0)));
      if (psid && (psid[t] < 0 || psid[t] >= seg_emb->dim(0)))
        ctx.fail(fmt::format("segment_ids value {} at [{}, {}] is outside the segment_embedding's {} rows",
                             psid[t], t / seq, t % seq, seg_emb->dim(0)));
    }

    const std::vector<float> wf = ca::to_floats(word, "word_embedding");
    const std::vector<float> pf = ca::to_floats(pos_emb, "position_embedding");
    const std::vector<float> sf =
        seg_emb ? ca::to_floats(*seg_emb, "segment_embedding") : std::vector<float>{};
    const std::vector<float> gf = ca::to_floats(gamma, "gamma"), bf = ca::to_floats(beta, "beta");
    std::vector<float> sum(static_cast<size_t>(tokens * hidden)), y(sum.size());
    ctx.threads().parallel_for(
        tokens, std::max<int64_t>(1, 4096 / std::max<int64_t>(hidden, 1)), [&](int64_t t0, int64_t t1) {
          for (int64_t t = t0; t < t1; ++t) {
            float* e = sum.data() + t * hidden;
            const float* w = wf.data() + pid[t] * hidden;
            const float* p = pf.data() + position(t) * hidden;
            const float* s = psid ? sf.data() + psid[t] * hidden : nullptr;
            float mean = 0;
            for (int64_t j = 0; j < hidden; ++j) {
              e[j] = w[j] + p[j] + (s ? s[j] : 0.0f);
              mean += e[j];
            }
            mean /= static_cast<float>(hidden);
            float var = 0;
            for (int64_t j = 0; j < hidden; ++j) var += (e[j] - mean) * (e[j] - mean);
            const float inv = 1.0f / std::sqrt(var / static_cast<float>(hidden) + eps_);
            float* out = y.data() + t * hidden;
            for (int64_t j = 0; j < hidden; ++j) out[j] = (e[j] - mean) * inv * gf[j] + bf[j];
          }
        });
    ca::store_floats(ctx.output(kOutput, dt, {batch, seq, hidden}), y, "EmbedLayerNormalization output");
    if (ctx.wants_output(kMaskIndex)) {
      int32_t* mi = ctx.output(kMaskIndex, rt::DataType::kInt32, {batch}).data<int32_t>();
      for (int64_t b = 0; b < batch; ++b) {
        int32_t count = 0;
        if (mask)
          for (int64_t s = 0; s < seq; ++s) count += mask->data<int32_t>()[b * seq + s] != 0;
        mi[b] = count;
      }
    }
    if (ctx.wants_output(kEmbeddingSum))
      ca::store_floats(ctx.output(kEmbeddingSum, dt, {batch, seq, hidden}), sum, "embedding_sum");
  }

 private:
  float eps_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(contrib_embed_layer_norm) {
  reg.add(tessera::rt::KernelDef::of<EmbedLayerNorm>("EmbedLayerNormalization").in_domain("com.microsoft"));
}
