// Reference kernels of the blocked-layout ops: the reorders as plain loops; BlockedConv and the pools
// convert to NCHW, run the plain op's reference kernel (FusedConv, MaxPool, AveragePool) and convert
// the result back, so the oracle of the fast blocked kernels is the oracle of the plain ops.
#include "ops/layout/blocked_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ops/layout/blocked.h"
#include "runtime/inner_kernel.h"
#include "runtime/thread_pool.h"

namespace tessera::ops::layout {

namespace {

// Copies between the plain plane of channel c and its lane in the blocked tensor, for every
// (n, channel block) pair in parallel. `to` says which way.
void copy_planes(rt::ThreadPool& pool, const float* plain, float* blocked, int64_t n, int64_t c, int64_t cb,
                 int64_t hw, int64_t b, bool to) {
  pool.parallel_for(n * cb, 1, [&](int64_t begin, int64_t end) {
    for (int64_t nb = begin; nb < end; ++nb) {
      int64_t img = nb / cb, blk = nb % cb;
      float* bp = blocked + nb * hw * b;
      for (int64_t lane = 0; lane < b; ++lane) {
        int64_t ch = blk * b + lane;
        if (ch >= c) {
          if (to)
            for (int64_t i = 0; i < hw; ++i) bp[i * b + lane] = 0.f;
          continue;
        }
        float* pp = const_cast<float*>(plain) + (img * c + ch) * hw;
        if (to)
          for (int64_t i = 0; i < hw; ++i) bp[i * b + lane] = pp[i];
        else
          for (int64_t i = 0; i < hw; ++i) pp[i] = bp[i * b + lane];
      }
    }
  });
}

void require_float(const rt::Tensor& t, const char* what) {
  if (t.dtype() != ir::DataType::kFloat)
    throw rt::KernelError(fmt::format("{} must be float, got {}", what, rt::Value(t).describe()));
}

}  // namespace

void to_blocked(rt::ThreadPool& pool, const rt::Tensor& x, rt::Tensor& y) {
  require_float(x, "X");
  int64_t n = x.dim(0), c = x.dim(1), hw = x.dim(2) * x.dim(3), b = y.dim(4);
  copy_planes(pool, x.data<float>(), y.data<float>(), n, c, y.dim(1), hw, b, true);
}

void from_blocked(rt::ThreadPool& pool, const rt::Tensor& x, rt::Tensor& y) {
  require_float(x, "X");
  int64_t n = x.dim(0), c = y.dim(1), hw = x.dim(2) * x.dim(3), b = x.dim(4);
  copy_planes(pool, y.data<float>(), const_cast<float*>(x.data<float>()), n, c, x.dim(1), hw, b, false);
}

}  // namespace tessera::ops::layout

