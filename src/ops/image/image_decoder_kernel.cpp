// Reference kernel of ImageDecoder (ai.onnx 20): decodes the bytes of an image file into a
// [height, width, channels] uint8 tensor in RGB, BGR or Grayscale (one channel). PNG and JPEG go
// through io::decode_image (libpng, libjpeg); uncompressed BMP (24/32-bit), binary PNM (P5, P6) and
// uncompressed 8-bit TIFF are simple enough to read here. JPEG 2000, WebP and compressed TIFF need
// libraries the build does not link, and are refused with an error naming the format, as are corrupt or
// truncated files.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <span>
#include <string_view>

#include "io/image.h"
#include "runtime/kernel.h"

namespace {

namespace rt = tessera::rt;
namespace io = tessera::io;

// 8-bit RGB pixels, row by row.
struct Rgb8 {
  int64_t height = 0, width = 0;
  std::vector<uint8_t> rgb;
};

void check_dims(int64_t h, int64_t w, std::string_view what) {
  if (h <= 0 || w <= 0 || h > io::kMaxImageSide || w > io::kMaxImageSide || h * w > io::kMaxImagePixels)
    throw rt::KernelError(fmt::format("{} image has an unsupported size {}x{}", what, h, w));
}

uint32_t le(std::span<const uint8_t> b, size_t at, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[at + static_cast<size_t>(i)];
  return v;
}

// Windows bitmap: BITMAPINFOHEADER or later, uncompressed (BI_RGB) 24 or 32 bits per pixel, rows
// bottom-up (positive height) or top-down (negative), each padded to 4 bytes; pixels are B, G, R(, X).
Rgb8 decode_bmp(std::span<const uint8_t> b) {
  if (b.size() < 54) throw rt::KernelError("BMP data is truncated (no complete header)");
  const uint32_t offset = le(b, 10, 4), header = le(b, 14, 4);
  const int32_t width = static_cast<int32_t>(le(b, 18, 4)), height = static_cast<int32_t>(le(b, 22, 4));
  const uint32_t bpp = le(b, 28, 2), compression = le(b, 30, 4);
  if (header < 40) throw rt::KernelError("BMP with an OS/2 core header is not supported");
  if (compression != 0 || (bpp != 24 && bpp != 32))
    throw rt::KernelError(fmt::format(
        "BMP with {} bits per pixel and compression {} is not supported (only uncompressed 24/32-bit)", bpp,
        compression));
  const bool top_down = height < 0;
  Rgb8 img;
  img.width = width;
  img.height = top_down ? -static_cast<int64_t>(height) : height;
  check_dims(img.height, img.width, "BMP");
  const int64_t bytes_pp = bpp / 8;
  const int64_t stride = (img.width * bytes_pp + 3) / 4 * 4;
  if (static_cast<int64_t>(offset) + stride * (img.height - 1) + img.width * bytes_pp >
      static_cast<int64_t>(b.size()))
    throw rt::KernelError("BMP pixel data is truncated");
  img.rgb.resize(static_cast<size_t>(img.height * img.width * 3));
  for (int64_t y = 0; y < img.height; ++y) {
    const int64_t src_row = top_down ? y : img.height - 1 - y;
    const uint8_t* row = b.data() + offset + src_row * stride;
    for (int64_t x = 0; x < img.width; ++x) {
      uint8_t* px = &img.rgb[static_cast<size_t>((y * img.width + x) * 3)];
      px[0] = row[x * bytes_pp + 2];
      px[1] = row[x * bytes_pp + 1];
      px[2] = row[x * bytes_pp];
    }
  }
  return img;
}

// Binary netpbm: P5 (gray) or P6 (RGB), maxval up to 65535 (16-bit samples big-endian), scaled to 8 bits.
Rgb8 decode_pnm(std::span<const uint8_t> b) {
  const bool color = b[1] == '6';
  size_t pos = 2;
  auto number = [&]() -> int64_t {
    while (pos < b.size() && (std::isspace(b[pos]) || b[pos] == '#')) {
      if (b[pos] == '#') {
        while (pos < b.size() && b[pos] != '\n') ++pos;
      } else {
        ++pos;
      }
    }
    int64_t v = 0;
    size_t digits = 0;
    for (; pos < b.size() && std::isdigit(b[pos]) && digits < 9; ++pos, ++digits) v = v * 10 + (b[pos] - '0');
    if (digits == 0) throw rt::KernelError("PNM header is malformed");
    return v;
  };
  Rgb8 img;
  img.width = number();
  img.height = number();
  const int64_t maxval = number();
  if (pos >= b.size() || !std::isspace(b[pos])) throw rt::KernelError("PNM header is malformed");
  ++pos;  // the single whitespace before the samples
  check_dims(img.height, img.width, "PNM");
  if (maxval <= 0 || maxval > 65535) throw rt::KernelError(fmt::format("PNM maxval {} is invalid", maxval));
  const int64_t channels = color ? 3 : 1, sample_bytes = maxval > 255 ? 2 : 1;
  const int64_t n = img.height * img.width * channels;
  if (static_cast<int64_t>(b.size() - pos) < n * sample_bytes)
    throw rt::KernelError("PNM pixel data is truncated");
  img.rgb.resize(static_cast<size_t>(img.height * img.width * 3));
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* s = b.data() + pos + i * sample_bytes;
    const int64_t v = sample_bytes == 2 ? (s[0] << 8 | s[1]) : s[0];
    const auto v8 =
        static_cast<uint8_t>(maxval == 255 ? v : (std::min(v, maxval) * 255 + maxval / 2) / maxval);
    if (color) {
      img.rgb[static_cast<size_t>(i)] = v8;
    } else {
      for (int c = 0; c < 3; ++c) img.rgb[static_cast<size_t>(i * 3 + c)] = v8;
    }
  }
  return img;
}

