// com.tessera NhwcMaxPool / NhwcAveragePool against their reference kernels (transposes around MaxPool /
// AveragePool): ResNet's 3x3 stride-2 max pool, averages with and without count_include_pad, ceil_mode,
// dilations, asymmetric pads, the global window the pass makes of Global*Pool, and channel counts for
// each of the kernel's paths (16-byte vectors, 4-byte pairs, single elements), in float32 and float16.
//
// Error bound as in pool_test.cpp: max is exact; sums of K window values carry 2 * K * 2^-23 * sum |x|
// and the rounding to the element type (4 ulps).
#include "conv_test_util.h"

using namespace cuda_test;

namespace {

constexpr DataType kTypes[] = {DataType::kFloat, DataType::kFloat16};

// The pool check (conv_test_util.h) on com.tessera's NHWC pools.
void check_nhwc_pool(const std::string& op, const rt::Shape& x, std::vector<ir::Attribute> attrs, DataType t,
                     double window) {
  check_pool(op, x, std::move(attrs), t, window, "com.tessera");
}

}  // namespace

TEST_F(CudaBlas, NhwcPoolWindows) {
  for (DataType t : kTypes) {
    check_nhwc_pool("NhwcMaxPool", {2, 56, 56, 64},
                    {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}, t,
                    9);
    check_nhwc_pool("NhwcAveragePool", {1, 17, 17, 32},
                    {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}),
                     ir::Attribute::of_int("count_include_pad", 1)},
                    t, 9);
    check_nhwc_pool("NhwcAveragePool", {1, 15, 14, 6},
                    {ints("kernel_shape", {3, 2}), ints("strides", {2, 2}), ints("pads", {1, 0, 0, 1}),
                     ir::Attribute::of_int("ceil_mode", 1)},
                    t, 6);
    check_nhwc_pool("NhwcMaxPool", {1, 20, 21, 3},
                    {ints("kernel_shape", {3, 3}), ints("dilations", {2, 1}),
                     ir::Attribute::of_int("ceil_mode", 1), ints("strides", {3, 2})},
                    t, 9);
    // The global pools as the pass writes them: one H x W window.
    check_nhwc_pool("NhwcAveragePool", {4, 7, 7, 2048}, {ints("kernel_shape", {7, 7})}, t, 49);
    check_nhwc_pool("NhwcMaxPool", {2, 30, 31, 20}, {ints("kernel_shape", {30, 31})}, t, 930);
  }
  check_nhwc_pool("NhwcAveragePool", {2, 9, 8, 4},
                  {ints("kernel_shape", {4, 4}), ir::Attribute::of_string("auto_pad", "SAME_LOWER"),
                   ir::Attribute::of_int("count_include_pad", 1)},
                  DataType::kFloat, 16);
}
