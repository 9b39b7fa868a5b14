// Image inputs: PNG and JPEG decoding, resizing, normalization and layout, and the refusal of broken
// files. The images are written here with libpng and libjpeg, and the expected values worked out by
// hand (no torch to compare with): exact for PNG, within a few units for JPEG (lossy even at quality 100).
#include "io/image.h"

#include <gtest/gtest.h>
#include <png.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

// jpeglib.h needs <cstdio> first.
// clang-format off
#include <jpeglib.h>
// clang-format on

namespace tessera::io {
namespace {

namespace fs = std::filesystem;

// A w x h image, `channels` interleaved samples per pixel, one byte each (two, big-endian, at 16 bits).
struct Raw {
  int width = 0, height = 0, channels = 0;
  std::vector<unsigned char> bytes;
};

// Samples of the test gradient: every channel of every pixel different, none clipped.
int gradient(int x, int y, int c) {
  return (40 * x + 25 * y + 70 * c) % 256;
}

Raw gradient_image(int w, int h, int channels) {
  Raw r{w, h, channels, {}};
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < channels; ++c) r.bytes.push_back(static_cast<unsigned char>(gradient(x, y, c)));
    }
  }
  return r;
}

// Noise does not compress, so a cut file is cut inside the pixel data.
Raw noise_image(int w, int h) {
  Raw r{w, h, 3, std::vector<unsigned char>(static_cast<size_t>(w * h * 3))};
  std::mt19937 rng(7);
  for (auto& b : r.bytes) b = static_cast<unsigned char>(rng());
  return r;
}

struct PngSpec {
  int color_type = PNG_COLOR_TYPE_RGB;
  int depth = 8;
  bool interlaced = false;
  std::vector<png_color> palette;
  std::vector<unsigned char> palette_alpha;  // a tRNS chunk
};

// `rows` already packed as PNG stores them (bit depths below 8 packed, 16 bits big-endian).
void write_png(const fs::path& file, int w, int h, const std::vector<unsigned char>& packed,
               const PngSpec& s) {
  FILE* f = std::fopen(file.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_init_io(png, f);
  png_set_IHDR(png, info, static_cast<png_uint_32>(w), static_cast<png_uint_32>(h), s.depth, s.color_type,
               s.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (!s.palette.empty()) png_set_PLTE(png, info, s.palette.data(), static_cast<int>(s.palette.size()));
  if (!s.palette_alpha.empty()) {
    png_set_tRNS(png, info, s.palette_alpha.data(), static_cast<int>(s.palette_alpha.size()), nullptr);
  }
  png_write_info(png, info);
  const size_t row_bytes = png_get_rowbytes(png, info);
  std::vector<png_bytep> rows;
  for (int y = 0; y < h; ++y) rows.push_back(const_cast<png_bytep>(packed.data()) + y * row_bytes);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  std::fclose(f);
}

void write_png(const fs::path& file, const Raw& r, int color_type, int depth = 8) {
  write_png(file, r.width, r.height, r.bytes, PngSpec{color_type, depth, false, {}, {}});
}

void write_jpeg(const fs::path& file, const Raw& r, int quality, bool progressive = false) {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr err{};
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &out, &size);
  cinfo.image_width = static_cast<JDIMENSION>(r.width);
  cinfo.image_height = static_cast<JDIMENSION>(r.height);
  cinfo.input_components = r.channels;
  cinfo.in_color_space = r.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  for (int c = 0; c < cinfo.num_components; ++c) {  // 4:4:4, no chroma subsampling
    cinfo.comp_info[c].h_samp_factor = 1;
    cinfo.comp_info[c].v_samp_factor = 1;
  }
  if (progressive) jpeg_simple_progression(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<unsigned char*>(r.bytes.data()) +
                   static_cast<size_t>(cinfo.next_scanline) * static_cast<size_t>(r.width * r.channels);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(out), static_cast<std::streamsize>(size));
  std::free(out);
}

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

ImageOptions raw_pixels() {  // values as stored, 0-255
  ImageOptions o;
  o.scale = 1.0f;
  return o;
}

// t[c][y][x] of an NCHW tensor.
float at(const ImageTensor& t, int64_t c, int64_t y, int64_t x) {
  return t.data[static_cast<size_t>((c * t.dims[2] + y) * t.dims[3] + x)];
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ImageError& e) {
    return e.what();
  }
  return "no error";
}

class ImageFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera-image-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path file(const std::string& name) const { return dir_ / name; }

  fs::path dir_;
};

void expect_gradient(const ImageTensor& t, int w, int h) {
  ASSERT_EQ(t.dims, (std::vector<int64_t>{1, 3, h, w}));
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) ASSERT_EQ(at(t, c, y, x), gradient(x, y, c)) << c << "," << y << "," << x;
    }
  }
}

TEST_F(ImageFiles, PngRgbAndRgbaExact) {
  write_png(file("rgb.png"), gradient_image(5, 3, 3), PNG_COLOR_TYPE_RGB);
  expect_gradient(load_image(file("rgb.png"), raw_pixels()), 5, 3);

  // Alpha is dropped, not composited: the colour samples come through unchanged whatever the alpha.
  write_png(file("rgba.png"), gradient_image(5, 3, 4), PNG_COLOR_TYPE_RGB_ALPHA);
  expect_gradient(load_image(file("rgba.png"), raw_pixels()), 5, 3);

  // The default scale maps 0-255 to 0-1.
  ImageTensor t = load_image(file("rgb.png"), ImageOptions{});
  EXPECT_FLOAT_EQ(at(t, 2, 2, 4), static_cast<float>(gradient(4, 2, 2)) / 255.0f);
}

TEST_F(ImageFiles, PngGrayAndGrayAlpha) {
  write_png(file("gray.png"), gradient_image(4, 2, 1), PNG_COLOR_TYPE_GRAY);
  write_png(file("gray_alpha.png"), gradient_image(4, 2, 2), PNG_COLOR_TYPE_GRAY_ALPHA);
  for (const char* name : {"gray.png", "gray_alpha.png"}) {
    ImageOptions one = raw_pixels();
    one.channels = 1;
    ImageTensor g = load_image(file(name), one);
    ASSERT_EQ(g.dims, (std::vector<int64_t>{1, 1, 2, 4}));
    for (int y = 0; y < 2; ++y) {
      for (int x = 0; x < 4; ++x) EXPECT_EQ(at(g, 0, y, x), gradient(x, y, 0));
    }
    // Three channels from grey: the grey repeated.
    ImageTensor rgb = load_image(file(name), raw_pixels());
    ASSERT_EQ(rgb.dims, (std::vector<int64_t>{1, 3, 2, 4}));
    for (int c = 0; c < 3; ++c) EXPECT_EQ(at(rgb, c, 1, 3), gradient(3, 1, 0));
  }

  // 1-bit grey: samples 0 and 1 become 0 and 255.
  write_png(file("bits.png"), 8, 1, {0b10110000}, PngSpec{PNG_COLOR_TYPE_GRAY, 1, false, {}, {}});
  ImageOptions one = raw_pixels();
  one.channels = 1;
  EXPECT_EQ(load_image(file("bits.png"), one).data, (std::vector<float>{255, 0, 255, 255, 0, 0, 0, 0}));
}

