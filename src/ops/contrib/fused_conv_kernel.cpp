// Reference kernel of FusedConv (com.microsoft 1): the convolution is computed by whichever Conv kernel
// the registry holds (the reference one, or a faster backend's), run on a Conv node derived from this one;
// then Z is added and the activation applied in place, before the result is handed on.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "runtime/dispatch.h"
#include "runtime/inner_kernel.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

using tessera::rt::KernelContext;
using tessera::rt::Tensor;
using tessera::rt::Value;
namespace rt = tessera::rt;
namespace ir = tessera::ir;

enum class Act { kNone, kRelu, kTanh, kSigmoid, kLeakyRelu, kClip, kHardSigmoid };

Act parse_activation(const std::string& name, size_t params) {
  struct Entry {
    const char* name;
    Act act;
    size_t params;
  };
  static const Entry kActs[] = {{"", Act::kNone, 0},
                                {"Relu", Act::kRelu, 0},
                                {"Tanh", Act::kTanh, 0},
                                {"Sigmoid", Act::kSigmoid, 0},
                                {"LeakyRelu", Act::kLeakyRelu, 1},
                                {"Clip", Act::kClip, 2},
                                {"HardSigmoid", Act::kHardSigmoid, 2}};
  for (const auto& e : kActs) {
    if (name != e.name) continue;
    if (params < e.params)
      throw rt::KernelError(
          fmt::format("activation {} needs {} activation_params, got {}", name, e.params, params));
    return e.act;
  }
  throw rt::KernelError(fmt::format("unsupported activation '{}'", name));
}

template <class C>
C activate(Act act, C x, const std::vector<float>& p) {
  switch (act) {
    case Act::kNone:
      return x;
    case Act::kRelu:
      return x < C(0) ? C(0) : x;
    case Act::kTanh:
      return std::tanh(x);
    case Act::kSigmoid:
      return C(1) / (C(1) + std::exp(-x));
    case Act::kLeakyRelu:
      return x < C(0) ? static_cast<C>(p[0]) * x : x;
    case Act::kClip:
      return std::min(std::max(x, static_cast<C>(p[0])), static_cast<C>(p[1]));
    case Act::kHardSigmoid: {
      // NaN stays NaN (std::min(1, NaN) would be 1), as the standalone HardSigmoid keeps it.
      C t = static_cast<C>(p[0]) * x + static_cast<C>(p[1]);
      return t < C(0) ? C(0) : (t > C(1) ? C(1) : t);
    }
  }
  return x;
}

class FusedConv : public rt::OpKernel {
 public:
  explicit FusedConv(const rt::KernelInfo& info)
      : params_(info.get_floats("activation_params", {})),
        act_(parse_activation(info.get_string("activation", ""), params_.size())) {
    conv_node_ = info.node();
    conv_node_.op_type = "Conv";
    conv_node_.domain.clear();
    std::erase_if(conv_node_.attributes, [](const ir::Attribute& a) {
      return a.name == "activation" || a.name == "activation_params";
    });
    if (conv_node_.inputs.size() > 3) conv_node_.inputs.resize(3);  // Z is added here, not by Conv
    // Conv's reference kernel (priority 0), not its fastest: this kernel is the oracle that the fast
    // FusedConv and BlockedConv kernels are checked against.
    conv_ = std::make_unique<rt::InnerKernel>(conv_node_, 22, 0);
  }

  void compute(KernelContext& ctx) const override {
    std::vector<const Value*> ins;
    for (size_t i = 0; i < std::min<size_t>(3, ctx.input_count()); ++i) ins.push_back(ctx.input_slot(i));
    std::vector<Value> outs = conv_->run(ctx, ins);
    // The result is ours (allocated through the host above), so Z and the activation apply in place.
    Tensor y = outs[0].tensor();
    const Tensor* z = ctx.optional_input(3);
    if (z && (z->shape() != y.shape() || z->dtype() != y.dtype()))
      ctx.fail(fmt::format("Z {} must have the convolution's shape {}", rt::shape_str(z->shape()),
                           rt::shape_str(y.shape())));
    rt::dispatch(rt::TypeList<float, double, rt::Float16>{}, y.dtype(), "FusedConv", [&]<class T>() {
      using C = rt::compute_t<T>;
      T* py = y.data<T>();
      const T* pz = z ? z->data<T>() : nullptr;
      ctx.threads().parallel_for(y.numel(), 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          C v = static_cast<C>(py[i]);
          if (pz) v += static_cast<C>(pz[i]);
          py[i] = static_cast<T>(activate<C>(act_, v, params_));
        }
      });
    });
    ctx.set_output(0, Value(y));
  }

 private:
  std::vector<float> params_;
  Act act_;
  ir::Node conv_node_;
  std::unique_ptr<rt::InnerKernel> conv_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(contrib_fused_conv) {
  reg.add(tessera::rt::KernelDef::of<FusedConv>("FusedConv").in_domain("com.microsoft"));
}
