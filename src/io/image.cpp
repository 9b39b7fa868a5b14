#include "io/image.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <png.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csetjmp>
#include <cstring>
#include <new>
#include <string>
#include <tuple>

#include "util/unique_fd.h"

// jpeglib.h uses FILE and size_t without including their headers, so <cstdio> must come first.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

namespace tessera::io {
namespace {

// A photo is a few MiB; a file this large is a mistake, and reading it whole would only exhaust memory.
constexpr int64_t kMaxFileBytes = int64_t{1} << 30;
// Each progressive JPEG scan makes libjpeg pass over the whole image again; real encoders write about
// ten. A file with thousands of tiny scans is a known way to make a small file take minutes to decode.
constexpr int kMaxJpegScans = 1000;

// A decoder's output: interleaved samples, row by row, 8 or 16 bits (16-bit big-endian, as PNG has them).
struct Decoded {
  int64_t height = 0, width = 0;
  int channels = 0;  // 1 or 3
  int depth = 8;
  std::vector<unsigned char> samples;
};

void check_size(int64_t height, int64_t width, std::string_view what) {
  if (height > kMaxImageSide || width > kMaxImageSide) {
    throw ImageError(
        fmt::format("{} is {}x{} pixels: more than {} on a side", what, height, width, kMaxImageSide));
  }
  if (height * width > kMaxImagePixels) {
    throw ImageError(fmt::format("{} is {}x{} pixels: more than 2^28 pixels", what, height, width));
  }
}

// --- PNG ---------------------------------------------------------------------------------------------
// libpng reports errors through an error function that must not return. It keeps the message and
// longjmps back to the setjmp of the step running (header or pixels). Those steps create no C++
// objects and change state only through the PngReader, owned by their caller, so the jump skips no
// destructor and clobbers nothing that is read afterwards.
struct PngReader {
  png_structp png = nullptr;
  png_infop info = nullptr;
  std::span<const std::byte> bytes;
  size_t pos = 0;
  std::array<char, 256> message{};
  std::vector<unsigned char> pixels;
  std::vector<png_bytep> rows;

  PngReader() = default;
  PngReader(const PngReader&) = delete;
  PngReader& operator=(const PngReader&) = delete;
  ~PngReader() { png_destroy_read_struct(&png, &info, nullptr); }
};

void png_fail(png_structp png, png_const_charp msg) {
  auto* r = static_cast<PngReader*>(png_get_error_ptr(png));
  std::snprintf(r->message.data(), r->message.size(), "%s", msg);
  png_longjmp(png, 1);
}

// Warnings (a damaged ancillary chunk such as a text comment) leave the pixels intact: go on quietly.
void png_warn(png_structp, png_const_charp) {}

void png_read_bytes(png_structp png, png_bytep out, size_t n) {
  auto* r = static_cast<PngReader*>(png_get_io_ptr(png));
  if (n > r->bytes.size() - r->pos) png_error(png, "unexpected end of file (truncated PNG)");
  std::memcpy(out, r->bytes.data() + r->pos, n);
  r->pos += n;
}

// Reads the chunks before the pixels and asks for 1 or 3 channels of 8 or 16 bits.
bool png_read_header(PngReader& r) {
  if (setjmp(png_jmpbuf(r.png))) return false;
  png_set_read_fn(r.png, &r, png_read_bytes);
  // Caps what one ancillary chunk (text, ICC profile) may inflate to: a compression bomb there is cheap.
  png_set_chunk_malloc_max(r.png, 8u << 20);
  png_read_info(r.png, r.info);
  if (png_get_color_type(r.png, r.info) == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(r.png);
  png_set_expand_gray_1_2_4_to_8(r.png);
  // Also drops the alpha that a tRNS chunk would add; alpha is ignored, not composited (as PIL's "RGB").
  png_set_strip_alpha(r.png);
  png_set_interlace_handling(r.png);
  png_read_update_info(r.png, r.info);
  return true;
}

bool png_read_pixels(PngReader& r) {
  if (setjmp(png_jmpbuf(r.png))) return false;
  png_read_image(r.png, r.rows.data());
  png_read_end(r.png, nullptr);  // checks the rest of the file too: a missing end is a truncated file
  return true;
}

Decoded decode_png(std::span<const std::byte> bytes) {
  PngReader r;
  r.bytes = bytes;
  r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &r, png_fail, png_warn);
  if (r.png) r.info = png_create_info_struct(r.png);
  if (!r.info) throw ImageError("out of memory starting libpng");
  if (!png_read_header(r)) throw ImageError(fmt::format("bad PNG data: {}", r.message.data()));

  Decoded d;
  d.height = png_get_image_height(r.png, r.info);
  d.width = png_get_image_width(r.png, r.info);
  check_size(d.height, d.width, "the image");
  d.channels = png_get_channels(r.png, r.info);
  d.depth = png_get_bit_depth(r.png, r.info);
  size_t row_bytes = png_get_rowbytes(r.png, r.info);
  if ((d.channels != 1 && d.channels != 3) || (d.depth != 8 && d.depth != 16) ||
      row_bytes != static_cast<size_t>(d.width * d.channels * d.depth / 8)) {
    throw ImageError(
        fmt::format("unexpected PNG layout after conversion ({} channels of {} bits)", d.channels, d.depth));
  }
  r.pixels.resize(row_bytes * static_cast<size_t>(d.height));
  r.rows.resize(static_cast<size_t>(d.height));
  for (size_t y = 0; y < r.rows.size(); ++y) r.rows[y] = r.pixels.data() + y * row_bytes;
  if (!png_read_pixels(r)) throw ImageError(fmt::format("bad PNG data: {}", r.message.data()));
  d.samples = std::move(r.pixels);
  return d;
}

// --- JPEG --------------------------------------------------------------------------------------------
// libjpeg's default error handler prints and calls exit(). Ours keeps the message and longjmps, with
// the same discipline as the PNG steps above.
struct JpegErrorManager {
  jpeg_error_mgr pub;  // first: libjpeg hands back &pub as cinfo->err
  std::jmp_buf jump;
  std::array<char, JMSG_LENGTH_MAX> message;
};

struct JpegReader {
  jpeg_decompress_struct cinfo{};
  JpegErrorManager err{};
  jpeg_progress_mgr progress{};
  bool created = false;
  size_t row_bytes = 0;
  std::vector<unsigned char> pixels;

