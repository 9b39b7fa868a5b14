// Image files -> float tensors: the image inputs of `tessera run` (--input NAME=photo.jpg). PNG (libpng)
// and JPEG (libjpeg), told apart by their magic bytes, never by the extension. The preprocessing is the
// usual one for vision models, spelled out so results can be reproduced elsewhere:
//   decode -> channels (1 or 3; alpha dropped, not composited) -> bilinear resize in float (half-pixel
//   centres, PyTorch's align_corners=False, no antialias, no rounding back to 8 bits) ->
//   (pixel * scale - mean[c]) / std[c] -> [1,C,H,W] or [1,H,W,C].
// Pixels are on the 0-255 scale whatever the bit depth: a 16-bit PNG sample v counts as v/257, so one
// `scale` suits both depths. No gamma or colour-profile conversion, as in PIL and torchvision.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::io {

class ImageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Sides over this, or images with more pixels than kMaxImagePixels (a file's or a requested size), are
// refused before anything is allocated: an absurd size is a hostile or broken file, not a photo.
constexpr int64_t kMaxImageSide = 32768;
constexpr int64_t kMaxImagePixels = int64_t{1} << 28;

struct ImageOptions {
  int64_t height = 0, width = 0;  // 0 = keep the file's size (per side)
  std::vector<float> mean, std;   // per output channel (BGR order when bgr); one value = all; empty = 0, 1
  bool nhwc = false;              // [1,H,W,C] instead of [1,C,H,W]
  bool bgr = false;               // channel order B,G,R (Caffe-era models)
  float scale = 1.0f / 255.0f;    // applied before mean/std
  int channels = 3;               // 1 = grayscale (luma 0.299R + 0.587G + 0.114B), 3 = RGB
};

struct ImageTensor {
  std::vector<int64_t> dims;  // [1,C,H,W] or [1,H,W,C]
  std::vector<float> data;
};

// Throws ImageError naming the file and what is wrong: unreadable, unknown format, corrupt or truncated
// data (a JPEG missing its end is refused, not padded with grey as libjpeg would), too large, options
// that do not fit (mean/std length, a zero std).
ImageTensor load_image(const std::filesystem::path& file, const ImageOptions& opts);
// The same over bytes in memory; messages do not name a file.
ImageTensor decode_image(std::span<const std::byte> bytes, const ImageOptions& opts);

// Command-line helpers; an ImageError's message quotes the offending text.
// "224" (square) or "HxW" ("224x160": height 224, width 160); each side 1-kMaxImageSide.
std::pair<int64_t, int64_t> parse_image_size(std::string_view text);
// "0.485,0.456,0.406": finite numbers separated by commas, spaces around them allowed.
std::vector<float> parse_float_list(std::string_view text);
// The flags --image-size, --mean, --std, --image-layout (NCHW or NHWC) as given; an empty string = not given.
ImageOptions parse_image_options(std::string_view size, std::string_view mean, std::string_view std_dev,
                                 std::string_view layout);

}  // namespace tessera::io