// Baseline TIFF, the simple case only: uncompressed, 8-bit samples, chunky (interleaved) gray, RGB or
// RGBA (alpha dropped) in strips; the first image of the file.
Rgb8 decode_tiff(std::span<const uint8_t> b) {
  const bool little = b[0] == 'I';
  auto rd = [&](size_t at, int n) -> uint32_t {
    if (at + static_cast<size_t>(n) > b.size()) throw rt::KernelError("TIFF data is truncated");
    uint32_t v = 0;
    for (int i = 0; i < n; ++i)
      v = little ? v | (static_cast<uint32_t>(b[at + i]) << (8 * i)) : (v << 8) | b[at + i];
    return v;
  };
  const uint32_t ifd = rd(4, 4);
  const uint32_t entries = rd(ifd, 2);
  // Values of one tag (SHORT or LONG), read inline or from their offset.
  auto values = [&](uint32_t want) -> std::vector<uint32_t> {
    for (uint32_t e = 0; e < entries; ++e) {
      const size_t at = ifd + 2 + 12 * static_cast<size_t>(e);
      if (rd(at, 2) != want) continue;
      const uint32_t type = rd(at + 2, 2), count = rd(at + 4, 4);
      const int size = type == 3 ? 2 : type == 4 ? 4 : 0;
      if (size == 0 || count == 0 || count > (1u << 24))
        throw rt::KernelError(fmt::format("TIFF tag {} is malformed", want));
      const size_t base =
          static_cast<size_t>(count) * static_cast<size_t>(size) <= 4 ? at + 8 : rd(at + 8, 4);
      std::vector<uint32_t> v(count);
      for (uint32_t i = 0; i < count; ++i)
        v[i] = rd(base + static_cast<size_t>(i) * static_cast<size_t>(size), size);
      return v;
    }
    return {};
  };
  auto one = [&](uint32_t tag, uint32_t fallback) {
    std::vector<uint32_t> v = values(tag);
    return v.empty() ? fallback : v[0];
  };
  Rgb8 img;
  img.width = one(256, 0);
  img.height = one(257, 0);
  check_dims(img.height, img.width, "TIFF");
  const uint32_t spp = one(277, 1), photometric = one(262, 1);
  std::vector<uint32_t> bits = values(258);
  const bool eight =
      std::all_of(bits.begin(), bits.end(), [](uint32_t x) { return x == 8; }) && !bits.empty();
  if (one(259, 1) != 1 || one(284, 1) != 1 || !eight || (spp != 1 && spp != 3 && spp != 4) ||
      (spp == 1 && photometric > 1) || (spp > 1 && photometric != 2))
    throw rt::KernelError("TIFF other than uncompressed, interleaved 8-bit gray/RGB/RGBA is not supported");
  std::vector<uint32_t> offsets = values(273), counts = values(279);
  if (offsets.empty() || offsets.size() != counts.size()) throw rt::KernelError("TIFF strips are malformed");
  std::vector<uint8_t> data;
  const size_t need = static_cast<size_t>(img.height * img.width) * spp;
  for (size_t i = 0; i < offsets.size() && data.size() < need; ++i) {
    if (static_cast<size_t>(offsets[i]) + counts[i] > b.size())
      throw rt::KernelError("TIFF strip is truncated");
    data.insert(data.end(), b.begin() + offsets[i], b.begin() + offsets[i] + counts[i]);
  }
  if (data.size() < need) throw rt::KernelError("TIFF pixel data is truncated");
  img.rgb.resize(static_cast<size_t>(img.height * img.width * 3));
  for (int64_t p = 0; p < img.height * img.width; ++p) {
    for (int c = 0; c < 3; ++c) {
      uint8_t v = data[static_cast<size_t>(p) * spp + (spp == 1 ? 0 : c)];
      if (spp == 1 && photometric == 0) v = static_cast<uint8_t>(255 - v);  // WhiteIsZero
      img.rgb[static_cast<size_t>(p * 3 + c)] = v;
    }
  }
  return img;
}

