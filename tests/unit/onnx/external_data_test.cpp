// External data: every way a location, key or range could reach outside the model folder or past a
// file is refused with a message naming the tensor; saving with external data and atomically.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "onnx_test_util.h"

namespace tessera::onnx {
namespace {

using namespace testing;  // NOLINT
using ::testing::HasSubstr;

const std::vector<float> kValues = {1, 2, 3, 4, 5, 6};

std::string float_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// A folder with w.bin holding six floats, and a model whose tensor 'w' [2,3] points at it with `keys`.
struct ExternalFixture {
  TempDir dir;
  ExternalFixture() { write_file(dir / "w.bin", float_bytes(kValues)); }

  std::string error(std::vector<std::pair<std::string, std::string>> keys, const LoadOptions& o = {}) {
    auto p = minimal_proto();
    add_external(add_float_initializer(p, {2, 3}), std::move(keys));
    write_file(dir / "m.onnx", p.SerializeAsString());
    try {
      load_model(dir / "m.onnx", o);
    } catch (const LoadError& e) {
      return e.what();
    }
    return "";
  }
};

TEST(OnnxExternalData, LoadsAViewOfTheFile) {
  ExternalFixture f;
  ASSERT_EQ(f.error({{"location", "w.bin"}, {"offset", "0"}, {"length", "24"}, {"checksum", "abc"}}), "");
  ir::Model m = load_model(f.dir / "m.onnx");
  const ir::Tensor& t = m.graph.initializers[0];
  ASSERT_TRUE(t.external);
  EXPECT_EQ(t.external->location, "w.bin");
  EXPECT_EQ(t.external->checksum, "abc");
  auto v = t.as<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), kValues);
}

TEST(OnnxExternalData, OffsetIntoAFileAndSubfolders) {
  ExternalFixture f;
  fs::create_directories(f.dir / "sub");
  write_file(f.dir / "sub/w.bin", "12345678" + float_bytes(kValues));
  EXPECT_EQ(f.error({{"location", "./sub/w.bin"}, {"offset", "8"}}), "");
  ir::Model loaded_back = load_model(f.dir / "m.onnx");
  auto v = loaded_back.graph.initializers[0].as<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), kValues);
}

TEST(OnnxExternalData, AbsolutePathIsRefused) {
  ExternalFixture f;
  std::string abs = (f.dir / "w.bin").string();
  EXPECT_THAT(f.error({{"location", abs}}),
              HasSubstr("tensor 'w': external data location '" + abs + "' is absolute"));
}

TEST(OnnxExternalData, DotDotIsRefused) {
  ExternalFixture f;
  EXPECT_THAT(f.error({{"location", "../w.bin"}}), HasSubstr("contains '..'"));
  EXPECT_THAT(f.error({{"location", "sub/../w.bin"}}), HasSubstr("contains '..'"));
  EXPECT_THAT(f.error({{"location", "sub\\..\\w.bin"}}), HasSubstr("contains '\\'"));
  EXPECT_THAT(f.error({{"location", ""}}), HasSubstr("is empty"));
}

TEST(OnnxExternalData, SymlinkedFolderIsRefused) {
  ExternalFixture f;
  fs::create_directories(f.dir / "real");
  write_file(f.dir / "real/w.bin", float_bytes(kValues));
  fs::create_directory_symlink(f.dir / "real", f.dir / "link");
  EXPECT_THAT(f.error({{"location", "link/w.bin"}}),
              HasSubstr("tensor 'w': external data location 'link/w.bin': 'link' is a symbolic link"));
  EXPECT_EQ(f.error({{"location", "real/w.bin"}}), "");
}

TEST(OnnxExternalData, SymlinkedFileIsRefused) {
  ExternalFixture f;
  fs::create_symlink(f.dir / "w.bin", f.dir / "s.bin");
  EXPECT_THAT(f.error({{"location", "s.bin"}}), HasSubstr("'s.bin' is a symbolic link"));
  // Also a relative link that stays inside the folder: links are refused, not resolved.
  fs::create_symlink("w.bin", f.dir / "r.bin");
  EXPECT_THAT(f.error({{"location", "r.bin"}}), HasSubstr("'r.bin' is a symbolic link"));
}