  JpegReader() = default;
  JpegReader(const JpegReader&) = delete;
  JpegReader& operator=(const JpegReader&) = delete;
  ~JpegReader() {
    if (created) jpeg_destroy_decompress(&cinfo);  // safe on a half-created one: it checks cinfo.mem
  }
};

[[noreturn]] void jpeg_fail(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message.data());
  std::longjmp(err->jump, 1);
}

// Level -1 is a warning about damaged data, after which libjpeg goes on and paints what is missing grey
// (a truncated file decodes "fine"). A model fed that answers about a picture nobody took, so warnings
// are errors here. The one exception, junk bytes between markers, leaves the pixels as they are and
// is common in files from cameras and old editors.
void jpeg_warn(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code != JWRN_EXTRANEOUS_DATA) jpeg_fail(cinfo);
}

void jpeg_quiet(j_common_ptr) {}

void jpeg_progress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxJpegScans) {
    auto* err = reinterpret_cast<JpegErrorManager*>(cinfo->err);
    std::snprintf(err->message.data(), err->message.size(), "more than %d progressive scans", kMaxJpegScans);
    std::longjmp(err->jump, 1);
  }
}

bool jpeg_read_header_step(JpegReader& r, std::span<const std::byte> bytes) {
  if (setjmp(r.err.jump)) return false;
  r.created = true;
  jpeg_create_decompress(&r.cinfo);  // keeps cinfo.err, zeroes the rest
  r.cinfo.progress = &r.progress;
  jpeg_mem_src(&r.cinfo, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  jpeg_read_header(&r.cinfo, TRUE);
  return true;
}

bool jpeg_read_pixels_step(JpegReader& r) {
  if (setjmp(r.err.jump)) return false;
  jpeg_start_decompress(&r.cinfo);
  if (static_cast<size_t>(r.cinfo.output_width) * static_cast<size_t>(r.cinfo.output_components) !=
          r.row_bytes ||
      static_cast<size_t>(r.cinfo.output_height) * r.row_bytes != r.pixels.size()) {
    std::snprintf(r.err.message.data(), r.err.message.size(), "unexpected output size");
    return false;
  }
  while (r.cinfo.output_scanline < r.cinfo.output_height) {
    JSAMPROW row = r.pixels.data() + static_cast<size_t>(r.cinfo.output_scanline) * r.row_bytes;
    if (jpeg_read_scanlines(&r.cinfo, &row, 1) != 1) {
      std::snprintf(r.err.message.data(), r.err.message.size(), "decoder stalled");
      return false;
    }
  }
  jpeg_finish_decompress(&r.cinfo);  // reads to the end marker: a missing end is a truncated file
  return true;
}

Decoded decode_jpeg(std::span<const std::byte> bytes, int channels) {
  JpegReader r;
  r.cinfo.err = jpeg_std_error(&r.err.pub);
  r.err.pub.error_exit = jpeg_fail;
  r.err.pub.emit_message = jpeg_warn;
  r.err.pub.output_message = jpeg_quiet;
  r.progress.progress_monitor = jpeg_progress;
  if (!jpeg_read_header_step(r, bytes)) {
    throw ImageError(fmt::format("bad JPEG data: {}", r.err.message.data()));
  }

  Decoded d;
  d.height = r.cinfo.image_height;
  d.width = r.cinfo.image_width;
  check_size(d.height, d.width, "the image");
  switch (r.cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
      r.cinfo.out_color_space = JCS_GRAYSCALE;
      break;
    case JCS_YCbCr:
    case JCS_RGB:
      // For a grey input libjpeg keeps the luma plane as is, as torchvision's decoder does.
      r.cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
      break;
    default:
      throw ImageError("CMYK and YCCK JPEG files are not supported: convert the image to RGB");
  }
  d.channels = r.cinfo.out_color_space == JCS_GRAYSCALE ? 1 : 3;
  r.row_bytes = static_cast<size_t>(d.width) * static_cast<size_t>(d.channels);
  r.pixels.resize(r.row_bytes * static_cast<size_t>(d.height));
  if (!jpeg_read_pixels_step(r)) throw ImageError(fmt::format("bad JPEG data: {}", r.err.message.data()));
  d.samples = std::move(r.pixels);
  return d;
}

// --- format ------------------------------------------------------------------------------------------
bool starts_with(std::span<const std::byte> bytes, std::string_view magic, size_t at = 0) {
  return bytes.size() >= at + magic.size() && std::memcmp(bytes.data() + at, magic.data(), magic.size()) == 0;
}

// The formats people try most, named so that the message says what to convert from.
const char* unsupported_format(std::span<const std::byte> bytes) {
  using namespace std::string_view_literals;
  if (starts_with(bytes, "GIF8")) return "GIF";
  if (starts_with(bytes, "BM")) return "BMP";
  if (starts_with(bytes, "RIFF") && starts_with(bytes, "WEBP", 8)) return "WebP";
  if (starts_with(bytes, "II*\0"sv) || starts_with(bytes, "MM\0*"sv)) return "TIFF";
  return nullptr;
}

Decoded decode(std::span<const std::byte> bytes, int channels) {
  using namespace std::string_view_literals;
  if (starts_with(bytes, "\x89PNG\r\n\x1a\n"sv)) return decode_png(bytes);
  if (starts_with(bytes, "\xff\xd8\xff"sv)) return decode_jpeg(bytes, channels);
  if (bytes.empty()) throw ImageError("the file is empty");
  if (const char* known = unsupported_format(bytes)) {
    throw ImageError(fmt::format("{} images are not supported: only PNG and JPEG", known));
  }
  std::string head;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 4); ++i) {
    head += fmt::format("{}{:02x}", i ? " " : "", static_cast<unsigned>(bytes[i]));
  }
  throw ImageError(fmt::format("not a PNG or JPEG file (it starts with bytes {})", head));
}