Rgb8 decode_with_io(std::span<const uint8_t> b) {
  io::ImageOptions opts;
  opts.scale = 1.0f;  // keep the 0-255 scale
  opts.nhwc = true;
  opts.channels = 3;
  io::ImageTensor t;
  try {
    t = io::decode_image(std::as_bytes(b), opts);
  } catch (const io::ImageError& e) {
    throw rt::KernelError(fmt::format("cannot decode encoded_stream: {}", e.what()));
  }
  Rgb8 img;
  img.height = t.dims[1];
  img.width = t.dims[2];
  img.rgb.resize(t.data.size());
  for (size_t i = 0; i < t.data.size(); ++i) {
    const float v = std::nearbyint(t.data[i]);
    img.rgb[i] = static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
  }
  return img;
}

Rgb8 decode(std::span<const uint8_t> b) {
  if (b.size() >= 2 && b[0] == 'B' && b[1] == 'M') return decode_bmp(b);
  if (b.size() >= 3 && b[0] == 'P' && (b[1] == '5' || b[1] == '6') && std::isspace(b[2]))
    return decode_pnm(b);
  if (b.size() >= 8 && ((b[0] == 'I' && b[1] == 'I' && b[2] == 42 && b[3] == 0) ||
                        (b[0] == 'M' && b[1] == 'M' && b[2] == 0 && b[3] == 42)))
    return decode_tiff(b);
  return decode_with_io(b);
}

class ImageDecoder : public rt::OpKernel {
 public:
  explicit ImageDecoder(const rt::KernelInfo& info) : format_(info.get_string("pixel_format", "RGB")) {
    if (format_ != "RGB" && format_ != "BGR" && format_ != "Grayscale")
      throw rt::KernelError(fmt::format("pixel_format '{}' is not one of RGB, BGR, Grayscale", format_));
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& in = ctx.input(0);
    if (in.dtype() != rt::DataType::kUint8 || in.rank() != 1)
      ctx.fail(fmt::format("encoded_stream must be a 1-D uint8 tensor, got {} {}",
                           tessera::ir::dtype_name(in.dtype()), rt::shape_str(in.shape())));
    const Rgb8 img = decode({in.data<uint8_t>(), static_cast<size_t>(in.numel())});
    const bool gray = format_ == "Grayscale", bgr = format_ == "BGR";
    rt::Tensor& out = ctx.output(0, rt::DataType::kUint8, {img.height, img.width, gray ? 1 : 3});
    uint8_t* p = out.data<uint8_t>();
    for (int64_t i = 0; i < img.height * img.width; ++i) {
      const uint8_t* px = &img.rgb[static_cast<size_t>(i * 3)];
      if (gray) {
        // PIL's integer luma (ITU-R 601-2) on the RGB pixels, as the spec's reference converts; libjpeg's
        // own grayscale output (the Y plane) differs by a few levels.
        p[i] = static_cast<uint8_t>((px[0] * 19595u + px[1] * 38470u + px[2] * 7471u + 0x8000u) >> 16);
      } else {
        for (int c = 0; c < 3; ++c) p[i * 3 + c] = px[bgr ? 2 - c : c];
      }
    }
  }

 private:
  std::string format_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(image_image_decoder) {
  reg.add(tessera::rt::KernelDef::of<ImageDecoder>("ImageDecoder"));
}
