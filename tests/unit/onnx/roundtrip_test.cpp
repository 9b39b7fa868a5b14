// Loading and saving keep every field: a model that uses all of them survives save -> load unchanged,
// and every typed data field of TensorProto is read into the same dense bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>

#include "onnx_test_util.h"

namespace tessera::onnx {
namespace {

using namespace testing;  // NOLINT
using ir::AttrType;
using ir::DataType;
using ir::Dim;
using ir::Type;
using ::testing::HasSubstr;

// Field 99, varint 5: a field from some future IR, which must travel through untouched.
const std::string kUnknown = "\x98\x06\x05";

ir::Tensor float_tensor(std::string name, std::vector<int64_t> dims, std::vector<float> v) {
  return ir::make_tensor(std::move(name), DataType::kFloat, std::move(dims), v);
}

ir::Graph small_graph(const std::string& name) {
  ir::Graph g;
  g.name = name;
  ir::Node n;
  n.op_type = "Identity";
  n.inputs = {"a"};
  n.outputs = {"b"};
  g.add_node(n);
  g.initializers.push_back(float_tensor("a", {1}, {3.f}));
  g.outputs.push_back({"b", Type::tensor(DataType::kFloat, ir::Shape{}), "", {}});
  return g;
}

ir::SparseTensor sparse_tensor() {
  ir::SparseTensor s;
  s.values = float_tensor("sp", {2}, {1.f, 2.f});
  s.indices = ir::make_tensor<int64_t>("", DataType::kInt64, {2}, {1, 5});
  s.dims = {2, 4};
  return s;
}

ir::Node node_with_every_attribute() {
  ir::Node n;
  n.name = "every";
  n.op_type = "Custom";
  n.domain = "com.example";
  n.overload = "v2";
  n.inputs = {"x", "", "z"};
  n.outputs = {"y"};
  n.doc_string = "node doc";
  n.metadata_props = {{"k", "v"}};
  n.device_configurations = {std::string("\x0a\x01x", 3)};
  n.unknown_fields = kUnknown;
  auto& a = n.attributes;
  a.push_back(ir::Attribute::of_float("f", -0.0f));
  a.push_back(ir::Attribute::of_float("nan", std::numeric_limits<float>::quiet_NaN()));
  a.push_back(ir::Attribute::of_int("i", -7));
  a.push_back(ir::Attribute::of_string("s", std::string("bin\0ary", 7)));
  a.push_back(ir::Attribute::of_floats("fs", {1.5f, 2.5f}));
  a.push_back(ir::Attribute::of_ints("is", {1, -2, 3}));
  a.push_back(ir::Attribute::of_strings("ss", {"a", "", "c"}));
  a.push_back(ir::Attribute::of_tensor("t", float_tensor("", {2}, {4.f, 5.f})));
  a.push_back(ir::Attribute::of_graph("g", small_graph("sub")));
  ir::Attribute ts;
  ts.name = "ts";
  ts.type = AttrType::kTensors;
  ts.tensors = {float_tensor("t1", {}, {1.f}), ir::make_tensor<int64_t>("t2", DataType::kInt64, {0}, {})};
  a.push_back(ts);
  ir::Attribute gs;
  gs.name = "gs";
  gs.type = AttrType::kGraphs;
  gs.graphs = {small_graph("g1"), small_graph("g2")};
  a.push_back(gs);
  ir::Attribute sp;
  sp.name = "sp";
  sp.type = AttrType::kSparseTensor;
  sp.sparse_tensors = {sparse_tensor()};
  a.push_back(sp);
  ir::Attribute sps = sp;
  sps.name = "sps";
  sps.type = AttrType::kSparseTensors;
  sps.sparse_tensors.push_back(sparse_tensor());
  a.push_back(sps);
  ir::Attribute tp;
  tp.name = "tp";
  tp.type = AttrType::kTypeProto;
  tp.types = {Type::sequence(Type::tensor(DataType::kFloat, ir::Shape{Dim::of(2)}))};
  a.push_back(tp);
  ir::Attribute tps;
  tps.name = "tps";
  tps.type = AttrType::kTypeProtos;
  tps.types = {Type::map(DataType::kString, Type::tensor(DataType::kInt64)),
               Type::optional(Type::tensor(DataType::kBool))};
  tps.doc_string = "types";
  tps.unknown_fields = kUnknown;
  a.push_back(tps);
  return n;
}

// Initializers with every storage peculiarity: sub-byte packing, strings, complex, empty, scalar.
std::vector<ir::Tensor> every_kind_of_tensor() {
  std::vector<ir::Tensor> ts;
  ts.push_back(float_tensor("f32", {2, 3}, {1, 2, 3, 4, 5, 6}));
  ts.push_back(ir::make_tensor<uint16_t>("f16", DataType::kFloat16, {2}, {0x3c00, 0xc000}));
  ts.push_back(ir::make_tensor<uint8_t>("i4", DataType::kInt4, {3}, {0x21, 0x03}));
  ts.push_back(ir::make_tensor<uint8_t>("u2", DataType::kUint2, {5}, {0xe4, 0x01}));
  ts.push_back(ir::make_tensor<float>("c64", DataType::kComplex64, {1}, {1.f, -1.f}));
  ts.push_back(ir::make_tensor<uint8_t>("b", DataType::kBool, {2}, {0, 1}));
  ts.push_back(ir::make_tensor<int64_t>("empty", DataType::kInt64, {0, 3}, {}));
  ts.push_back(ir::make_tensor<double>("scalar", DataType::kDouble, {}, {2.5}));
  ir::Tensor s;
  s.name = "str";
  s.dtype = DataType::kString;
  s.dims = {2};
  s.strings = {"hello", std::string("\0x", 2)};
  s.doc_string = "strings";
  s.metadata_props = {{"a", "b"}};
  s.segment = std::make_pair(int64_t{0}, int64_t{2});
  s.unknown_fields = kUnknown;
  ts.push_back(s);
  return ts;
}

ir::Model model_with_every_field() {
  ir::Model m;
  m.ir_version = 10;
  m.opset_imports = {{"", 21}, {"com.example", 1}};
  m.producer_name = "tessera-test";
  m.producer_version = "1.0";
  m.domain = "org.test";
  m.model_version = 3;
  m.doc_string = "model doc";
  m.metadata_props = {{"author", "me"}, {"license", "MIT"}};
  m.training_info = {std::string("\x0a\x00", 2)};
  m.configuration = {
      std::string("\x0a\x03"
                  "cfg",
                  5)};
  m.unknown_fields = kUnknown;

  ir::Graph& g = m.graph;
  g.name = "main";
  g.doc_string = "graph doc";
  g.add_node(node_with_every_attribute());
  ir::Node call;
  call.op_type = "MyFunc";
  call.domain = "com.example";
  call.inputs = {"y"};
  call.outputs = {"out"};
  g.add_node(call);
  g.initializers = every_kind_of_tensor();
  g.sparse_initializers = {sparse_tensor()};
  ir::Shape shape{Dim::of(1), Dim::symbol("batch"), Dim::unknown()};
  shape[0].denotation = "DATA_BATCH";
  g.inputs.push_back({"x", Type::tensor(DataType::kFloat, shape), "input doc", {{"m", "n"}}});
  Type denoted = Type::tensor(DataType::kUint8, ir::Shape{});
  denoted.denotation = "IMAGE";
  g.inputs.push_back({"z", denoted, "", {}});
  g.outputs.push_back({"out", Type::sparse_tensor(DataType::kFloat, ir::Shape{Dim::of(4)}), "", {}});
  g.value_info.push_back({"y", Type::tensor(DataType::kFloat), "", {}});  // rank unknown
  Type opaque;
  opaque.kind = Type::Kind::kOpaque;
  opaque.opaque_domain = "com.x";
  opaque.opaque_name = "Thing";
  g.value_info.push_back({"o", opaque, "", {}});
  Type none;
  none.denotation = "TEXT";
  g.value_info.push_back({"untyped", none, "", {}});
  g.value_info.push_back({"seq", Type::sequence(Type::tensor(DataType::kInt8)), "", {}});
  g.quantization_annotation = {std::string("\x0a\x01q", 3)};
  g.metadata_props = {{"gk", "gv"}};
  g.unknown_fields = kUnknown;

  ir::Function f;
  f.name = "MyFunc";
  f.domain = "com.example";
  f.overload = "";
  f.doc_string = "function doc";
  f.attributes = {"alpha"};
  f.attribute_defaults = {ir::Attribute::of_float("beta", 0.5f)};
  f.opset_imports = {{"", 21}};
  f.metadata_props = {{"fk", "fv"}};
  f.body.inputs.push_back({"fx", {}, "", {}});
  f.body.outputs.push_back({"fy", {}, "", {}});
  ir::Node fn;
  fn.op_type = "LeakyRelu";
  fn.inputs = {"fx"};
  fn.outputs = {"fy"};
  ir::Attribute ref;
  ref.name = "alpha";
  ref.type = AttrType::kFloat;
  ref.ref_attr_name = "alpha";
  fn.attributes.push_back(ref);
  f.body.add_node(fn);
  f.body.value_info.push_back({"fy", Type::tensor(DataType::kFloat), "", {}});
  f.unknown_fields = kUnknown;
  m.functions.push_back(f);
  return m;
}

TEST(OnnxRoundTrip, EveryFieldSurvivesSaveAndLoad) {
  TempDir dir;
  ir::Model m = model_with_every_field();
  save_model(m, dir / "m.onnx");
  ir::Model back = load_model(dir / "m.onnx");
  EXPECT_TRUE(back == m);
  EXPECT_EQ(back.base_dir, dir.path());
  // Field by field too, so that a failure says where.
  EXPECT_EQ(back.graph.nodes[0], m.graph.nodes[0]);
  for (size_t i = 0; i < m.graph.nodes[0].attributes.size(); ++i) {
    EXPECT_EQ(back.graph.nodes[0].attributes[i], m.graph.nodes[0].attributes[i])
        << m.graph.nodes[0].attributes[i].name;
  }
  EXPECT_EQ(back.graph.initializers, m.graph.initializers);
  EXPECT_EQ(back.graph.inputs, m.graph.inputs);
  EXPECT_EQ(back.graph.value_info, m.graph.value_info);
  EXPECT_EQ(back.functions, m.functions);
  EXPECT_EQ(back.graph.unknown_fields, kUnknown);
  EXPECT_EQ(back.graph.initializers.back().unknown_fields, kUnknown);
  // Node ids are fresh and distinct.
  EXPECT_NE(back.graph.nodes[0].id, back.graph.nodes[1].id);
}

TEST(OnnxRoundTrip, SerializeMatchesSavedFileAndLoadsFromMemory) {
  TempDir dir;
  ir::Model m = model_with_every_field();
  std::string bytes = serialize_model(m);
  save_model(m, dir / "m.onnx");
  EXPECT_EQ(read_file(dir / "m.onnx"), bytes);
  ir::Model back = load_model_from_memory(as_bytes(bytes));
  EXPECT_TRUE(back == m);
  EXPECT_TRUE(back.base_dir.empty());
}

TEST(OnnxRoundTrip, DimensionsWithValueParamOrNeither) {
  ir::Model m = model_with_every_field();
  ir::Model back = load_model_from_memory(as_bytes(serialize_model(m)));
  const ir::Shape& s = *back.graph.inputs[0].type.shape;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].value, 1);
  EXPECT_EQ(s[0].denotation, "DATA_BATCH");
  EXPECT_EQ(s[1].param, "batch");
  EXPECT_TRUE(s[2].is_unknown());
  EXPECT_FALSE(back.graph.value_info[0].type.has_shape());
  EXPECT_TRUE(back.graph.inputs[1].type.shape->empty());
}

