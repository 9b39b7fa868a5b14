// Conv, and its integer (ConvInteger) and quantized (QLinearConv) forms: N-D convolution with groups.
#include "ops/infer_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::AttrType;
using tessera::ir::DataType;

namespace {

// The attributes every convolution shares.
OpSchema& conv_attrs(OpSchema& s) {
  return s.attr("auto_pad", "NOTSET")
      .attr_optional("dilations", AttrType::kInts)
      .attr("group", int64_t{1})
      .attr_optional("kernel_shape", AttrType::kInts)
      .attr_optional("pads", AttrType::kInts)
      .attr_optional("strides", AttrType::kInts);
}

void infer_conv(InferenceContext& ctx) {
  nn::infer_conv(ctx, {}, input_elem(ctx, 0));
}

void infer_conv_integer(InferenceContext& ctx) {
  nn::infer_conv(ctx, {.x = 0, .w = 1, .b = -1, .x_name = "x", .w_name = "w"}, DataType::kInt32);
}

// The output is quantized like y_zero_point (input 7).
void infer_qlinear_conv(InferenceContext& ctx) {
  nn::infer_conv(ctx, {.x = 0, .w = 3, .b = 8, .x_name = "x", .w_name = "w", .b_name = "B"},
                 input_elem(ctx, 7));
}

}  // namespace

TESSERA_REGISTER_OPS(nn_conv) {
  for (int v : {1, 11, 22}) {
    OpSchema s("Conv", v);
    s.category(Category::kConvolution)
        .doc(
            "Convolves X with the filters W (optionally adding a bias B per output channel). Supports any "
            "number "
            "of spatial axes, strides, dilations, padding and grouped (depthwise) convolution.")
        .input("X", "T")
        .input("W", "T")
        .optional_input("B", "T")
        .output("Y", "T")
        .types("T", nn::float_types(v))
        .infer(infer_conv);
    reg.add(conv_attrs(s));
  }

  OpSchema ci("ConvInteger", 10);
  ci.category(Category::kConvolution)
      .doc("Convolution of 8-bit integer tensors, after subtracting their zero points, accumulated in int32.")
      .input("x", "T1")
      .input("w", "T2")
      .optional_input("x_zero_point", "T1")
      .optional_input("w_zero_point", "T2")
      .output("y", "T3")
      .types("T1", types::tensors({"int8", "uint8"}))
      .types("T2", types::tensors({"int8", "uint8"}))
      .types("T3", types::tensors({"int32"}))
      .infer(infer_conv_integer);
  reg.add(conv_attrs(ci));

  OpSchema q("QLinearConv", 10);
  q.category(Category::kConvolution)
      .doc(
          "Convolution of quantized tensors: dequantizes x and w with their scales and zero points, "
          "convolves, "
          "adds the int32 bias and requantizes the result with y_scale and y_zero_point.")
      .input("x", "T1")
      .input("x_scale", "tensor(float)")
      .input("x_zero_point", "T1")
      .input("w", "T2")
      .input("w_scale", "tensor(float)")
      .input("w_zero_point", "T2")
      .input("y_scale", "tensor(float)")
      .input("y_zero_point", "T3")
      .optional_input("B", "T4")
      .output("y", "T3")
      .types("T1", types::tensors({"int8", "uint8"}))
      .types("T2", types::tensors({"int8", "uint8"}))
      .types("T3", types::tensors({"int8", "uint8"}))
      .types("T4", types::tensors({"int32"}))
      .infer(infer_qlinear_conv);
  reg.add(conv_attrs(q));
}