TEST(OnnxExternalData, HardLinkIsRefused) {
  ExternalFixture f;
  write_file(f.dir / "other.bin", float_bytes(kValues));
  fs::create_hard_link(f.dir / "other.bin", f.dir / "h.bin");
  EXPECT_THAT(f.error({{"location", "h.bin"}}),
              HasSubstr("external data location 'h.bin': the file has 2 hard links"));
}

TEST(OnnxExternalData, NotARegularFileIsRefused) {
  ExternalFixture f;
  fs::create_directories(f.dir / "d");
  EXPECT_THAT(f.error({{"location", "d"}}), HasSubstr("not a regular file"));
  ASSERT_EQ(::mkfifo((f.dir / "fifo").c_str(), 0600), 0);
  EXPECT_THAT(f.error({{"location", "fifo"}}), HasSubstr("not a regular file"));
  EXPECT_THAT(f.error({{"location", "missing.bin"}}), HasSubstr("'missing.bin' does not exist"));
}

TEST(OnnxExternalData, UnknownAndDuplicateKeysAreRefused) {
  ExternalFixture f;
  EXPECT_THAT(f.error({{"location", "w.bin"}, {"basepath", "/"}}),
              HasSubstr("tensor 'w': unknown external_data key 'basepath'"));
  EXPECT_THAT(f.error({{"location", "w.bin"}, {"offset", "0"}, {"offset", "4"}}),
              HasSubstr("tensor 'w': external_data key 'offset' appears twice"));
  EXPECT_THAT(f.error({{"location", "w.bin"}, {"location", "x.bin"}}), HasSubstr("'location' appears twice"));
  EXPECT_THAT(f.error({{"offset", "0"}}), HasSubstr("external_data has no location"));
}

TEST(OnnxExternalData, BadOffsetsAndLengthsAreRefused) {
  ExternalFixture f;
  EXPECT_THAT(f.error({{"location", "w.bin"}, {"offset", "-1"}}),
              HasSubstr("tensor 'w': external data in 'w.bin': offset -1 is negative"));
  EXPECT_THAT(f.error({{"location", "w.bin"}, {"length", "-24"}}),
              HasSubstr("tensor 'w': external data in 'w.bin': length -24 is negative"));
  EXPECT_THAT(f.error({{"location", "w.bin"}, {"offset", "12abc"}}),
              HasSubstr("external data in 'w.bin': offset '12abc' is not an integer"));
  EXPECT_THAT(f.error({{"location", "w.bin"}, {"offset", "99999999999999999999"}}),
              HasSubstr("overflows int64"));
  EXPECT_THAT(
      f.error({{"location", "w.bin"}, {"offset", "9223372036854775800"}}),
      HasSubstr("tensor 'w': external data in 'w.bin': offset 9223372036854775800 plus length 24 overflows"));
  EXPECT_THAT(
      f.error({{"location", "w.bin"}, {"offset", "8"}}),
      HasSubstr(
          "tensor 'w': external data in 'w.bin': bytes [8, 32) reach past the end of the file (24 bytes)"));
  EXPECT_THAT(
      f.error({{"location", "w.bin"}, {"length", "20"}}),
      HasSubstr(
          "tensor 'w': external data in 'w.bin' has length 20 but shape [2,3] of float needs 24 bytes"));
}

TEST(OnnxExternalData, InlineDataBesideExternalIsRefused) {
  auto p = minimal_proto();
  auto* t = add_float_initializer(p, {1});
  add_external(t, {{"location", "w.bin"}});
  t->add_float_data(1.f);
  EXPECT_THAT(load_error(p, "/tmp"), HasSubstr("stored as external data but also has float_data"));
  auto q = minimal_proto();
  auto* u = add_float_initializer(q, {0});
  add_external(u, {{"location", "w.bin"}});
  u->set_data_location(0);
  EXPECT_THAT(load_error(q), HasSubstr("has external_data keys but its data_location is not EXTERNAL"));
}

TEST(OnnxExternalData, InMemoryWithoutBaseFolderIsRefused) {
  auto p = minimal_proto();
  add_external(add_float_initializer(p, {2, 3}), {{"location", "w.bin"}});
  EXPECT_THAT(load_error(p),
              HasSubstr("tensor 'w' is stored in external file 'w.bin', but the model was loaded "
                        "from memory without a base folder"));
  ExternalFixture f;
  EXPECT_EQ(load_error(p, f.dir.path()), "");
}

