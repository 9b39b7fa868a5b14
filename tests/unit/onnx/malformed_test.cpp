// Files that are not valid models are refused with a LoadError that says what is wrong; none crashes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "onnx_test_util.h"

namespace tessera::onnx {
namespace {

using namespace testing;  // NOLINT
using ::testing::HasSubstr;

std::string valid_model_bytes() {
  auto p = minimal_proto();
  auto* t = add_float_initializer(p, {2, 3});
  t->set_raw_data(std::string(24, '\x01'));
  auto* a = p.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("note");
  a->set_type(3);
  a->set_s("some text to make the file longer");
  return p.SerializeAsString();
}

TEST(OnnxMalformed, TruncatedInTheMiddleIsNotAModel) {
  std::string bytes = valid_model_bytes();
  std::string half = bytes.substr(0, bytes.size() / 2);
  try {
    load_model_from_memory(as_bytes(half));
    FAIL() << "loaded a truncated model";
  } catch (const LoadError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not an ONNX model"));
  }
}

TEST(OnnxMalformed, EveryPrefixLoadsOrFailsCleanly) {
  std::string bytes = valid_model_bytes();
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string prefix = bytes.substr(0, n);
    try {
      load_model_from_memory(as_bytes(prefix));
    } catch (const LoadError&) {
    }
  }
}

TEST(OnnxMalformed, TruncatedFileOnDisk) {
  TempDir dir;
  std::string bytes = valid_model_bytes();
  write_file(dir / "t.onnx", bytes.substr(0, bytes.size() - 5));
  EXPECT_THROW(load_model(dir / "t.onnx"), LoadError);
}

TEST(OnnxMalformed, RandomBytesAreNotAModel) {
  std::mt19937 rng(1234);
  for (int i = 0; i < 500; ++i) {
    std::string junk(1 + rng() % 300, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    EXPECT_THROW(load_model_from_memory(as_bytes(junk)), LoadError) << "case " << i;
  }
}

TEST(OnnxMalformed, EmptyInputIsNotAModel) {
  try {
    load_model_from_memory({});
    FAIL();
  } catch (const LoadError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not an ONNX model: it has no ir_version"));
  }
}

TEST(OnnxMalformed, MissingFileAndFolder) {
  TempDir dir;
  EXPECT_THAT([&] { load_model(dir / "nope.onnx"); }, ThrowsMessage<LoadError>(HasSubstr("cannot open")));
  EXPECT_THAT([&] { load_model(dir.path()); }, ThrowsMessage<LoadError>(HasSubstr("not a regular file")));
}

TEST(OnnxMalformed, FileOverTwoGibibytesIsRefused) {
  TempDir dir;
  fs::path p = dir / "huge.onnx";
  write_file(p, "");
  fs::resize_file(p, (uint64_t{1} << 31) + 10);  // sparse: costs no disk
  EXPECT_THAT([&] { load_model(p); }, ThrowsMessage<LoadError>(HasSubstr("external data")));
}

TEST(OnnxMalformed, NegativeDimension) {
  auto p = minimal_proto();
  add_float_initializer(p, {2, -3});
  EXPECT_THAT(load_error(p), HasSubstr("tensor 'w' has a negative dimension in shape [2,-3]"));
}

TEST(OnnxMalformed, DimensionsOverflowingInt64) {
  auto p = minimal_proto();
  int64_t big = std::numeric_limits<int64_t>::max() / 2;
  add_float_initializer(p, {big, 3}, "x");
  EXPECT_THAT(load_error(p), HasSubstr("dimensions of tensor 'x' overflow int64"));
  // The element count fits but the byte size does not.
  auto q = minimal_proto();
  add_float_initializer(q, {big / 2}, "x");
  EXPECT_THAT(load_error(q), HasSubstr("dimensions of tensor 'x' overflow int64"));
}

TEST(OnnxMalformed, UnknownDataType) {
  auto p = minimal_proto();
  add_float_initializer(p, {1})->set_data_type(99);
  EXPECT_THAT(load_error(p), HasSubstr("tensor 'w' has unknown data_type 99"));
  auto q = minimal_proto();
  add_float_initializer(q, {1})->set_data_type(0);
  EXPECT_THAT(load_error(q), HasSubstr("tensor 'w' has no data_type"));
}

TEST(OnnxMalformed, UnknownElementTypeInAValueType) {
  auto p = minimal_proto();
  p.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(77);
  EXPECT_THAT(load_error(p), HasSubstr("value 'x' has unknown element type 77"));
}

TEST(OnnxMalformed, NegativeOpsetVersion) {
  auto p = minimal_proto();
  p.mutable_opset_import(0)->set_version(-1);
  EXPECT_THAT(load_error(p), HasSubstr("opset version -1"));
}

TEST(OnnxMalformed, UnknownAttributeType) {
  auto p = minimal_proto();
  auto* a = p.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("weird");
  a->set_type(42);
  EXPECT_THAT(load_error(p), HasSubstr("attribute 'weird' of node '' (Identity) has unknown type 42"));
}

TEST(OnnxMalformed, UnknownDataLocation) {
  auto p = minimal_proto();
  add_float_initializer(p, {0})->set_data_location(5);
  EXPECT_THAT(load_error(p), HasSubstr("tensor 'w' has unknown data_location 5"));
}

// A chain of If nodes, each holding the next graph in then_branch, `depth` subgraphs deep.
onnx_pb::ModelProto nested_model(int depth) {
  auto p = minimal_proto();
  onnx_pb::GraphProto* g = p.mutable_graph();
  for (int i = 0; i < depth; ++i) {
    auto* n = g->add_node();
    n->set_op_type("If");
    n->set_name("if" + std::to_string(i));
    auto* a = n->add_attribute();
    a->set_name("then_branch");
    a->set_type(5);
    g = a->mutable_g();
    g->set_name("level" + std::to_string(i + 1));
  }
  return p;
}

int depth_of(const ir::Graph& g) {
  for (const ir::Node& n : g.nodes) {
    if (const ir::Attribute* a = n.attr("then_branch")) return 1 + depth_of(*a->graphs[0]);
  }
  return 0;
}

TEST(OnnxMalformed, NestedSubgraphsLoadUpToTheLimit) {
  std::string bytes = nested_model(30).SerializeAsString();
  ir::Model m = load_model_from_memory(as_bytes(bytes));
  EXPECT_EQ(depth_of(m.graph), 30);
  EXPECT_TRUE(load_model_from_memory(as_bytes(serialize_model(m))) == m);

  LoadOptions strict;
  strict.max_subgraph_depth = 10;
  EXPECT_THAT(
      load_error(nested_model(30), {}, strict),
      HasSubstr("subgraph 'level11' in attribute 'then_branch' of node 'if10' (If) is nested 11 deep, past "
                "max_subgraph_depth (10)"));
  EXPECT_EQ(load_error(nested_model(10), {}, strict), "");
}

TEST(OnnxMalformed, DeepNestingPastTheDefaultGivesOurMessage) {
  EXPECT_THAT(load_error(nested_model(70)), HasSubstr("past max_subgraph_depth (64)"));
}

TEST(OnnxMalformed, AbsurdNestingIsRefusedByTheParser) {
  EXPECT_THAT(load_error(nested_model(400)), HasSubstr("not an ONNX model"));
}

}  // namespace
}  // namespace tessera::onnx