TEST(OnnxRoundTrip, AiOnnxDomainIsNormalised) {
  auto p = minimal_proto();
  p.mutable_graph()->mutable_node(0)->set_domain("ai.onnx");
  p.mutable_opset_import(0)->set_domain("ai.onnx");
  std::string bytes = p.SerializeAsString();
  ir::Model m = load_model_from_memory(as_bytes(bytes));
  EXPECT_EQ(m.graph.nodes[0].domain, "");
  EXPECT_EQ(m.opset_imports[0].domain, "");
}

TEST(OnnxRoundTrip, LegacyAttributeWithoutTypeTakesItFromItsField) {
  auto p = minimal_proto();
  auto* a = p.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("axis");
  a->set_i(2);
  std::string bytes = p.SerializeAsString();
  ir::Model m = load_model_from_memory(as_bytes(bytes));
  ASSERT_EQ(m.graph.nodes[0].attributes.size(), 1u);
  EXPECT_EQ(m.graph.nodes[0].attributes[0].type, AttrType::kInt);
  EXPECT_EQ(m.graph.nodes[0].attributes[0].i, 2);
}

// --- typed data fields -------------------------------------------------------------------------

template <class T>
std::vector<std::byte> bytes_of(std::initializer_list<T> v) {
  std::vector<std::byte> out(v.size() * sizeof(T));
  std::memcpy(out.data(), std::data(v), out.size());
  return out;
}