TEST(OnnxExternalData, NotLoadedDataIsCopiedFromTheOriginalOnSave) {
  ExternalFixture f;
  ASSERT_EQ(f.error({{"location", "w.bin"}}), "");
  LoadOptions lazy;
  lazy.load_external_data = false;
  ir::Model m = load_model(f.dir / "m.onnx", lazy);
  EXPECT_FALSE(m.graph.initializers[0].data);
  ASSERT_TRUE(m.graph.initializers[0].external);

  TempDir out;
  SaveOptions inline_all;
  inline_all.external_data = SaveOptions::ExternalData::kInline;
  save_model(m, out / "inline.onnx", inline_all);
  ir::Model loaded_back = load_model(out / "inline.onnx");
  auto v = loaded_back.graph.initializers[0].as<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), kValues);

  save_model(m, out / "kept.onnx");  // kKeep: rewritten into kept.onnx.data
  ir::Model kept = load_model(out / "kept.onnx");
  EXPECT_EQ(kept.graph.initializers[0].external->location, "kept.onnx.data");
  auto k = kept.graph.initializers[0].as<float>();
  EXPECT_EQ(std::vector<float>(k.begin(), k.end()), kValues);
}

TEST(OnnxExternalData, SaveExternalAboveThresholdAndReload) {
  TempDir dir;
  ir::Model m;
  m.ir_version = 10;
  m.opset_imports = {{"", 21}};
  std::vector<float> big(1000, 0.5f), mid(17, 2.f);
  m.graph.initializers.push_back(ir::make_tensor("big", ir::DataType::kFloat, {1000}, big));
  m.graph.initializers.push_back(
      ir::make_tensor("small", ir::DataType::kFloat, {2}, std::vector<float>{1, 2}));
  m.graph.initializers.push_back(ir::make_tensor("mid", ir::DataType::kFloat, {17}, mid));
  SaveOptions o;
  o.external_data = SaveOptions::ExternalData::kExternal;
  o.external_threshold = 64;
  o.external_file = "weights/model.bin";
  save_model(m, dir / "m.onnx", o);
  EXPECT_TRUE(fs::exists(dir / "weights/model.bin"));

  ir::Model back = load_model(dir / "m.onnx");
  const auto& inits = back.graph.initializers;
  ASSERT_EQ(inits.size(), 3u);
  ASSERT_TRUE(inits[0].external);
  EXPECT_FALSE(inits[1].external);
  ASSERT_TRUE(inits[2].external);
  EXPECT_EQ(inits[0].external->location, "weights/model.bin");
  EXPECT_EQ(inits[0].external->offset % 64, 0);
  EXPECT_EQ(inits[2].external->offset % 64, 0);
  EXPECT_EQ(inits[2].external->offset, 4000 + 32);  // 4000 rounded up to 4032
  for (size_t i = 0; i < 3; ++i) {
    auto a = inits[i].bytes(), b = m.graph.initializers[i].bytes();
    EXPECT_TRUE(a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0) << i;
  }
  // And everything back inline.
  SaveOptions inline_all;
  inline_all.external_data = SaveOptions::ExternalData::kInline;
  save_model(back, dir / "inline.onnx", inline_all);
  EXPECT_TRUE(load_model(dir / "inline.onnx") == m);
}

TEST(OnnxExternalData, SavingOverTheFileItWasLoadedFromWorks) {
  TempDir dir;
  ir::Model m;
  m.ir_version = 10;
  std::vector<float> big(300, 1.25f);
  m.graph.initializers.push_back(ir::make_tensor("big", ir::DataType::kFloat, {300}, big));
  SaveOptions o;
  o.external_data = SaveOptions::ExternalData::kExternal;
  save_model(m, dir / "m.onnx", o);
  ir::Model loaded = load_model(dir / "m.onnx");  // its tensor maps m.onnx.data
  save_model(loaded, dir / "m.onnx");             // kKeep: replaces m.onnx.data
  ir::Model loaded_back = load_model(dir / "m.onnx");
  auto v = loaded_back.graph.initializers[0].as<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), big);
}

