// Saving writes large tensors straight from their buffers (onnx/save_stream.h) instead of copying them
// into the proto: the file must hold exactly the bytes protobuf writes for the proto with every raw_data
// copied in, wherever the tensors sit (initializers, Constant values, tensor lists, sparse values, If
// bodies, function bodies and attribute defaults), with unknown fields and fields after raw_data.
#include "onnx/save_stream.h"

#include <gtest/gtest.h>

#include <vector>

#include "onnx/convert.h"
#include "onnx_test_util.h"

namespace tessera::onnx {
namespace {

using namespace testing;  // NOLINT
using ir::AttrType;
using ir::DataType;
using ir::Type;

const std::string kUnknown = "\x98\x06\x05";  // field 99, varint 5

// 20,000 floats (80 KB): above the size save_model writes from the buffer.
ir::Tensor big(std::string name, float seed, int64_t n = 20000) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = seed + 0.25f * static_cast<float>(i);
  return ir::make_tensor(std::move(name), DataType::kFloat, {n}, v);
}

ir::Tensor small(std::string name) {
  return ir::make_tensor<float>(std::move(name), DataType::kFloat, {2}, {1.f, 2.f});
}

ir::SparseTensor sparse(float seed) {
  ir::SparseTensor s;
  s.values = big("sv", seed);
  std::vector<int64_t> idx(20000);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(2 * i);
  s.indices = ir::make_tensor<int64_t>("", DataType::kInt64, {20000}, idx);
  s.dims = {40000};
  return s;
}

ir::Node constant(const std::string& out, ir::Tensor value) {
  ir::Node n;
  n.name = out;
  n.op_type = "Constant";
  n.outputs = {out};
  n.attributes.push_back(ir::Attribute::of_tensor("value", std::move(value)));
  return n;
}

ir::Graph body(const std::string& name, float seed) {
  ir::Graph g;
  g.name = name;
  g.add_node(constant(name + "_c", big("", seed)));
  g.initializers.push_back(big(name + "_w", seed + 1));
  g.initializers.push_back(small(name + "_s"));
  g.outputs.push_back({name + "_c", Type::tensor(DataType::kFloat), "", {}});
  return g;
}

// Large and small tensors everywhere a tensor can sit.
ir::Model model_with_tensors_everywhere() {
  ir::Model m;
  m.ir_version = 10;
  m.opset_imports = {{"", 21}, {"local", 1}};
  m.producer_name = "tessera-test";
  m.metadata_props = {{"k", "v"}};
  m.unknown_fields = kUnknown;
  ir::Graph& g = m.graph;
  g.name = "main";
  g.doc_string = "graph doc";
  ir::Tensor w = big("w", 0.5f);
  w.doc_string = "after raw_data";  // field 12: written after the raw_data (9)
  w.metadata_props = {{"a", "b"}};
  w.unknown_fields = kUnknown;
  g.initializers = {small("s0"), w, small("s1"), big("w2", -3.f)};
  g.sparse_initializers = {sparse(7.f)};
  g.add_node(constant("c", big("", 2.f)));
  ir::Node n;
  n.name = "custom";
  n.op_type = "Custom";
  n.domain = "local";
  n.inputs = {"c"};
  n.outputs = {"y"};
  n.unknown_fields = kUnknown;
  ir::Attribute ts;
  ts.name = "ts";
  ts.type = AttrType::kTensors;
  ts.tensors = {small("t0"), big("t1", 4.f)};
  n.attributes.push_back(ts);
  n.attributes.push_back(ir::Attribute::of_graph("g", body("then", 5.f)));
  ir::Attribute gs;
  gs.name = "gs";
  gs.type = AttrType::kGraphs;
  gs.graphs = {body("g1", 6.f), body("g2", 8.f)};
  n.attributes.push_back(gs);
  ir::Attribute sp;
  sp.name = "sp";
  sp.type = AttrType::kSparseTensor;
  sp.sparse_tensors = {sparse(9.f)};
  n.attributes.push_back(sp);
  n.attributes.push_back(ir::Attribute::of_int("i", 3));
  g.add_node(n);
  g.outputs.push_back({"y", Type::tensor(DataType::kFloat), "", {}});

  ir::Function f;
  f.name = "F";
  f.domain = "local";
  f.attribute_defaults = {ir::Attribute::of_tensor("bias", big("", 10.f))};
  f.opset_imports = {{"", 21}};
  f.body.outputs.push_back({"fy", {}, "", {}});
  f.body.add_node(constant("fy", big("", 11.f)));
  m.functions.push_back(f);
  return m;
}

// The proto with every tensor's bytes copied in, as saving worked before streaming.
class CopyPlacer final : public detail::TensorPlacer {
 public:
  void place(const ir::Tensor& t, onnx_pb::TensorProto* p) override {
    p->set_raw_data(t.bytes().data(), t.bytes().size());
  }
};

// Leaves out the bytes of every tensor of at least `min_bytes`, for StreamedModel to write.
class DeferPlacer final : public detail::TensorPlacer {
 public:
  explicit DeferPlacer(size_t min_bytes) : min_(min_bytes) {}
  void place(const ir::Tensor& t, onnx_pb::TensorProto* p) override {
    if (t.bytes().size() >= min_) {
      deferred.emplace(p, t.bytes());
    } else {
      p->set_raw_data(t.bytes().data(), t.bytes().size());
    }
  }
  detail::DeferredBytes deferred;

