// FusedConv (com.microsoft 1): Conv, plus an optional tensor Z added to its result, followed by an
// activation, as ONNX Runtime's graph optimiser fuses Conv + Relu/Clip/LeakyRelu/Sigmoid/HardSigmoid/Tanh.
// activation_params holds the activation's parameters in ONNX Runtime's order: LeakyRelu [alpha],
// Clip [min, max], HardSigmoid [alpha, beta].
#include "ops/contrib/fused_conv.h"

#include "ops/infer_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::AttrType;

namespace {

void infer_fused_conv(InferenceContext& ctx) {
  nn::infer_conv(ctx, {}, input_elem(ctx, 0));
}

}  // namespace

OpSchema tessera::ops::contrib::fused_conv_schema(const char* name, const char* domain, std::string doc,
                                                  std::vector<std::string> types) {
  OpSchema s(name, 1, domain);
  s.category(Category::kConvolution)
      .doc(std::move(doc))
      .input("X", "T")
      .input("W", "T")
      .optional_input("B", "T")
      .optional_input("Z", "T")
      .output("Y", "T")
      .types("T", std::move(types))
      .attr("auto_pad", "NOTSET")
      .attr_optional("kernel_shape", AttrType::kInts)
      .attr_optional("dilations", AttrType::kInts)
      .attr_optional("strides", AttrType::kInts)
      .attr_optional("pads", AttrType::kInts)
      .attr("group", int64_t{1})
      .attr_optional("activation", AttrType::kString)
      .attr_optional("activation_params", AttrType::kFloats);
  return s;
}

TESSERA_REGISTER_OPS(contrib_fused_conv) {
  reg.add(
      contrib::fused_conv_schema(
          "FusedConv", "com.microsoft",
          "Convolution (with an optional bias B and an optional tensor Z added to the result) followed by an "
          "activation: Relu, Tanh, Sigmoid, LeakyRelu, Clip or HardSigmoid, whose parameters are given in "
          "activation_params.",
          types::tensors({"float16", "float", "double"}))
          .infer(infer_fused_conv));
}