TEST_F(ImageFiles, Png16BitKeepsItsPrecision) {
  // Samples 0, 257 * 100, 65535 and 1000: on the 0-255 scale 0, 100, 255 and 1000/257.
  const std::vector<uint16_t> samples = {0, 25700, 65535, 1000, 514, 65535};
  std::vector<unsigned char> be;
  for (uint16_t s : samples) {
    be.push_back(static_cast<unsigned char>(s >> 8));
    be.push_back(static_cast<unsigned char>(s & 0xff));
  }
  write_png(file("rgb16.png"), 2, 1, be, PngSpec{PNG_COLOR_TYPE_RGB, 16, false, {}, {}});
  ImageTensor t = load_image(file("rgb16.png"), raw_pixels());
  ASSERT_EQ(t.dims, (std::vector<int64_t>{1, 3, 1, 2}));
  EXPECT_EQ(at(t, 0, 0, 0), 0.0f);
  EXPECT_EQ(at(t, 1, 0, 0), 100.0f);
  EXPECT_EQ(at(t, 2, 0, 0), 255.0f);
  EXPECT_FLOAT_EQ(at(t, 0, 0, 1), 1000.0f / 257.0f);
  EXPECT_EQ(at(t, 1, 0, 1), 2.0f);
  // The default scale gives exactly 1 for the largest sample.
  EXPECT_FLOAT_EQ(load_image(file("rgb16.png"), ImageOptions{}).data[4], 1.0f);

  // 16-bit grey with alpha, alpha dropped.
  write_png(file("ga16.png"), 1, 1, {0x64, 0x64, 0x12, 0x34},
            PngSpec{PNG_COLOR_TYPE_GRAY_ALPHA, 16, false, {}, {}});
  EXPECT_EQ(load_image(file("ga16.png"), raw_pixels()).data, (std::vector<float>{100, 100, 100}));
}

TEST_F(ImageFiles, PngPaletteWithTransparency) {
  PngSpec s{
      PNG_COLOR_TYPE_PALETTE, 2, false, {{10, 20, 30}, {200, 100, 0}, {1, 2, 3}, {255, 255, 255}}, {0, 128}};
  // Indices 3 1 0 2 packed two bits each.
  write_png(file("palette.png"), 4, 1, {0b11010010}, s);
  ImageTensor t = load_image(file("palette.png"), raw_pixels());
  ASSERT_EQ(t.dims, (std::vector<int64_t>{1, 3, 1, 4}));
  EXPECT_EQ(t.data, (std::vector<float>{255, 200, 10, 1, 255, 100, 20, 2, 255, 0, 30, 3}));
}

TEST_F(ImageFiles, InterlacedPngEqualsPlain) {
  Raw r = gradient_image(9, 7, 3);
  write_png(file("adam7.png"), r.width, r.height, r.bytes, PngSpec{PNG_COLOR_TYPE_RGB, 8, true, {}, {}});
  expect_gradient(load_image(file("adam7.png"), raw_pixels()), 9, 7);
}

TEST_F(ImageFiles, JpegBaselineAndProgressive) {
  // A smooth image: JPEG at quality 100 without chroma subsampling keeps it within a few units.
  Raw r{16, 16, 3, {}};
  for (int y = 0; y < 16; ++y) {
    for (int x = 0; x < 16; ++x) {
      r.bytes.insert(r.bytes.end(),
                     {static_cast<unsigned char>(40 + 8 * x), static_cast<unsigned char>(30 + 10 * y),
                      static_cast<unsigned char>(200 - 4 * x - 4 * y)});
    }
  }
  write_jpeg(file("baseline.jpg"), r, 100);
  write_jpeg(file("progressive.jpg"), r, 100, true);
  for (const char* name : {"baseline.jpg", "progressive.jpg"}) {
    ImageTensor t = load_image(file(name), raw_pixels());
    ASSERT_EQ(t.dims, (std::vector<int64_t>{1, 3, 16, 16}));
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < 16; ++y) {
        for (int x = 0; x < 16; ++x) {
          ASSERT_NEAR(at(t, c, y, x), r.bytes[static_cast<size_t>((y * 16 + x) * 3 + c)], 3.0) << name;
        }
      }
    }
    // Asked for one channel: libjpeg's luma, 0.299 R + 0.587 G + 0.114 B.
    ImageOptions one = raw_pixels();
    one.channels = 1;
    ImageTensor g = load_image(file(name), one);
    ASSERT_EQ(g.dims, (std::vector<int64_t>{1, 1, 16, 16}));
    const unsigned char* p = &r.bytes[(5 * 16 + 7) * 3];
    EXPECT_NEAR(at(g, 0, 5, 7), 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2], 3.0) << name;
  }

  Raw gray{8, 8, 1, {}};
  for (int i = 0; i < 64; ++i) gray.bytes.push_back(static_cast<unsigned char>(60 + 2 * i));
  write_jpeg(file("gray.jpg"), gray, 100);
  ImageTensor t = load_image(file("gray.jpg"), raw_pixels());
  ASSERT_EQ(t.dims, (std::vector<int64_t>{1, 3, 8, 8}));
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(at(t, c, 3, 4), 60 + 2 * (3 * 8 + 4), 3.0);
}

