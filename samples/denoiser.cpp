#include <cmath>

#include "ir/builder.h"
#include "samples.h"

namespace tessera::samples {

using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::Type;

namespace {

// Conv + bias (+ Relu), He-initialised so activations keep their scale through the network.
std::string conv(ir::GraphBuilder& b, const std::string& name, const std::string& x, int64_t cin,
                 int64_t cout, int64_t k, int64_t stride, bool relu) {
  float stddev = std::sqrt(2.0f / static_cast<float>(cin * k * k));
  auto w = b.random_normal(name + ".weight", {cout, cin, k, k}, stddev);
  auto bias = b.constant_floats(name + ".bias", {cout}, 0.01f);
  int64_t pad = k / 2;
  auto y =
      b.node("Conv", {x, w, bias},
             {Attribute::of_ints("kernel_shape", {k, k}), Attribute::of_ints("strides", {stride, stride}),
              Attribute::of_ints("pads", {pad, pad, pad, pad})},
             name);
  return relu ? b.node("Relu", {y}, {}, name + "_relu") : y;
}

}  // namespace

ir::Model make_denoiser() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports.push_back({"", 17});
  m.producer_name = "tessera-samples";
  m.doc_string = "Small image denoiser: predicts a clean image from a noisy one (random weights).";
  m.graph.name = "denoiser";
  ir::GraphBuilder b(m.graph);

  Type image =
      Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("batch"), Dim::of(3), Dim::of(256), Dim::of(256)});
  auto x = b.input("input_image", image);

  // Full-resolution paths: a 1x1 skip and the first encoder stage.
  auto skip = conv(b, "conv_enc_b", x, 3, 32, 1, 1, false);
  auto e1 = conv(b, "conv_enc_1", x, 3, 32, 3, 1, true);
  // Half resolution: strided stage and two more convolutions.
  auto e2 = conv(b, "conv_enc_2s", e1, 32, 64, 3, 2, true);
  auto e3 = conv(b, "conv_enc_3", e2, 64, 64, 3, 1, true);
  auto e4 = conv(b, "conv_enc_4", e3, 64, 64, 3, 1, true);
  // Back to full resolution by pixel shuffle: 128 channels at half size -> 32 at full size.
  auto pre = conv(b, "conv_preshuffle", e4, 64, 128, 3, 1, false);
  auto up = b.node("DepthToSpace", {pre},
                   {Attribute::of_int("blocksize", 2), Attribute::of_string("mode", "CRD")}, "pixel_shuffle");
  auto merged = b.node("Add", {up, skip}, {}, "merge_skip");
  auto merged2 = b.node("Add", {merged, e1}, {}, "merge_enc_1");
  auto d1 = conv(b, "conv_dec_1", merged2, 32, 32, 3, 1, true);
  auto residual = conv(b, "conv_out_0", d1, 32, 3, 3, 1, false);
  auto y = b.node("Sub", {x, residual}, {}, "output_image");
  b.output(y, image);
  return m;
}

}  // namespace tessera::samples
