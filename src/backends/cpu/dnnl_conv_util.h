// Pieces shared by the oneDNN convolution and pooling kernels (plain NCHW in dnnl_conv_kernel.cpp,
// blocked in dnnl_blocked_kernel.cpp): the window geometry in oneDNN's conventions (FusedConv's
// activation is in conv_activation.h).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace tessera::cpu {

// The window attributes of a Conv / pooling node, read once.
struct WindowAttrs {
  std::string auto_pad;
  std::vector<int64_t> kernel, dilations, strides, pads;
  bool ceil_mode = false;
  static WindowAttrs read(const rt::KernelInfo& info);
};

// Strides, dilations (oneDNN's convention: 0 = dense), pads and output sizes for the spatial sizes
// `in` and kernel sizes `kernel`; nullopt for what oneDNN is not asked to do (the reference kernel then
// runs the node and gives the message).
struct WindowGeometry {
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
  std::vector<int64_t> out;  // spatial output sizes
};
std::optional<WindowGeometry> window_geometry(const WindowAttrs& a, const std::vector<int64_t>& in,
                                              const std::vector<int64_t>& kernel);

// Creates the convolution primitive of `pd`: oneDNN generates its code then, the costly part of a
// convolution's setup (made twice, ResNet-50's added 0.2 s to its session build in session 9's
// measurement; within the noise on the 2-core build machine, where oneDNN's primitive cache may catch
// the second). Session build makes the primitive descriptors only (to lay the weights out), the first
// run the primitives: created once each, counted for the tests.
dnnl::convolution_forward make_conv_primitive(const dnnl::convolution_forward::primitive_desc& pd);
// How many make_conv_primitive made in this process.
int64_t conv_primitives_created();

}  // namespace tessera::cpu