TEST_F(ImageFiles, FormatComesFromTheBytesNotTheName) {
  write_png(file("really_png.jpg"), gradient_image(5, 3, 3), PNG_COLOR_TYPE_RGB);
  expect_gradient(load_image(file("really_png.jpg"), raw_pixels()), 5, 3);
  write_jpeg(file("really_jpeg.png"), gradient_image(8, 8, 3), 90);
  EXPECT_EQ(load_image(file("really_jpeg.png"), raw_pixels()).dims, (std::vector<int64_t>{1, 3, 8, 8}));
}

TEST_F(ImageFiles, LayoutAndChannelOrder) {
  write_png(file("rgb.png"), gradient_image(5, 3, 3), PNG_COLOR_TYPE_RGB);
  ImageTensor nchw = load_image(file("rgb.png"), raw_pixels());
  ImageOptions o = raw_pixels();
  o.nhwc = true;
  ImageTensor nhwc = load_image(file("rgb.png"), o);
  ASSERT_EQ(nhwc.dims, (std::vector<int64_t>{1, 3, 5, 3}));
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 5; ++x) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(nhwc.data[static_cast<size_t>((y * 5 + x) * 3 + c)], at(nchw, c, y, x));
      }
    }
  }
  // NHWC is the file's own order: the samples as written.
  Raw r = gradient_image(5, 3, 3);
  EXPECT_EQ(nhwc.data, std::vector<float>(r.bytes.begin(), r.bytes.end()));

  o = raw_pixels();
  o.bgr = true;
  ImageTensor bgr = load_image(file("rgb.png"), o);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(at(bgr, c, 1, 2), gradient(2, 1, 2 - c));
}

TEST_F(ImageFiles, MeanAndStd) {
  write_png(file("rgb.png"), gradient_image(5, 3, 3), PNG_COLOR_TYPE_RGB);
  ImageOptions o;
  o.mean = {0.485f, 0.456f, 0.406f};
  o.std = {0.229f, 0.224f, 0.225f};
  ImageTensor t = load_image(file("rgb.png"), o);
  for (int c = 0; c < 3; ++c) {
    float expected = (static_cast<float>(gradient(4, 1, c)) / 255.0f - o.mean[c]) / o.std[c];
    EXPECT_NEAR(at(t, c, 1, 4), expected, 1e-6);
  }
  // One value stands for every channel; with bgr, mean and std follow the output order.
  o = raw_pixels();
  o.mean = {100.0f};
  o.std = {2.0f};
  EXPECT_EQ(at(load_image(file("rgb.png"), o), 1, 2, 3), (gradient(3, 2, 1) - 100.0f) / 2.0f);
  o.bgr = true;
  o.mean = {1.0f, 2.0f, 3.0f};
  o.std = {};
  EXPECT_EQ(at(load_image(file("rgb.png"), o), 0, 0, 1), gradient(1, 0, 2) - 1.0f);
}

ImageTensor gray_resized(const fs::path& file, int w, int h, const std::vector<unsigned char>& pixels,
                         int64_t out_h, int64_t out_w) {
  write_png(file, w, h, pixels, PngSpec{PNG_COLOR_TYPE_GRAY, 8, false, {}, {}});
  ImageOptions o = raw_pixels();
  o.channels = 1;
  o.height = out_h;
  o.width = out_w;
  return load_image(file, o);
}