// --- conversion --------------------------------------------------------------------------------------
// Samples -> `channels` float planes on the 0-255 scale, in output channel order.
std::vector<float> to_planes(const Decoded& d, int channels, bool bgr) {
  const size_t n = static_cast<size_t>(d.height * d.width);
  std::vector<float> planes(n * static_cast<size_t>(channels));
  const unsigned char* s = d.samples.data();
  auto sample = [&](size_t i) {
    if (d.depth == 8) return static_cast<float>(s[i]);
    return static_cast<float>((s[2 * i] << 8) | s[2 * i + 1]) / 257.0f;
  };
  for (size_t p = 0; p < n; ++p) {
    if (d.channels == 1) {
      float v = sample(p);
      for (int c = 0; c < channels; ++c) planes[static_cast<size_t>(c) * n + p] = v;
    } else {
      float rgb[3] = {sample(3 * p), sample(3 * p + 1), sample(3 * p + 2)};
      if (channels == 1) {
        planes[p] = 0.299f * rgb[0] + 0.587f * rgb[1] + 0.114f * rgb[2];
      } else {
        for (int c = 0; c < 3; ++c) planes[static_cast<size_t>(c) * n + p] = rgb[bgr ? 2 - c : c];
      }
    }
  }
  return planes;
}

// Where output index i reads from: PyTorch's upsample_bilinear2d with align_corners=False, in float as
// it computes: src = (i + 0.5) * in/out - 0.5, clamped at 0, between samples i0 and i1 (the edge repeats).
struct Taps {
  std::vector<size_t> i0, i1;
  std::vector<float> w1;  // weight of i1; i0 gets 1 - w1
};