struct TypedCase {
  std::string name;
  int32_t dtype;
  std::vector<int64_t> dims;
  std::function<void(onnx_pb::TensorProto*)> fill;
  std::vector<std::byte> expected;
};

std::vector<TypedCase> typed_cases() {
  return {
      {"float",
       1,
       {2},
       [](auto* t) { t->add_float_data(1.5f), t->add_float_data(-2.f); },
       bytes_of({1.5f, -2.f})},
      {"complex64",
       14,
       {1},
       [](auto* t) { t->add_float_data(1.f), t->add_float_data(2.f); },
       bytes_of({1.f, 2.f})},
      {"int32",
       6,
       {2},
       [](auto* t) { t->add_int32_data(-1), t->add_int32_data(7); },
       bytes_of<int32_t>({-1, 7})},
      {"int8",
       3,
       {2},
       [](auto* t) { t->add_int32_data(-1), t->add_int32_data(5); },
       bytes_of<int8_t>({-1, 5})},
      {"uint8", 2, {1}, [](auto* t) { t->add_int32_data(200); }, bytes_of<uint8_t>({200})},
      {"int16", 5, {1}, [](auto* t) { t->add_int32_data(-300); }, bytes_of<int16_t>({-300})},
      {"uint16", 4, {1}, [](auto* t) { t->add_int32_data(65535); }, bytes_of<uint16_t>({65535})},
      {"bool",
       9,
       {3},
       [](auto* t) { t->add_int32_data(0), t->add_int32_data(1), t->add_int32_data(1); },
       bytes_of<uint8_t>({0, 1, 1})},
      {"float16", 10, {1}, [](auto* t) { t->add_int32_data(0x3c00); }, bytes_of<uint16_t>({0x3c00})},
      {"bfloat16", 16, {1}, [](auto* t) { t->add_int32_data(0x3f80); }, bytes_of<uint16_t>({0x3f80})},
      {"float8e4m3fn", 17, {1}, [](auto* t) { t->add_int32_data(0x38); }, bytes_of<uint8_t>({0x38})},
      {"float8e8m0", 24, {1}, [](auto* t) { t->add_int32_data(0x7f); }, bytes_of<uint8_t>({0x7f})},
      // Sub-byte types: one packed byte per int32 entry, the first element in the low bits.
      {"int4",
       22,
       {3},
       [](auto* t) { t->add_int32_data(0x21), t->add_int32_data(0x03); },
       bytes_of<uint8_t>({0x21, 0x03})},
      {"uint4", 21, {2}, [](auto* t) { t->add_int32_data(0xf1); }, bytes_of<uint8_t>({0xf1})},
      {"float4e2m1", 23, {2}, [](auto* t) { t->add_int32_data(0x12); }, bytes_of<uint8_t>({0x12})},
      {"uint2",
       25,
       {5},
       [](auto* t) { t->add_int32_data(0xe4), t->add_int32_data(0x01); },
       bytes_of<uint8_t>({0xe4, 0x01})},
      {"int2", 26, {4}, [](auto* t) { t->add_int32_data(0x1b); }, bytes_of<uint8_t>({0x1b})},
      {"int64",
       7,
       {2},
       [](auto* t) { t->add_int64_data(-5), t->add_int64_data(1LL << 40); },
       bytes_of<int64_t>({-5, 1LL << 40})},
      {"double", 11, {1}, [](auto* t) { t->add_double_data(0.25); }, bytes_of({0.25})},
      {"complex128",
       15,
       {1},
       [](auto* t) { t->add_double_data(1), t->add_double_data(-1); },
       bytes_of({1.0, -1.0})},
      {"uint32",
       12,
       {1},
       [](auto* t) { t->add_uint64_data(4000000000u); },
       bytes_of<uint32_t>({4000000000u})},
      {"uint64", 13, {1}, [](auto* t) { t->add_uint64_data(~0ull); }, bytes_of<uint64_t>({~0ull})},
  };
}