 private:
  size_t min_;
};

std::string protobuf_bytes(const ir::Model& m) {
  CopyPlacer placer;
  onnx_pb::ModelProto proto;
  detail::model_to_proto(m, &proto, placer);
  return proto.SerializeAsString();
}

std::string streamed_bytes(const ir::Model& m, size_t min_bytes, size_t block) {
  DeferPlacer placer(min_bytes);
  onnx_pb::ModelProto proto;
  detail::model_to_proto(m, &proto, placer);
  detail::StreamedModel streamed(proto, placer.deferred);
  std::string out;
  streamed.write(
      [&](std::span<const std::byte> b) { out.append(reinterpret_cast<const char*>(b.data()), b.size()); },
      block);
  EXPECT_EQ(out.size(), streamed.size());
  return out;
}

TEST(SaveStream, SameBytesAsProtobufWhereverTheTensorsAre) {
  ir::Model m = model_with_tensors_everywhere();
  std::string want = protobuf_bytes(m);
  // Every tensor deferred (empty ones too), only the large ones, none; blocks small and large.
  for (size_t min_bytes : {size_t{0}, size_t{64} << 10, size_t{1} << 30}) {
    for (size_t block : {size_t{16}, size_t{4096}, size_t{4} << 20}) {
      SCOPED_TRACE(::testing::Message() << "min_bytes " << min_bytes << " block " << block);
      EXPECT_TRUE(streamed_bytes(m, min_bytes, block) == want);
    }
  }
}

TEST(SaveStream, SerializeAndSaveGiveProtobufsBytesAndLoadBack) {
  ir::Model m = model_with_tensors_everywhere();
  std::string want = protobuf_bytes(m);
  EXPECT_TRUE(serialize_model(m) == want);
  TempDir dir;
  save_model(m, dir / "m.onnx");
  EXPECT_TRUE(read_file(dir / "m.onnx") == want);
  ir::Model back = load_model(dir / "m.onnx");
  EXPECT_TRUE(back == m);
}

TEST(SaveStream, LargeTensorsOfALoadedModelAreWrittenFromTheMapping) {
  // Loading leaves initializers' raw_data in the file's mapping; saving that model elsewhere writes
  // from the mapping, and the copy loads back equal.
  ir::Model m = model_with_tensors_everywhere();
  TempDir dir;
  save_model(m, dir / "a.onnx");
  ir::Model loaded = load_model(dir / "a.onnx");
  save_model(loaded, dir / "b.onnx");
  EXPECT_TRUE(read_file(dir / "b.onnx") == read_file(dir / "a.onnx"));
}

TEST(SaveStream, ADeferredTensorOutsideTheModelIsAnInternalError) {
  onnx_pb::ModelProto proto = minimal_proto();
  onnx_pb::TensorProto stray;
  std::vector<std::byte> bytes(8);
  detail::DeferredBytes deferred{{&stray, std::span<const std::byte>(bytes)}};
  try {
    detail::StreamedModel streamed(proto, deferred);
    FAIL() << "no error";
  } catch (const SaveError& e) {
    EXPECT_NE(std::string(e.what()).find("1 of 1 deferred tensors are not in the model"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera::onnx