TEST_F(ImageFiles, BilinearUpscaleUsesHalfPixelCentres) {
  // 2x2 -> 4x4: output i reads input (i + 0.5) / 2 - 0.5, clamped: -0.25 -> 0, 0.25, 0.75, 1.25 -> 1;
  // so each row and column mixes its two inputs as (1, 0), (0.75, 0.25), (0.25, 0.75), (0, 1).
  ImageTensor t = gray_resized(file("2x2.png"), 2, 2, {0, 100, 200, 40}, 4, 4);
  ASSERT_EQ(t.dims, (std::vector<int64_t>{1, 1, 4, 4}));
  const std::vector<float> expected = {
      0,   25,     75,    100,  // row 0: 0 .. 100
      50,  58.75,  76.25, 85,   // 0.75 * row 0 + 0.25 * row 3
      150, 126.25, 78.75, 55,   // 0.25 * row 0 + 0.75 * row 3
      200, 160,    80,    40,   // row 3: 200 .. 40
  };
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(t.data[i], expected[i], 1e-4) << i;
}

TEST_F(ImageFiles, BilinearDownscaleAveragesPairs) {
  // 4x4 -> 2x2: output i reads input (i + 0.5) * 2 - 0.5 = 0.5, 2.5: the mean of each 2x2 block (no
  // antialias filter: at this ratio the two coincide).
  ImageTensor t = gray_resized(file("4x4.png"), 4, 4,
                               {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 250}, 2, 2);
  ASSERT_EQ(t.dims, (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(t.data, (std::vector<float>{25, 45, 105, 150}));

  // One side only: 4 wide -> 2 wide, height kept.
  ImageOptions o = raw_pixels();
  o.channels = 1;
  o.width = 2;
  ImageTensor w = load_image(file("4x4.png"), o);
  ASSERT_EQ(w.dims, (std::vector<int64_t>{1, 1, 4, 2}));
  EXPECT_EQ(w.data, (std::vector<float>{5, 25, 45, 65, 85, 105, 125, 195}));
}

TEST_F(ImageFiles, ResizesEachChannelInEitherLayout) {
  // RGB 2x2 -> 4x4, NHWC: every channel resized like the grey case above.
  const std::vector<unsigned char> pixels = {0, 10, 20, 100, 110, 120, 200, 210, 220, 40, 50, 60};
  write_png(file("rgb2x2.png"), 2, 2, pixels, PngSpec{PNG_COLOR_TYPE_RGB, 8, false, {}, {}});
  ImageOptions o = raw_pixels();
  o.height = o.width = 4;
  o.nhwc = true;
  ImageTensor t = load_image(file("rgb2x2.png"), o);
  ASSERT_EQ(t.dims, (std::vector<int64_t>{1, 4, 4, 3}));
  // Pixel (1, 2): 0.75 * (0.25 * p00 + 0.75 * p01) + 0.25 * (0.25 * p10 + 0.75 * p11).
  for (int c = 0; c < 3; ++c) {
    float expected = 0.75f * (0.25f * pixels[c] + 0.75f * pixels[3 + c]) +
                     0.25f * (0.25f * pixels[6 + c] + 0.75f * pixels[9 + c]);
    EXPECT_NEAR(t.data[static_cast<size_t>((1 * 4 + 2) * 3 + c)], expected, 1e-4) << c;
  }
}

TEST_F(ImageFiles, BrokenFilesAreErrorsNamingThePath) {
  auto fails_with = [&](const fs::path& f, const std::string& what) {
    std::string message = error_of([&] { load_image(f, ImageOptions{}); });
    EXPECT_NE(message.find(f.string()), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  };

  write_png(file("noise.png"), noise_image(32, 32), PNG_COLOR_TYPE_RGB);
  std::string png = read_bytes(file("noise.png"));
  write_bytes(file("half.png"), png.substr(0, png.size() / 2));
  fails_with(file("half.png"), "truncated");
  write_bytes(file("no_end.png"), png.substr(0, png.size() - 12));  // everything but IEND
  fails_with(file("no_end.png"), "truncated");
  std::string flipped = png;
  flipped[png.size() / 2] = static_cast<char>(flipped[png.size() / 2] ^ 0x40);  // the IDAT CRC fails
  write_bytes(file("flipped.png"), flipped);
  fails_with(file("flipped.png"), "bad PNG data");
  write_bytes(file("sig_only.png"), png.substr(0, 8));
  fails_with(file("sig_only.png"), "bad PNG data");

  write_jpeg(file("noise.jpg"), noise_image(32, 32), 100);
  std::string jpg = read_bytes(file("noise.jpg"));
  write_bytes(file("half.jpg"), jpg.substr(0, jpg.size() / 2));
  fails_with(file("half.jpg"), "bad JPEG data");
  write_bytes(file("no_eoi.jpg"), jpg.substr(0, jpg.size() - 2));
  fails_with(file("no_eoi.jpg"), "bad JPEG data");
  write_bytes(file("soi_only.jpg"), jpg.substr(0, 3));
  fails_with(file("soi_only.jpg"), "bad JPEG data");
  std::string garbage_after_soi = jpg.substr(0, 3) + std::string(200, '\x5a');
  write_bytes(file("garbage_after_soi.jpg"), garbage_after_soi);
  fails_with(file("garbage_after_soi.jpg"), "bad JPEG data");

  std::string garbage(300, '\0');
  std::mt19937 rng(3);
  for (auto& ch : garbage) ch = static_cast<char>(rng());
  garbage[0] = 'Q';
  write_bytes(file("garbage.png"), garbage);
  fails_with(file("garbage.png"), "not a PNG or JPEG file");
  write_bytes(file("anim.gif"), "GIF89a" + garbage);
  fails_with(file("anim.gif"), "GIF images are not supported");
  write_bytes(file("empty.jpg"), "");
  fails_with(file("empty.jpg"), "empty");
  fails_with(file("missing.png"), "No such file");
  fails_with(dir_, "not a regular file");
}

// A PNG chunk with its CRC, for headers that libpng would refuse to write.
std::string png_chunk(const std::string& type, const std::string& data) {
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  std::string body = type + data;
  uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
  return be32(static_cast<uint32_t>(data.size())) + body + be32(crc);
}

std::string png_header(uint32_t w, uint32_t h) {
  std::string ihdr;
  for (uint32_t v : {w, h}) {
    for (int shift : {24, 16, 8, 0}) ihdr += static_cast<char>(v >> shift);
  }
  ihdr += std::string{8, 0, 0, 0, 0};  // 8-bit grey, deflate, no filter, no interlace
  // libpng reads up to the first IDAT before the size is looked at; the pixels never are.
  return "\x89PNG\r\n\x1a\n" + png_chunk("IHDR", ihdr) + png_chunk("IDAT", std::string(16, '\0')) +
         png_chunk("IEND", "");
}

TEST_F(ImageFiles, AbsurdSizesAreRefusedBeforeDecoding) {
  write_bytes(file("wide.png"), png_header(40000, 1));
  std::string wide = error_of([&] { load_image(file("wide.png"), ImageOptions{}); });
  EXPECT_NE(wide.find("40000"), std::string::npos) << wide;
  EXPECT_NE(wide.find(file("wide.png").string()), std::string::npos) << wide;
  write_bytes(file("huge.png"), png_header(20000, 20000));  // each side fine, 4e8 pixels not
  std::string huge = error_of([&] { load_image(file("huge.png"), ImageOptions{}); });
  EXPECT_NE(huge.find("more than 2^28 pixels"), std::string::npos) << huge;

  write_png(file("rgb.png"), gradient_image(5, 3, 3), PNG_COLOR_TYPE_RGB);
  ImageOptions o;
  o.height = 20000;
  o.width = 20000;
  EXPECT_NE(error_of([&] { load_image(file("rgb.png"), o); }).find("the requested size"), std::string::npos);
}

TEST_F(ImageFiles, OptionsThatDoNotFitAreErrors) {
  write_png(file("rgb.png"), gradient_image(5, 3, 3), PNG_COLOR_TYPE_RGB);
  auto message = [&](const ImageOptions& o) { return error_of([&] { load_image(file("rgb.png"), o); }); };
  ImageOptions o;
  o.mean = {0.5f, 0.5f};
  std::string m = message(o);
  EXPECT_NE(m.find("mean has 2 values; expected 1 or 3"), std::string::npos) << m;
  EXPECT_NE(m.find(file("rgb.png").string()), std::string::npos) << m;
  o = {};
  o.channels = 1;
  o.std = {0.2f, 0.2f, 0.2f};
  EXPECT_NE(message(o).find("std has 3 values; expected 1 (one channel)"), std::string::npos);
  o = {};
  o.std = {0.2f, 0.0f, 0.2f};
  EXPECT_NE(message(o).find("std holds a zero"), std::string::npos);
  o = {};
  o.channels = 4;
  EXPECT_NE(message(o).find("4 channels"), std::string::npos);
  o = {};
  o.height = -1;
  EXPECT_NE(message(o).find("invalid requested size"), std::string::npos);
}

TEST(ImageParse, ImageSize) {
  EXPECT_EQ(parse_image_size("224"), (std::pair<int64_t, int64_t>{224, 224}));
  EXPECT_EQ(parse_image_size("224x160"), (std::pair<int64_t, int64_t>{224, 160}));
  EXPECT_EQ(parse_image_size(" 480 X 640 "), (std::pair<int64_t, int64_t>{480, 640}));
  EXPECT_EQ(parse_image_size("32768x1"), (std::pair<int64_t, int64_t>{32768, 1}));
  for (const char* bad : {"", "x", "224x", "x224", "0", "-3", "abc", "224x224x3", "2.5", "40000",
                          "20000x20000", "99999999999999999999"}) {
    std::string m = error_of([&] { parse_image_size(bad); });
    EXPECT_NE(m.find(std::string("'") + bad + "'"), std::string::npos) << bad << ": " << m;
  }
}

TEST(ImageParse, FloatList) {
  EXPECT_EQ(parse_float_list("0.485,0.456,0.406"), (std::vector<float>{0.485f, 0.456f, 0.406f}));
  EXPECT_EQ(parse_float_list("1"), (std::vector<float>{1.0f}));
  EXPECT_EQ(parse_float_list(" -1.5 , 2e2 "), (std::vector<float>{-1.5f, 200.0f}));
  for (const char* bad : {"", "1,,2", "1,", ",1", "a", "0.5x", "nan", "inf", "1e999", "1;2"}) {
    std::string m = error_of([&] { parse_float_list(bad); });
    EXPECT_NE(m.find(std::string("in '") + bad + "'"), std::string::npos) << bad << ": " << m;
  }
}

TEST(ImageParse, CommandLineOptions) {
  ImageOptions o = parse_image_options("224x224", "0.485,0.456,0.406", "0.229,0.224,0.225", "NCHW");
  EXPECT_EQ(o.height, 224);
  EXPECT_EQ(o.width, 224);
  EXPECT_EQ(o.mean.size(), 3u);
  EXPECT_FLOAT_EQ(o.std[2], 0.225f);
  EXPECT_FALSE(o.nhwc);
  EXPECT_TRUE(parse_image_options("", "", "", "nhwc").nhwc);
  ImageOptions defaults = parse_image_options("", "", "", "");
  EXPECT_EQ(defaults.height, 0);
  EXPECT_TRUE(defaults.mean.empty() && defaults.std.empty());
  EXPECT_NE(error_of([] { parse_image_options("", "", "", "NWHC"); }).find("'NWHC'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_image_options("", "1,2", "", ""); }).find("mean has 2 values"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_image_options("", "", "0", ""); }).find("std holds a zero"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_image_options("0x5", "", "", ""); }).find("'0x5'"), std::string::npos);
}

TEST(ImageDecode, FromMemory) {
  // The same decoder over bytes already in memory; unknown bytes are refused there too.
  const std::vector<std::byte> bytes(16, std::byte{0x42});
  EXPECT_NE(error_of([&] {
              decode_image(bytes, ImageOptions{});
            }).find("not a PNG or JPEG file (it starts with bytes 42 42 42 42)"),
            std::string::npos);
  EXPECT_NE(error_of([] { decode_image({}, ImageOptions{}); }).find("empty"), std::string::npos);
}

}  // namespace
}  // namespace tessera::io