Taps taps(int64_t in, int64_t out) {
  Taps t;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t i = 0; i < out; ++i) {
    float src = std::max(scale * (static_cast<float>(i) + 0.5f) - 0.5f, 0.0f);
    int64_t i0 = std::min(static_cast<int64_t>(src), in - 1);
    t.i0.push_back(static_cast<size_t>(i0));
    t.i1.push_back(static_cast<size_t>(std::min(i0 + 1, in - 1)));
    t.w1.push_back(std::clamp(src - static_cast<float>(i0), 0.0f, 1.0f));
  }
  return t;
}

std::vector<float> resize(const std::vector<float>& planes, int channels, int64_t in_h, int64_t in_w,
                          int64_t out_h, int64_t out_w) {
  const Taps ty = taps(in_h, out_h), tx = taps(in_w, out_w);
  const size_t in_n = static_cast<size_t>(in_h * in_w), out_n = static_cast<size_t>(out_h * out_w);
  std::vector<float> out(out_n * static_cast<size_t>(channels));
  for (int c = 0; c < channels; ++c) {
    const float* src = planes.data() + static_cast<size_t>(c) * in_n;
    float* dst = out.data() + static_cast<size_t>(c) * out_n;
    for (size_t y = 0; y < static_cast<size_t>(out_h); ++y) {
      const float* r0 = src + ty.i0[y] * static_cast<size_t>(in_w);
      const float* r1 = src + ty.i1[y] * static_cast<size_t>(in_w);
      const float h1 = ty.w1[y], h0 = 1.0f - h1;
      for (size_t x = 0; x < static_cast<size_t>(out_w); ++x) {
        const float w1 = tx.w1[x], w0 = 1.0f - w1;
        dst[y * static_cast<size_t>(out_w) + x] =
            h0 * (w0 * r0[tx.i0[x]] + w1 * r0[tx.i1[x]]) + h1 * (w0 * r1[tx.i0[x]] + w1 * r1[tx.i1[x]]);
      }
    }
  }
  return out;
}

void check_per_channel(const std::vector<float>& v, std::string_view name, int channels, bool divisor) {
  if (!v.empty() && v.size() != 1 && v.size() != static_cast<size_t>(channels)) {
    throw ImageError(fmt::format("{} has {} values; expected {}", name, v.size(),
                                 channels == 1 ? "1 (one channel)" : "1 or 3 (one per channel)"));
  }
  for (float x : v) {
    if (!std::isfinite(x)) throw ImageError(fmt::format("{} holds a value that is not finite", name));
    if (divisor && x == 0.0f) throw ImageError(fmt::format("{} holds a zero", name));
  }
}

void check_options(const ImageOptions& o) {
  if (o.channels != 1 && o.channels != 3) {
    throw ImageError(fmt::format("{} channels asked for; expected 1 (grayscale) or 3 (RGB)", o.channels));
  }
  if (o.height < 0 || o.width < 0) {
    throw ImageError(fmt::format("invalid requested size {}x{}", o.height, o.width));
  }
  check_size(o.height, o.width, "the requested size");
  if (!std::isfinite(o.scale)) throw ImageError("the pixel scale is not finite");
  check_per_channel(o.mean, "mean", o.channels, false);
  check_per_channel(o.std, "std", o.channels, true);
}

float per_channel(const std::vector<float>& v, int c, float fallback) {
  if (v.empty()) return fallback;
  return v.size() == 1 ? v[0] : v[static_cast<size_t>(c)];
}

