// .npy reading and writing, against files NumPy wrote (tests/data/npy, made with numpy.save).
#include "io/npy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace tessera::io {
namespace {

namespace fs = std::filesystem;
using ir::DataType;

fs::path data(const std::string& name) {
  return fs::path(TESSERA_TEST_DATA) / "npy" / name;
}

TEST(Npy, ReadsWhatNumpyWrote) {
  ir::Tensor t = read_npy(data("f32_2x3.npy"), "x");
  EXPECT_EQ(t.name, "x");
  EXPECT_EQ(t.dtype, DataType::kFloat);
  EXPECT_EQ(t.dims, (std::vector<int64_t>{2, 3}));
  auto v = t.as<float>();
  ASSERT_EQ(v.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(v[i], 0.5f * static_cast<float>(i));

  ir::Tensor i = read_npy(data("i64_4.npy"));
  EXPECT_EQ(i.dtype, DataType::kInt64);
  EXPECT_EQ(std::vector<int64_t>(i.as<int64_t>().begin(), i.as<int64_t>().end()),
            (std::vector<int64_t>{1, -2, 3, -4}));

  ir::Tensor b = read_npy(data("bool_scalar.npy"));
  EXPECT_EQ(b.dtype, DataType::kBool);
  EXPECT_TRUE(b.dims.empty());
  EXPECT_EQ(b.as<uint8_t>()[0], 1);

  ir::Tensor h = read_npy(data("f16_3.npy"));
  EXPECT_EQ(h.dtype, DataType::kFloat16);
  EXPECT_EQ(h.as<uint16_t>()[2], 0x7bff);  // 65504, the largest float16

  EXPECT_EQ(read_npy(data("u8_2x2x2.npy")).dims, (std::vector<int64_t>{2, 2, 2}));
  ir::Tensor e = read_npy(data("empty_0x3.npy"));
  EXPECT_EQ(e.dims, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(e.bytes().empty());
  ir::Tensor v2 = read_npy(data("v2_f64.npy"));
  EXPECT_DOUBLE_EQ(v2.as<double>()[1], 2.5);
}

TEST(Npy, RefusesWhatItCannotRepresentFaithfully) {
  auto message = [](const std::string& file) {
    try {
      read_npy(data(file));
    } catch (const NpyError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("fortran.npy").find("Fortran-order arrays are not supported"), std::string::npos);
  EXPECT_NE(message("big_endian.npy").find("unsupported dtype '>f4'"), std::string::npos);
}

TEST(Npy, RefusesDamagedFiles) {
  std::ifstream in(data("f32_2x3.npy"), std::ios::binary);
  std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto parse = [](const std::string& s) { return parse_npy(std::as_bytes(std::span(s))); };
  EXPECT_THROW(parse("hello"), NpyError);
  EXPECT_THROW(parse(good.substr(0, 20)), NpyError);               // ends inside the header
  EXPECT_THROW(parse(good.substr(0, good.size() - 4)), NpyError);  // data too short
  std::string overflow = good;
  auto at = overflow.find("(2, 3)");
  overflow.replace(at, 6, "(99999999999999999999, 3)");
  EXPECT_THROW(parse(overflow), NpyError);
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_THROW(parse(good.substr(0, cut)), NpyError) << cut;
  }
}

TEST(Npy, WriteThenReadGivesTheSameTensor) {
  fs::path dir = fs::temp_directory_path() / ("tessera_npy_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (auto dims : {std::vector<int64_t>{}, std::vector<int64_t>{5}, std::vector<int64_t>{2, 3, 1}}) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> values(static_cast<size_t>(n));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) - 1.5f;
    ir::Tensor t = ir::make_tensor("t", DataType::kFloat, dims, values);
    write_npy(t, dir / "t.npy");
    ir::Tensor back = read_npy(dir / "t.npy", "t");
    EXPECT_EQ(back, t);
    // The data starts on a 64-byte boundary, as NumPy itself writes it.
    EXPECT_EQ((fs::file_size(dir / "t.npy") - back.bytes().size()) % 64, 0u);
  }
  ir::Tensor s;
  s.name = "s";
  s.dtype = DataType::kString;
  EXPECT_THROW(to_npy(s), NpyError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera::io