TEST(OnnxExternalData, BadExternalFileNamesAreRefusedOnSave) {
  TempDir dir;
  ir::Model m;
  m.ir_version = 10;
  SaveOptions o;
  o.external_data = SaveOptions::ExternalData::kExternal;
  for (std::string bad : {"../x.data", "/tmp/x.data", "a/../../x", "m.onnx"}) {
    o.external_file = bad;
    EXPECT_THROW(save_model(m, dir / "m.onnx", o), SaveError) << bad;
  }
  EXPECT_FALSE(fs::exists(dir / "m.onnx"));
  // A symlinked folder on the way to the data file is refused as on load.
  fs::create_directories(dir / "real");
  fs::create_directory_symlink(dir / "real", dir / "link");
  o.external_file = "link/x.data";
  o.external_threshold = 0;
  m.graph.initializers.push_back(ir::make_tensor("t", ir::DataType::kFloat, {1}, std::vector<float>{1}));
  EXPECT_THAT([&] { save_model(m, dir / "m.onnx", o); },
              ThrowsMessage<SaveError>(HasSubstr("symbolic link")));
  EXPECT_FALSE(fs::exists(dir / "real/x.data"));
}

TEST(OnnxSave, FailedSaveLeavesTheTargetAsItWas) {
  TempDir dir;
  write_file(dir / "m.onnx", "old model");
  write_file(dir / "m.onnx.data", "old data");
  ir::Model m;
  m.ir_version = 10;
  std::vector<float> big(300, 1.f);
  m.graph.initializers.push_back(ir::make_tensor("big", ir::DataType::kFloat, {300}, big));
  ir::Tensor broken = ir::make_tensor("broken", ir::DataType::kFloat, {4}, std::vector<float>{1, 2});
  m.graph.initializers.push_back(broken);  // 8 bytes for a shape that needs 16
  SaveOptions o;
  o.external_data = SaveOptions::ExternalData::kExternal;
  EXPECT_THAT(
      [&] { save_model(m, dir / "m.onnx", o); },
      ThrowsMessage<SaveError>(HasSubstr("tensor 'broken' holds 8 bytes but shape [4] of float needs 16")));
  EXPECT_EQ(read_file(dir / "m.onnx"), "old model");
  EXPECT_EQ(read_file(dir / "m.onnx.data"), "old data");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 2u) << "temporary files were left behind";

  m.graph.initializers.pop_back();
  save_model(m, dir / "m.onnx", o);
  EXPECT_NE(read_file(dir / "m.onnx"), "old model");
}

TEST(OnnxSave, InlineOverTwoGibibytesIsRefused) {
  TempDir dir;
  fs::path data = dir / "big.bin";
  write_file(data, "");
  uint64_t size = (uint64_t{1} << 31) + 4096;
  fs::resize_file(data, size);  // sparse
  auto p = minimal_proto();
  auto* t = p.mutable_graph()->add_initializer();
  t->set_name("huge");
  t->set_data_type(2);  // uint8
  t->add_dims(static_cast<int64_t>(size));
  add_external(t, {{"location", "big.bin"}});
  write_file(dir / "m.onnx", p.SerializeAsString());

  // Over 2 GiB in all loads through external data, without reading the bytes.
  ir::Model m = load_model(dir / "m.onnx");
  EXPECT_EQ(m.graph.initializers[0].bytes().size(), size);
  EXPECT_EQ(m.graph.initializers[0].bytes()[size - 1], std::byte{0});

  LoadOptions lazy;
  lazy.load_external_data = false;
  ir::Model lazy_model = load_model(dir / "m.onnx", lazy);
  SaveOptions inline_all;
  inline_all.external_data = SaveOptions::ExternalData::kInline;
  // Refused as soon as the inline bytes pass the limit, before they are copied into the proto.
  EXPECT_THAT([&] { save_model(lazy_model, dir / "out.onnx", inline_all); },
              ThrowsMessage<SaveError>(HasSubstr("over protobuf's 2 GiB limit")));
  EXPECT_FALSE(fs::exists(dir / "out.onnx"));
}

}  // namespace
}  // namespace tessera::onnx