std::vector<std::byte> read_file(const std::filesystem::path& file) {
  util::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw ImageError(fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) throw ImageError("not a regular file");
  if (st.st_size > kMaxFileBytes) {
    throw ImageError(fmt::format("the file is {} bytes: over 1 GiB", st.st_size));
  }
  std::vector<std::byte> bytes(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw ImageError(fmt::format("cannot read: {}", std::strerror(errno)));
    if (n == 0) break;  // shrank meanwhile: what is there is decoded, and found truncated
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

ImageTensor decode_image(std::span<const std::byte> bytes, const ImageOptions& opts) {
  check_options(opts);
  const Decoded d = decode(bytes, opts.channels);
  const int64_t out_h = opts.height ? opts.height : d.height;
  const int64_t out_w = opts.width ? opts.width : d.width;
  check_size(out_h, out_w, "the requested size");
  const int channels = opts.channels;

  std::vector<float> planes = to_planes(d, channels, opts.bgr);
  if (out_h != d.height || out_w != d.width) {
    planes = resize(planes, channels, d.height, d.width, out_h, out_w);
  }

  ImageTensor t;
  const size_t n = static_cast<size_t>(out_h * out_w);
  t.dims = opts.nhwc ? std::vector<int64_t>{1, out_h, out_w, channels}
                     : std::vector<int64_t>{1, channels, out_h, out_w};
  t.data.resize(n * static_cast<size_t>(channels));
  for (int c = 0; c < channels; ++c) {
    const float mean = per_channel(opts.mean, c, 0.0f), sd = per_channel(opts.std, c, 1.0f);
    const float* src = planes.data() + static_cast<size_t>(c) * n;
    for (size_t p = 0; p < n; ++p) {
      // Divided by std, as torchvision's Normalize does, rather than multiplied by its inverse.
      float v = (src[p] * opts.scale - mean) / sd;
      t.data[opts.nhwc ? p * static_cast<size_t>(channels) + static_cast<size_t>(c)
                       : static_cast<size_t>(c) * n + p] = v;
    }
  }
  return t;
}

ImageTensor load_image(const std::filesystem::path& file, const ImageOptions& opts) {
  try {
    check_options(opts);  // before reading: a bad option is reported even for a bad file
    return decode_image(read_file(file), opts);
  } catch (const ImageError& e) {
    throw ImageError(fmt::format("cannot load image '{}': {}", file.string(), e.what()));
  } catch (const std::bad_alloc&) {
    throw ImageError(fmt::format("cannot load image '{}': out of memory", file.string()));
  }
}

std::pair<int64_t, int64_t> parse_image_size(std::string_view text) {
  auto side = [&](std::string_view part) {
    part = trim(part);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc{} || end != part.data() + part.size() || v < 1 || v > kMaxImageSide) {
      throw ImageError(
          fmt::format("invalid image size '{}': expected N or HxW, sides from 1 to {}", text, kMaxImageSide));
    }
    return v;
  };
  const size_t x = text.find_first_of("xX");
  const int64_t h = side(text.substr(0, x));
  const int64_t w = x == std::string_view::npos ? h : side(text.substr(x + 1));
  if (h * w > kMaxImagePixels) {
    throw ImageError(fmt::format("invalid image size '{}': more than 2^28 pixels", text));
  }
  return {h, w};
}

std::vector<float> parse_float_list(std::string_view text) {
  std::vector<float> values;
  std::string_view rest = text;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    float v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || !std::isfinite(v)) {
      throw ImageError(
          fmt::format("invalid number '{}' in '{}': expected numbers separated by commas", item, text));
    }
    values.push_back(v);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return values;
}

ImageOptions parse_image_options(std::string_view size, std::string_view mean, std::string_view std_dev,
                                 std::string_view layout) {
  ImageOptions o;
  if (!size.empty()) std::tie(o.height, o.width) = parse_image_size(size);
  if (!mean.empty()) o.mean = parse_float_list(mean);
  if (!std_dev.empty()) o.std = parse_float_list(std_dev);
  std::string upper;
  for (char ch : trim(layout)) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (upper == "NHWC") {
    o.nhwc = true;
  } else if (!upper.empty() && upper != "NCHW") {
    throw ImageError(fmt::format("invalid --image-layout '{}': expected NCHW or NHWC", layout));
  }
  check_per_channel(o.mean, "mean", o.channels, false);
  check_per_channel(o.std, "std", o.channels, true);
  return o;
}

}  // namespace tessera::io
