// Reference kernels of the channels-last ops: each transposes its channels-last inputs to NCHW (and
// NhwcConv's weights from [M, kH, kW, C/group] to [M, C/group, kH, kW]) with the reference Transpose,
// runs the plain op's reference kernel (FusedConv, MaxPool, AveragePool) and transposes the result
// back, so the oracle of the fast NHWC kernels is the oracle of the plain ops.
#include <fmt/format.h>

#include <vector>

#include "ops/nhwc/nhwc.h"
#include "runtime/inner_kernel.h"
#include "runtime/kernel.h"

namespace {

namespace rt = tessera::rt;
namespace ir = tessera::ir;
namespace nhwc = tessera::ops::nhwc;

// A Transpose node (opset 13) with `perm`.
ir::Node transpose_node(const std::vector<int64_t>& perm) {
  ir::Node t;
  t.op_type = "Transpose";
  t.inputs = {"x"};
  t.outputs = {"y"};
  t.attributes = {ir::Attribute::of_ints("perm", perm)};
  return t;
}

// The node as the plain op `op` of `domain`: same attributes and inputs.
ir::Node plain_node(const ir::Node& n, const char* op, const char* domain) {
  ir::Node p = n;
  p.op_type = op;
  p.domain = domain;
  return p;
}

void require_rank4(rt::KernelContext& ctx, size_t i, const rt::Tensor& t, const char* name) {
  if (t.rank() != 4)
    ctx.fail(fmt::format("input {} ({}) must be channels-last [N, H, W, C], got {}", i, name,
                         rt::shape_str(t.shape())));
}

// Runs `k` on one input and returns its result.
rt::Value transposed(rt::KernelContext& ctx, const rt::InnerKernel& k, const rt::Value& v) {
  const rt::Value* ins[] = {&v};
  return std::move(k.run(ctx, ins)[0]);
}

class NhwcConv : public rt::OpKernel {
 public:
  explicit NhwcConv(const rt::KernelInfo& info)
      : to_nchw_(transpose_node(nhwc::to_nchw_perm()), 13, 0),
        to_nhwc_(transpose_node(nhwc::to_nhwc_perm()), 13, 0),
        conv_(plain_node(info.node(), "FusedConv", "com.microsoft"), 1, 0) {}

  void compute(rt::KernelContext& ctx) const override {
    require_rank4(ctx, 0, ctx.input(0), "X");
    require_rank4(ctx, 1, ctx.input(1), "W");
    // `held` keeps the NCHW X, W and Z alive while the plain kernel reads them.
    std::vector<rt::Value> held;
    held.reserve(3);
    held.push_back(transposed(ctx, to_nchw_, *ctx.input_slot(0)));
    held.push_back(transposed(ctx, to_nchw_, *ctx.input_slot(1)));
    std::vector<const rt::Value*> ins{&held[0], &held[1], ctx.input_slot(2)};
    if (const rt::Tensor* z = ctx.optional_input(3)) {
      require_rank4(ctx, 3, *z, "Z");
      held.push_back(transposed(ctx, to_nchw_, *ctx.input_slot(3)));
      ins.push_back(&held[2]);
    }
    rt::Value y = transposed(ctx, to_nhwc_, conv_.run(ctx, ins)[0]);
    ctx.set_output(0, std::move(y));
  }

 private:
  rt::InnerKernel to_nchw_, to_nhwc_, conv_;
};

// MaxPool / AveragePool of opset 22 on the NCHW tensor.
class NhwcPool : public rt::OpKernel {
 public:
  explicit NhwcPool(const rt::KernelInfo& info)
      : to_nchw_(transpose_node(nhwc::to_nchw_perm()), 13, 0),
        to_nhwc_(transpose_node(nhwc::to_nhwc_perm()), 13, 0),
        pool_(plain_node(info.node(), info.op_type() == "NhwcMaxPool" ? "MaxPool" : "AveragePool", ""), 22,
              0) {}

  void compute(rt::KernelContext& ctx) const override {
    require_rank4(ctx, 0, ctx.input(0), "X");
    rt::Value plain = transposed(ctx, to_nchw_, *ctx.input_slot(0));
    rt::Value y = transposed(ctx, to_nhwc_, transposed(ctx, pool_, plain));
    ctx.set_output(0, std::move(y));
  }

 private:
  rt::InnerKernel to_nchw_, to_nhwc_, pool_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nhwc_layout) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<NhwcConv>("NhwcConv").in_domain(nhwc::kDomain));
  reg.add(KernelDef::of<NhwcPool>("NhwcMaxPool").in_domain(nhwc::kDomain));
  reg.add(KernelDef::of<NhwcPool>("NhwcAveragePool").in_domain(nhwc::kDomain));
}
