// The CUDA DFT against the CPU's reference: real and complex signals, lengths that are and are not
// powers of two (the CPU takes its FFT path for the former, the GPU always sums directly, both in
// float64), dft_length padding and truncating, onesided, inverse and the onesided inverse.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

OneNode dft(int opset, std::vector<ir::Attribute> attrs, rt::Tensor x, rt::Tensor length = {},
            rt::Tensor axis = {}) {
  OneNode n = node("DFT", opset, std::move(attrs));
  n.inputs = {std::move(x)};
  if (length.defined() || axis.defined()) {
    n.inputs.push_back(length.defined() ? length : ints({}, {0}));
    n.absent = {false, !length.defined()};
  }
  if (axis.defined()) n.inputs.push_back(axis);
  return n;
}

rt::Tensor scalar(int64_t v) {
  return ints({}, {v});
}

TEST_F(CudaOps, DftMatchesTheReference) {
  using ir::Attribute;
  const double tol = 1e-4;
  rt::Tensor real = random_tensor(DataType::kFloat, {2, 37, 3, 1}, -1, 1, 1);
  rt::Tensor cplx = random_tensor(DataType::kFloat, {3, 64, 2}, -1, 1, 2);
  for (int64_t onesided : {0, 1}) {
    const Attribute os = Attribute::of_int("onesided", onesided);
    expect_matches(dft(17, {os}, real), tol, tol, label("real 37 onesided", onesided));
    expect_matches(dft(17, {os}, cplx), tol, tol, label("complex 64 onesided", onesided));
    expect_matches(dft(17, {os, Attribute::of_int("axis", 2)}, real), tol, tol, label("axis 2", onesided));
    expect_matches(dft(17, {os}, real, scalar(50)), tol, tol, label("padded to 50", onesided));
    expect_matches(dft(17, {os}, cplx, scalar(40)), tol, tol, label("truncated to 40", onesided));
  }
  expect_matches(dft(17, {Attribute::of_int("inverse", 1)}, cplx), tol, tol, "inverse");
  // irfft: a half spectrum of 33 bins to 64 samples, and to 61 given dft_length.
  rt::Tensor half = random_tensor(DataType::kFloat, {3, 33, 2}, -1, 1, 3);
  const std::vector<Attribute> irfft = {Attribute::of_int("inverse", 1), Attribute::of_int("onesided", 1)};
  expect_matches(dft(17, irfft, half), tol, tol, "irfft");
  expect_matches(dft(17, irfft, half, scalar(61)), tol, tol, "irfft 61");
  // Opset 20: the axis as an input (default -2), float16 and float64 signals.
  expect_matches(dft(20, {}, real), tol, tol, "opset 20");
  expect_matches(dft(20, {}, real, {}, scalar(1)), tol, tol, "opset 20 axis 1");
  expect_matches(dft(20, {}, random_tensor(DataType::kFloat16, {4, 20, 2}, -1, 1, 4)), 4e-3, 4e-3, "float16");
  expect_matches(dft(20, {}, random_tensor(DataType::kDouble, {4, 100, 1}, -1, 1, 5)), 1e-10, 1e-10,
                 "float64");
}

TEST_F(CudaOps, StftMatchesTheReference) {
  const double tol = 1e-4;
  rt::Tensor sig = random_tensor(DataType::kFloat, {2, 100, 1}, -1, 1, 6);
  OneNode plain = node("STFT", 17);
  plain.inputs = {sig, ints({}, {10}), random_tensor(DataType::kFloat, {32}, 0, 1, 7), ints({}, {32})};
  plain.absent = {false, false, true, false};
  expect_matches(plain, tol, tol, "STFT frame 32 step 10");
  OneNode windowed = node("STFT", 17);
  windowed.inputs = {sig, ints({}, {7}), random_tensor(DataType::kFloat, {24}, 0, 1, 8)};
  expect_matches(windowed, tol, tol, "STFT window 24 step 7");
  OneNode cplx = node("STFT", 17, {ir::Attribute::of_int("onesided", 0)});
  cplx.inputs = {random_tensor(DataType::kFloat, {1, 64, 2}, -1, 1, 9), ints({}, {16}),
                 random_tensor(DataType::kFloat, {20}, 0, 1, 10), ints({}, {20})};
  expect_matches(cplx, tol, tol, "STFT complex two-sided");
}

}  // namespace
}  // namespace tessera::cuda_test