TEST(OnnxTensorData, EveryTypedFieldBecomesDenseBytesAndSavesAsRawData) {
  for (const TypedCase& c : typed_cases()) {
    SCOPED_TRACE(c.name);
    auto p = minimal_proto();
    auto* t = p.mutable_graph()->add_initializer();
    t->set_name(c.name);
    t->set_data_type(c.dtype);
    for (int64_t d : c.dims) t->add_dims(d);
    c.fill(t);
    std::string bytes = p.SerializeAsString();
    ir::Model m = load_model_from_memory(as_bytes(bytes));
    ASSERT_EQ(m.graph.initializers.size(), 1u);
    auto got = m.graph.initializers[0].bytes();
    EXPECT_EQ(std::vector<std::byte>(got.begin(), got.end()), c.expected);

    onnx_pb::ModelProto saved;
    ASSERT_TRUE(saved.ParseFromString(serialize_model(m)));
    const auto& st = saved.graph().initializer(0);
    EXPECT_EQ(st.raw_data().size(), c.expected.size());
    EXPECT_EQ(st.float_data_size() + st.int32_data_size() + st.int64_data_size() + st.double_data_size() +
                  st.uint64_data_size(),
              0);
    EXPECT_TRUE(load_model_from_memory(as_bytes(saved.SerializeAsString())) == m);
  }
}

