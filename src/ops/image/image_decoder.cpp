// ImageDecoder: decodes an encoded image (JPEG, PNG, BMP...) into an interleaved uint8 tensor.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Dim;

namespace {

// [height, width, channels]: the size is in the data; the channels follow 'pixel_format'.
void infer_image_decoder(InferenceContext& ctx) {
  std::string format = ctx.attr_string("pixel_format", "RGB");
  int64_t channels = 0;
  if (format == "RGB" || format == "BGR") channels = 3;
  if (format == "Grayscale") channels = 1;
  if (channels == 0) {
    ctx.fail(fmt::format("attribute 'pixel_format' is '{}'; it must be RGB, BGR or Grayscale", format));
  }
  require_rank(ctx, 0, 1, "encoded_stream (the file's bytes)");
  set_output(ctx, 0, DataType::kUint8, tessera::ir::Shape{Dim::unknown(), Dim::unknown(), Dim::of(channels)});
}

}  // namespace

TESSERA_REGISTER_OPS(image_image_decoder) {
  reg.add(OpSchema("ImageDecoder", 20)
              .category(Category::kImage)
              .doc("Decodes the bytes of an image file (BMP, JPEG, JPEG 2000, PNG, TIFF, WebP, PNM) into a "
                   "[height, width, channels] uint8 tensor in RGB, BGR or grayscale.")
              .input("encoded_stream", "T1")
              .output("image", "T2")
              .attr("pixel_format", "RGB")
              .types("T1", types::tensors({"uint8"}))
              .types("T2", types::tensors({"uint8"}))
              .infer(infer_image_decoder));
}