namespace tessera::onnx {
namespace {

using namespace testing;  // NOLINT
using ::testing::HasSubstr;

// Big enough (>= 1 KiB) that load_model leaves its raw_data in the file's mapping.
onnx_pb::ModelProto model_with_big_initializer() {
  auto p = minimal_proto();
  std::string data(4096 * 4, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  add_float_initializer(p, {4096}, "big")->set_raw_data(data);
  add_float_initializer(p, {2}, "small")->set_raw_data(std::string(8, '\x02'));
  add_float_initializer(p, {1024}, "typed")->mutable_float_data()->Resize(1024, 0.5f);
  return p;
}

TEST(OnnxMappedLoad, FileLoadMatchesMemoryLoad) {
  TempDir dir;
  std::string bytes = model_with_big_initializer().SerializeAsString();
  write_file(dir / "m.onnx", bytes);
  ir::Model from_file = load_model(dir / "m.onnx");
  ir::Model from_memory = load_model_from_memory(as_bytes(bytes));
  EXPECT_TRUE(from_file == from_memory);
  // Saved and loaded again, still the same.
  save_model(from_file, dir / "again.onnx");
  EXPECT_TRUE(load_model(dir / "again.onnx") == from_memory);
}

TEST(OnnxMappedLoad, ChecksStillApplyToMappedRawData) {
  TempDir dir;
  auto p = model_with_big_initializer();
  p.mutable_graph()->mutable_initializer(0)->set_dims(0, 4000);
  write_file(dir / "m.onnx", p.SerializeAsString());
  EXPECT_THAT([&] { load_model(dir / "m.onnx"); },
              ThrowsMessage<LoadError>(
                  HasSubstr("tensor 'big': raw_data has 16384 bytes but shape [4000] of float needs 16000")));
  auto q = model_with_big_initializer();
  q.mutable_graph()->mutable_initializer(0)->add_float_data(1.f);
  write_file(dir / "m.onnx", q.SerializeAsString());
  EXPECT_THAT([&] { load_model(dir / "m.onnx"); },
              ThrowsMessage<LoadError>(HasSubstr("tensor 'big' has data in both raw_data and float_data")));
}

// Random corruption of a valid file: every variant either loads or is refused, from a file (mapped
// raw_data path) and from memory alike; run under ASan/UBSan this also shows no bad access.
TEST(OnnxMappedLoad, CorruptedFilesLoadOrFailCleanly) {
  TempDir dir;
  std::string good = model_with_big_initializer().SerializeAsString();
  std::mt19937 rng(99);
  int refused = 0;
  for (int i = 0; i < 300; ++i) {
    std::string bad = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      // Mostly the structure at the front, where the tags and lengths are.
      size_t pos = (rng() % 2) ? rng() % 64 : rng() % bad.size();
      bad[pos] = static_cast<char>(rng());
    }
    write_file(dir / "c.onnx", bad);
    try {
      load_model(dir / "c.onnx");
    } catch (const LoadError&) {
      ++refused;
    }
    try {
      load_model_from_memory(as_bytes(bad));
    } catch (const LoadError&) {
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace tessera::onnx