TEST(OnnxTensorData, StringsStayStrings) {
  auto p = minimal_proto();
  auto* t = p.mutable_graph()->add_initializer();
  t->set_name("s");
  t->set_data_type(8);
  t->add_dims(2);
  t->add_string_data("ab");
  t->add_string_data("");
  std::string bytes = p.SerializeAsString();
  ir::Model m = load_model_from_memory(as_bytes(bytes));
  EXPECT_EQ(m.graph.initializers[0].strings, (std::vector<std::string>{"ab", ""}));
  onnx_pb::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(m)));
  EXPECT_EQ(saved.graph().initializer(0).string_data_size(), 2);
}

TEST(OnnxTensorData, WrongFieldForTheTypeIsRefused) {
  auto p = minimal_proto();
  auto* t = p.mutable_graph()->add_initializer();
  t->set_name("x");
  t->set_data_type(7);  // int64
  t->add_dims(1);
  t->add_float_data(1.f);
  EXPECT_THAT(load_error(p), HasSubstr("tensor 'x': float_data cannot hold int64 values"));
}

TEST(OnnxTensorData, WrongCountIsRefused) {
  auto p = minimal_proto();
  auto* t = add_float_initializer(p, {2, 3});
  t->add_float_data(1.f);
  EXPECT_THAT(load_error(p),
              HasSubstr("tensor 'w': float_data has 1 values but shape [2,3] of float needs 6"));
}

TEST(OnnxTensorData, TwoDataFieldsAreRefused) {
  auto p = minimal_proto();
  auto* t = add_float_initializer(p, {1});
  t->add_float_data(1.f);
  t->set_raw_data(std::string(4, '\0'));
  EXPECT_THAT(load_error(p), HasSubstr("tensor 'w' has data in both raw_data and float_data"));
}

TEST(OnnxTensorData, RawDataSizeMustMatchTheShape) {
  auto p = minimal_proto();
  add_float_initializer(p, {2, 3})->set_raw_data(std::string(10, '\0'));
  EXPECT_THAT(load_error(p),
              HasSubstr("tensor 'w': raw_data has 10 bytes but shape [2,3] of float needs 24"));
}

TEST(OnnxTensorData, MissingDataIsRefused) {
  auto p = minimal_proto();
  add_float_initializer(p, {2});
  EXPECT_THAT(load_error(p), HasSubstr("tensor 'w' has no data but shape [2] of float needs 2 elements"));
}

}  // namespace
}  // namespace tessera::onnx