namespace {

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using namespace tessera::ops::layout;

void check_blocked(rt::KernelContext& ctx, size_t i, const rt::Tensor& t) {
  if (t.rank() != 5 || t.dim(4) < 1)
    ctx.fail(fmt::format("input {} must be a blocked [N, Cb, H, W, b] tensor, got {}", i,
                         rt::shape_str(t.shape())));
}

rt::Tensor unblocked(rt::KernelContext& ctx, const rt::Tensor& x, int64_t channels) {
  if (channels > x.dim(1) * x.dim(4) || channels <= (x.dim(1) - 1) * x.dim(4))
    ctx.fail(fmt::format("{} channels do not fit the blocked shape {}", channels, rt::shape_str(x.shape())));
  rt::Tensor y = ctx.scratch(x.dtype(), {x.dim(0), channels, x.dim(2), x.dim(3)});
  from_blocked(ctx.threads(), x, y);
  return y;
}

void reorder_to_blocked(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  int64_t b = ctx.info().get_int("block");
  if (x.rank() != 4 || b < 1)
    ctx.fail(fmt::format("X must be [N, C, H, W], got {}", rt::shape_str(x.shape())));
  rt::Tensor& y = ctx.output(0, x.dtype(), {x.dim(0), channel_blocks(x.dim(1), b), x.dim(2), x.dim(3), b});
  to_blocked(ctx.threads(), x, y);
}

void reorder_from_blocked(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  check_blocked(ctx, 0, x);
  int64_t c = ctx.info().get_int("channels");
  if (c > x.dim(1) * x.dim(4) || c <= (x.dim(1) - 1) * x.dim(4))
    ctx.fail(fmt::format("{} channels do not fit the blocked shape {}", c, rt::shape_str(x.shape())));
  rt::Tensor& y = ctx.output(0, x.dtype(), {x.dim(0), c, x.dim(2), x.dim(3)});
  from_blocked(ctx.threads(), x, y);
}

// The node without com.tessera's own attributes, as the plain op `op` of `domain`.
ir::Node plain_node(const ir::Node& n, const char* op, const char* domain) {
  ir::Node p = n;
  p.op_type = op;
  p.domain = domain;
  std::erase_if(p.attributes, [](const ir::Attribute& a) { return a.name == "block"; });
  return p;
}

class BlockedConv : public rt::OpKernel {
 public:
  explicit BlockedConv(const rt::KernelInfo& info)
      : block_(info.get_int("block")),
        group_(info.get_int("group", 1)),
        conv_(plain_node(info.node(), "FusedConv", "com.microsoft"), 1, 0) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Tensor& w = ctx.input(1);
    if (w.rank() != 4)
      ctx.fail(fmt::format("W must be [M, C/group, kH, kW], got {}", rt::shape_str(w.shape())));
    // `held` keeps the unblocked X and Z alive while the plain kernel reads them.
    std::vector<rt::Value> held;
    held.reserve(2);
    held.emplace_back(x.rank() == 5 ? unblocked(ctx, x, w.dim(1) * group_) : x);
    std::vector<const rt::Value*> ins{&held[0], ctx.input_slot(1), ctx.input_slot(2)};
    if (const rt::Tensor* z = ctx.optional_input(3)) {
      check_blocked(ctx, 3, *z);
      held.emplace_back(unblocked(ctx, *z, w.dim(0)));
      ins.push_back(&held[1]);
    }
    const rt::Tensor p = conv_.run(ctx, ins)[0].tensor();
    rt::Tensor& y = ctx.output(0, ir::DataType::kFloat,
                               {p.dim(0), channel_blocks(p.dim(1), block_), p.dim(2), p.dim(3), block_});
    to_blocked(ctx.threads(), p, y);
  }

 private:
  int64_t block_, group_;
  rt::InnerKernel conv_;
};

// MaxPool / AveragePool of opset 22 on the unblocked tensor; the padded channels are pooled too.
class BlockedPool : public rt::OpKernel {
 public:
  explicit BlockedPool(const rt::KernelInfo& info)
      : pool_(plain_node(info.node(), info.op_type() == "BlockedMaxPool" ? "MaxPool" : "AveragePool", ""), 22,
              0) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    check_blocked(ctx, 0, x);
    rt::Value plain(unblocked(ctx, x, x.dim(1) * x.dim(4)));
    const rt::Value* ins[] = {&plain};
    std::vector<rt::Value> out = pool_.run(ctx, ins);
    const rt::Tensor& p = out[0].tensor();
    rt::Tensor& y = ctx.output(0, x.dtype(), {x.dim(0), x.dim(1), p.dim(2), p.dim(3), x.dim(4)});
    to_blocked(ctx.threads(), p, y);
  }

 private:
  rt::InnerKernel pool_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(layout_blocked) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("ReorderToBlocked", reorder_to_blocked).in_domain(kDomain));
  reg.add(KernelDef::fn("ReorderFromBlocked", reorder_from_blocked).in_domain(kDomain));
  reg.add(KernelDef::of<BlockedConv>("BlockedConv").in_domain(kDomain));
  reg.add(KernelDef::of<BlockedPool>("BlockedMaxPool").in_domain(kDomain));
  reg.add(KernelDef::of<BlockedPool>("BlockedAveragePool").in_domain(kDomain));
}
