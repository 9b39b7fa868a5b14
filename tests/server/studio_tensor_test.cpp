// The tensor editor's side of the server: windows of float16, bfloat16, 4-bit and float8 tensors over
// the editor's whole-tensor limit, edited in place (initializers and tensor attributes); NaN and
// infinities typed in a cell, sent as the strings "nan", "inf" and "-inf", stored as such and read back
// the same; an initializer deleted with its readers in subgraphs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "runtime/half.h"
#include "server/studio_fixture.h"

namespace {

using namespace tessera_studio_test;
using tessera::ir::DataType;
using tessera::ir::Tensor;

Tensor bits_tensor(const std::string& name, DataType dtype, std::vector<int64_t> dims, std::string bytes) {
  Tensor t;
  t.name = name;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.data = tessera::ir::make_buffer(std::move(bytes));
  return t;
}

class StudioTensors : public Studio {
 protected:
  // "wide": float16 [300, 400] (120,000 elements, over the editor's 65,536), element i = i % 2048;
  // "brain": bfloat16 [5], "nib": int4 [7] (-3..3), "u": uint4 [3], "f": float [4].
  void make_model() {
    tessera::ir::Model m = relu_model();
    std::string half(2 * 120000, '\0');
    for (size_t i = 0; i < 120000; ++i) {
      uint16_t b = tessera::rt::float_to_half_bits(static_cast<float>(i % 2048));
      std::memcpy(half.data() + 2 * i, &b, 2);
    }
    m.graph.initializers.push_back(bits_tensor("wide", DataType::kFloat16, {300, 400}, half));
    std::string bf(10, '\0');
    for (int i = 0; i < 5; ++i) {
      uint16_t b = tessera::rt::float_to_bf16_bits(0.5f * static_cast<float>(i));
      std::memcpy(bf.data() + 2 * i, &b, 2);
    }
    m.graph.initializers.push_back(bits_tensor("brain", DataType::kBFloat16, {5}, bf));
    // int4 -3..3, low nibble first: (-3, -2), (-1, 0), (1, 2), (3, pad)
    m.graph.initializers.push_back(
        bits_tensor("nib", DataType::kInt4, {7}, std::string("\xed\x0f\x21\x03", 4)));
    m.graph.initializers.push_back(bits_tensor("u", DataType::kUint4, {3}, std::string("\x21\x0f", 2)));
    m.graph.initializers.push_back(
        tessera::ir::make_tensor<float>("f", DataType::kFloat, {4}, std::vector<float>{1, 2, 3, 4}));
    tessera::onnx::save_model(m, root_ / "t.onnx");
  }
  std::string at(const std::string& id, const std::string& name) {
    return "/api/documents/" + id + "/initializers/" + name;
  }
  std::pair<int, json> set(const std::string& id, const std::string& name, int64_t offset, const char* dtype,
                           json values) {
    return post("/api/documents/" + id + "/commands", json{{"command",
                                                            {{"type", "set_initializer_values"},
                                                             {"name", name},
                                                             {"offset", offset},
                                                             {"dtype", dtype},
                                                             {"values", std::move(values)}}}});
  }
};

TEST_F(StudioTensors, Float16OverTheEditLimitIsPagedAndEditedInPlace) {
  make_model();
  start();
  std::string id = open("t.onnx");
  auto [s1, win] = get(at(id, "wide") + "?offset=398&limit=3&rows=2&stride=400");
  ASSERT_EQ(s1, 200) << win.dump();
  EXPECT_EQ(win["dtype"], "float16");
  EXPECT_EQ(win["values"], json({398.0, 399.0, 400.0, 798.0, 799.0, 800.0}));

  auto [s2, a2] = set(id, "wide", 399, "float16", {0.1, "nan", "-inf", 65504});
  ASSERT_EQ(s2, 200) << a2.dump();
  json after = get(at(id, "wide") + "?offset=398&limit=6").second["values"];
  EXPECT_EQ(after[0], 398.0);
  EXPECT_EQ(after[1], static_cast<double>(tessera::rt::half_bits_to_float(0x2e66)));  // 0.1 rounded
  EXPECT_EQ(after[2], "nan");
  EXPECT_EQ(after[3], "-inf");
  EXPECT_EQ(after[4], 65504.0);
  EXPECT_EQ(after[5], 403.0);

  auto [s3, a3] = set(id, "wide", 0, "float16", {70000});
  EXPECT_EQ(s3, 400);
  EXPECT_NE(error_of(a3).find("(70000) is out of range for float16 (largest finite 65504)"),
            std::string::npos)
      << a3.dump();
  auto [s4, a4] = set(id, "wide", 0, "float16", {"many"});
  EXPECT_EQ(s4, 400);
  EXPECT_NE(error_of(a4).find("must be a number, \"nan\", \"inf\" or \"-inf\""), std::string::npos)
      << a4.dump();

  ASSERT_EQ(post("/api/documents/" + id + "/undo", std::string()).first, 200);
  EXPECT_EQ(get(at(id, "wide") + "?offset=398&limit=6").second["values"],
            json({398.0, 399.0, 400.0, 401.0, 402.0, 403.0}));
  ASSERT_EQ(post("/api/documents/" + id + "/redo", std::string()).first, 200);
  ASSERT_EQ(post("/api/documents/" + id + "/save", json::object()).first, 200);
  tessera::ir::Model back = tessera::onnx::load_model(root_ / "t.onnx");
  const Tensor* t = back.graph.find_initializer("wide");
  ASSERT_NE(t, nullptr);
  uint16_t bits[4];
  std::memcpy(bits, t->bytes().data() + 2 * 399, sizeof bits);
  EXPECT_EQ(bits[0], 0x2e66);
  EXPECT_TRUE(std::isnan(tessera::rt::half_bits_to_float(bits[1])));
  EXPECT_EQ(bits[2], 0xfc00);
  EXPECT_EQ(bits[3], 0x7bff);
}

TEST_F(StudioTensors, BFloat16AndFourBitTensorsAreReadAndWrittenByElement) {
  make_model();
  start();
  std::string id = open("t.onnx");
  EXPECT_EQ(get(at(id, "brain")).second["values"], json({0.0, 0.5, 1.0, 1.5, 2.0}));
  EXPECT_EQ(get(at(id, "nib")).second["values"], json({-3, -2, -1, 0, 1, 2, 3}));
  EXPECT_EQ(get(at(id, "nib") + "?offset=3&limit=2").second["values"], json({0, 1}));
  EXPECT_EQ(get(at(id, "u")).second["values"], json({1, 2, 15}));

  ASSERT_EQ(set(id, "brain", 1, "bfloat16", {"inf", -3.0}).first, 200);
  EXPECT_EQ(get(at(id, "brain")).second["values"], json({0.0, "inf", -3.0, 1.5, 2.0}));
  // Odd offsets write one nibble of a byte, leaving its neighbour.
  ASSERT_EQ(set(id, "nib", 3, "int4", {-8, 7, -5}).first, 200);
  EXPECT_EQ(get(at(id, "nib")).second["values"], json({-3, -2, -1, -8, 7, -5, 3}));
  auto [s1, a1] = set(id, "nib", 0, "int4", {8});
  EXPECT_EQ(s1, 400);
  EXPECT_NE(error_of(a1).find("(8) is out of range for int4 [-8, 7]"), std::string::npos) << a1.dump();
  auto [s2, a2] = set(id, "u", 2, "uint4", {3, 4});
  EXPECT_EQ(s2, 409);
  EXPECT_EQ(error_of(a2), "values [2, 4) lie outside initializer 'u', which has 3 elements");
  ASSERT_EQ(set(id, "u", 2, "uint4", {4}).first, 200);
  EXPECT_EQ(get(at(id, "u")).second["values"], json({1, 2, 4}));

  // Generated fills of the 16-bit floats: zeros, and the float32 draw of standard normal values rounded.
  auto [s3, a3] =
      post("/api/documents/" + id + "/commands", json{{"command",
                                                       {{"type", "add_initializer"},
                                                        {"tensor",
                                                         {{"name", "gen"},
                                                          {"dtype", "float16"},
                                                          {"shape", {2, 3}},
                                                          {"fill", {{"kind", "normal"}, {"seed", 1}}}}}}}});
  ASSERT_EQ(s3, 200) << a3.dump();
  json drawn = get(at(id, "gen")).second["values"];
  ASSERT_EQ(drawn.size(), 6u);
  for (const json& v : drawn) EXPECT_TRUE(v.is_number() && v > -8.0 && v < 8.0 && v != 0.0) << v;
  ASSERT_EQ(post("/api/documents/" + id + "/undo", std::string()).first, 200);

  for (int i = 0; i < 3; ++i) ASSERT_EQ(post("/api/documents/" + id + "/undo", std::string()).first, 200);
  EXPECT_EQ(get(at(id, "nib")).second["values"], json({-3, -2, -1, 0, 1, 2, 3}));
  EXPECT_EQ(get(at(id, "u")).second["values"], json({1, 2, 15}));
  EXPECT_EQ(get(at(id, "brain")).second["values"], json({0.0, 0.5, 1.0, 1.5, 2.0}));
}

// NaN and the infinities as the editor sends them (strings), in a whole tensor and in part: saved,
// loaded back, and shown as the same strings.
TEST_F(StudioTensors, NanAndInfinitiesRoundTripAsStrings) {
  make_model();
  start();
  std::string id = open("t.onnx");
  auto [s1, a1] =
      post("/api/documents/" + id + "/commands", json{{"command",
                                                       {{"type", "replace_initializer"},
                                                        {"tensor",
                                                         {{"name", "f"},
                                                          {"dtype", "float"},
                                                          {"shape", {4}},
                                                          {"values", {"nan", "inf", "-inf", 2.5}}}}}}});
  ASSERT_EQ(s1, 200) << a1.dump();
  EXPECT_EQ(get(at(id, "f")).second["values"], json({"nan", "inf", "-inf", 2.5}));
  ASSERT_EQ(set(id, "f", 3, "float", {"+Inf"}).first, 200);
  ASSERT_EQ(post("/api/documents/" + id + "/save", json::object()).first, 200);
  tessera::ir::Model back = tessera::onnx::load_model(root_ / "t.onnx");
  auto v = back.graph.find_initializer("f")->as<float>();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], INFINITY);
  EXPECT_EQ(v[2], -INFINITY);
  EXPECT_EQ(v[3], INFINITY);
  std::string id2 = open("t.onnx");
  EXPECT_EQ(get(at(id2, "f")).second["values"], json({"nan", "inf", "-inf", "inf"}));
}

// A tensor attribute larger than the graph answer sends (64 values), or with a NaN, is fetched for the
// tensor editor like an initializer window, the NaN as "nan".
TEST_F(StudioTensors, ATensorAttributeLeftOutOfTheGraphIsFetched) {
  tessera::ir::Model m = relu_model();
  std::vector<float> v(100);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  v[3] = NAN;
  tessera::ir::Node c;
  c.name = "table";
  c.op_type = "Constant";
  c.outputs = {"table_out"};
  c.attributes.push_back(tessera::ir::Attribute::of_tensor(
      "value", tessera::ir::make_tensor<float>("", DataType::kFloat, {10, 10}, v)));
  m.graph.add_node(std::move(c));
  tessera::onnx::save_model(m, root_ / "c.onnx");
  start();
  std::string id = open("c.onnx");
  json nodes = graph(id)["nodes"];
  auto it = std::find_if(nodes.begin(), nodes.end(), [](const json& n) { return n["name"] == "table"; });
  ASSERT_NE(it, nodes.end());
  EXPECT_FALSE((*it)["attributes"][0]["value"].contains("values"));
  std::string at =
      "/api/documents/" + id + "/nodes/" + std::to_string((*it)["id"].get<int64_t>()) + "/attributes/";
  auto [s, t] = get(at + "value?limit=100");
  ASSERT_EQ(s, 200) << t.dump();
  EXPECT_EQ(t["shape"], json({10, 10}));
  ASSERT_EQ(t["values"].size(), 100u);
  EXPECT_EQ(t["values"][3], "nan");
  EXPECT_EQ(t["values"][99], 99.0);
  auto [s2, e2] = get(at + "nope");
  EXPECT_EQ(s2, 404);
  EXPECT_EQ(error_of(e2), "node 'table' has no tensor attribute 'nope'");
}

// A Constant's value over the tensor editor's 65,536 elements: left out of the graph answer, read a page
// at a time and edited in place (set_attribute_values), one undo step per Apply; saved and loaded back.
TEST_F(StudioTensors, ALargeTensorAttributeIsPagedAndEditedInPlace) {
  tessera::ir::Model m = relu_model();
  std::vector<float> v(300 * 400);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000);
  tessera::ir::Node c;
  c.name = "table";
  c.op_type = "Constant";
  c.outputs = {"table_out"};
  c.attributes.push_back(tessera::ir::Attribute::of_tensor(
      "value", tessera::ir::make_tensor<float>("", DataType::kFloat, {300, 400}, v)));
  m.graph.add_node(std::move(c));
  tessera::onnx::save_model(m, root_ / "c.onnx");
  start();
  std::string id = open("c.onnx");
  json nodes = graph(id)["nodes"];
  auto it = std::find_if(nodes.begin(), nodes.end(), [](const json& n) { return n["name"] == "table"; });
  ASSERT_NE(it, nodes.end());
  const json& value = (*it)["attributes"][0]["value"];
  EXPECT_FALSE(value.contains("values") || value.contains("raw_base64"))
      << "the graph answer sent the tensor";
  EXPECT_EQ(value["shape"], json({300, 400}));
  int64_t node = (*it)["id"].get<int64_t>();
  std::string at = "/api/documents/" + id + "/nodes/" + std::to_string(node) + "/attributes/value";
  auto [s1, win] = get(at + "?offset=398&limit=3&rows=2&stride=400");
  ASSERT_EQ(s1, 200) << win.dump();
  EXPECT_EQ(win["values"], json({398.0, 399.0, 400.0, 798.0, 799.0, 800.0}));

  json batch{{"batch", "Edit value"},
             {"commands",
              {{{"type", "set_attribute_values"},
                {"node", node},
                {"name", "value"},
                {"offset", 399},
                {"dtype", "float"},
                {"values", {-1.5, "inf"}}},
               {{"type", "set_attribute_values"},
                {"node", node},
                {"name", "value"},
                {"offset", 799},
                {"dtype", "float"},
                {"values", {"nan"}}}}}};
  auto [s2, a2] = post("/api/documents/" + id + "/commands", batch);
  ASSERT_EQ(s2, 200) << a2.dump();
  EXPECT_EQ(a2["document"]["undo"], "Edit value");
  EXPECT_EQ(get(at + "?offset=398&limit=3&rows=2&stride=400").second["values"],
            json({398.0, -1.5, "inf", 798.0, "nan", 800.0}));

  auto [s3, a3] = post("/api/documents/" + id + "/commands", json{{"command",
                                                                   {{"type", "set_attribute_values"},
                                                                    {"node", node},
                                                                    {"name", "value"},
                                                                    {"offset", 119999},
                                                                    {"dtype", "float"},
                                                                    {"values", {1, 2}}}}});
  EXPECT_EQ(s3, 409) << a3.dump();
  EXPECT_EQ(
      error_of(a3),
      "values [119999, 120001) lie outside attribute 'value' of node 'table', which has 120000 elements");

  ASSERT_EQ(post("/api/documents/" + id + "/undo", std::string()).first, 200);
  EXPECT_EQ(get(at + "?offset=398&limit=3").second["values"], json({398.0, 399.0, 400.0}));
  ASSERT_EQ(post("/api/documents/" + id + "/redo", std::string()).first, 200);
  ASSERT_EQ(post("/api/documents/" + id + "/save", json::object()).first, 200);
  tessera::ir::Model back = tessera::onnx::load_model(root_ / "c.onnx");
  const tessera::ir::Attribute* a = back.graph.find_node("table")->attr("value");
  ASSERT_NE(a, nullptr);
  std::span<const float> f = a->tensors[0].as<float>();
  EXPECT_EQ(f[398], 398.0f);
  EXPECT_EQ(f[399], -1.5f);
  EXPECT_TRUE(std::isinf(f[400]));
  EXPECT_TRUE(std::isnan(f[799]));
  EXPECT_EQ(f[119999], 999.0f);
}

// float8 initializers: read as numbers (window and preview), created from values and zeros, edited in
// part with rounding and saturation; float4e2m1 likewise, packed two to a byte.
TEST_F(StudioTensors, Float8AndFloat4TensorsAreReadCreatedAndEdited) {
  tessera::ir::Model m = relu_model();
  // float8e4m3fn codes 0x38 (1.0), 0x7e (448), 0xff (NaN), 0x01 (2^-9)
  m.graph.initializers.push_back(
      bits_tensor("e4", DataType::kFloat8E4M3FN, {4}, std::string("\x38\x7e\xff\x01", 4)));
  tessera::onnx::save_model(m, root_ / "f8.onnx");
  start();
  std::string id = open("f8.onnx");
  EXPECT_EQ(get(at(id, "e4")).second["values"], json({1.0, 448.0, "nan", 0.001953125}));
  auto [s1, a1] = set(id, "e4", 0, "float8e4m3fn", {0.3, 1000, -0.0});
  ASSERT_EQ(s1, 200) << a1.dump();
  EXPECT_EQ(get(at(id, "e4")).second["values"], json({0.3125, 448.0, -0.0, 0.001953125}));
  auto add = [&](json tensor) {
    return post("/api/documents/" + id + "/commands",
                json{{"command", {{"type", "add_initializer"}, {"tensor", std::move(tensor)}}}});
  };
  auto [s2, a2] =
      add({{"name", "e5"}, {"dtype", "float8e5m2"}, {"shape", {3}}, {"values", {"-inf", 1e9, 0.1}}});
  ASSERT_EQ(s2, 200) << a2.dump();
  EXPECT_EQ(get(at(id, "e5")).second["values"], json({"-inf", 57344.0, 0.09375}));
  auto [s3, a3] =
      add({{"name", "q"}, {"dtype", "float4e2m1"}, {"shape", {2, 3}}, {"fill", {{"kind", "zeros"}}}});
  ASSERT_EQ(s3, 200) << a3.dump();
  ASSERT_EQ(set(id, "q", 1, "float4e2m1", {2.5, -7}).first, 200);
  EXPECT_EQ(get(at(id, "q")).second["values"], json({0.0, 2.0, -6.0, 0.0, 0.0, 0.0}));
  auto [s4, a4] = set(id, "q", 0, "float4e2m1", {"nan"});
  EXPECT_EQ(s4, 400);
  EXPECT_NE(error_of(a4).find("'values'[0] is NaN; float4e2m1 has no NaN"), std::string::npos) << a4.dump();
  auto [s5, a5] =
      add({{"name", "n"}, {"dtype", "float8e4m3fnuz"}, {"shape", {2}}, {"fill", {{"kind", "normal"}}}});
  EXPECT_EQ(s5, 400);
  EXPECT_NE(error_of(a5).find("'normal' cannot fill a tensor of type float8e4m3fnuz"), std::string::npos)
      << a5.dump();
  ASSERT_EQ(post("/api/documents/" + id + "/save", json::object()).first, 200);
  tessera::ir::Model back = tessera::onnx::load_model(root_ / "f8.onnx");
  auto code = [&](const char* name, size_t i) {
    return static_cast<unsigned>(back.graph.find_initializer(name)->bytes()[i]);
  };
  EXPECT_EQ(code("e4", 0), 0x2au);  // 0.3125 = 1.25 * 2^-2: exponent 5, mantissa 2
  EXPECT_EQ(code("e4", 1), 0x7eu);
  EXPECT_EQ(code("e4", 2), 0x80u);
  EXPECT_EQ(code("e5", 0), 0xfcu);
  EXPECT_EQ(code("q", 0), 0x40u);  // (0, 2.0): low nibble 0, high nibble 0x4
  EXPECT_EQ(code("q", 1), 0x0fu);  // (-6, 0)
}

// float8e8m0 over HTTP: read as powers of two, written as Cast's defaults round ("up", saturating),
// zero and negative values refused naming the element, a paged window read as numbers.
TEST_F(StudioTensors, E8M0TensorsAreReadCreatedAndEdited) {
  tessera::ir::Model m = relu_model();
  // codes 0x7f (1), 0x00 (2^-127), 0xfe (2^127), 0xff (NaN)
  m.graph.initializers.push_back(
      bits_tensor("s", DataType::kFloat8E8M0, {4}, std::string("\x7f\x00\xfe\xff", 4)));
  tessera::onnx::save_model(m, root_ / "e.onnx");
  start();
  std::string id = open("e.onnx");
  EXPECT_EQ(get(at(id, "s")).second["values"], json({1.0, 0x1p-127, 0x1p127, "nan"}));
  EXPECT_EQ(get(at(id, "s") + "?offset=1&limit=2").second["values"], json({0x1p-127, 0x1p127}));
  auto [s1, a1] = set(id, "s", 0, "float8e8m0", {3, 1e-45, "inf"});
  ASSERT_EQ(s1, 200) << a1.dump();
  EXPECT_EQ(get(at(id, "s")).second["values"], json({4.0, 0x1p-127, 0x1p127, "nan"}));
  auto [s2, a2] = set(id, "s", 1, "float8e8m0", {2, 0});
  EXPECT_EQ(s2, 400);
  EXPECT_NE(error_of(a2).find("'values'[1] is 0; float8e8m0 has no zero"), std::string::npos) << a2.dump();
  auto [s3, a3] = set(id, "s", 0, "float8e8m0", {-1});
  EXPECT_EQ(s3, 400);
  EXPECT_NE(error_of(a3).find("'values'[0] (-1) is negative; float8e8m0 has no sign"), std::string::npos)
      << a3.dump();
  ASSERT_EQ(post("/api/documents/" + id + "/save", json::object()).first, 200);
  tessera::ir::Model back = tessera::onnx::load_model(root_ / "e.onnx");
  std::span<const std::byte> b = back.graph.find_initializer("s")->bytes();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data()), b.size()),
            std::string("\x81\x00\xfe\xff", 4));
}

// reshape_initializer over HTTP: a reader's type changes and the checker says so in the answer; one undo
// restores the tensor and clears the diagnostic; a bad shape is refused naming the initializer.
TEST_F(StudioTensors, ReshapingAnInitializerReChecksItsReadersAndUndoesInOneStep) {
  tessera::ir::Model m = relu_model();
  m.graph.initializers.push_back(
      tessera::ir::make_tensor<float>("k", DataType::kFloat, {4}, std::vector<float>{1, 2, 3, 4}));
  std::string r = m.graph.nodes[0].outputs[0];
  tessera::ir::Node add;
  add.name = "add_k";
  add.op_type = "Add";
  add.inputs = {r, "k"};
  add.outputs = {"added"};
  m.graph.add_node(std::move(add));
  m.graph.outputs.push_back(tessera::ir::ValueInfo{"added", {}, {}, {}});
  tessera::onnx::save_model(m, root_ / "r.onnx");
  start();
  std::string id = open("r.onnx");
  auto reshape = [&](json shape) {
    return post(
        "/api/documents/" + id + "/commands",
        json{{"command", {{"type", "reshape_initializer"}, {"name", "k"}, {"shape", std::move(shape)}}}});
  };
  auto [s1, a1] = reshape({2, 2});  // [N, 4] + [2, 2]: no longer broadcasts
  ASSERT_EQ(s1, 200) << a1.dump();
  EXPECT_EQ(a1["document"]["undo"], "Reshape initializer 'k' to [2, 2]");
  EXPECT_NE(a1["diagnostics"].dump().find("add_k"), std::string::npos) << a1["diagnostics"].dump();
  auto [s2, a2] = reshape({6});
  ASSERT_EQ(s2, 200) << a2.dump();
  json got = get(at(id, "k")).second;
  EXPECT_EQ(got["shape"], json({6}));
  EXPECT_EQ(got["values"], json({1.0, 2.0, 3.0, 4.0, 0.0, 0.0}));
  auto [s3, a3] = reshape({2, -1});
  EXPECT_EQ(s3, 409) << a3.dump();
  EXPECT_EQ(error_of(a3),
            "initializer 'k': dimension 1 of the new shape [2, -1] is -1; dimensions are 0 or more");
  ASSERT_EQ(post("/api/documents/" + id + "/undo", std::string()).first, 200);
  auto [s4, a4] = post("/api/documents/" + id + "/undo", std::string());
  ASSERT_EQ(s4, 200) << a4.dump();
  EXPECT_EQ(get(at(id, "k")).second["values"], json({1.0, 2.0, 3.0, 4.0}));
  EXPECT_EQ(a4["diagnostics"].size(), 0u) << a4["diagnostics"].dump();
}

// A graph output naming the initializer: delete_initializer is refused naming the output, and the
// document is unchanged (nothing to undo).
TEST_F(StudioTensors, DeletingAnInitializerAGraphOutputNamesIsRefused) {
  tessera::ir::Model m = nested_model();
  m.graph.outputs.push_back(tessera::ir::ValueInfo{"trips", {}, {}, {}});
  tessera::onnx::save_model(m, root_ / "n.onnx");
  start();
  std::string id = open("n.onnx");
  auto [s, a] = post("/api/documents/" + id + "/commands",
                     json{{"command", {{"type", "delete_initializer"}, {"name", "trips"}}}});
  EXPECT_EQ(s, 409) << a.dump();
  EXPECT_NE(error_of(a).find("initializer 'trips' is returned by output 1 of graph 'main'"),
            std::string::npos)
      << a.dump();
  EXPECT_NE(get(at(id, "trips")).first, 404);
  EXPECT_EQ(post("/api/documents/" + id + "/undo", std::string()).first, 409);
}

// delete_initializer over HTTP: the Loop that reads it in the main graph and a node of its body that
// reads it from the outer scope are disconnected; one undo restores both.
TEST_F(StudioTensors, DeletingAnInitializerDisconnectsItsReadersInSubgraphs) {
  tessera::ir::Model m = nested_model();
  tessera::ir::Graph& body = *m.graph.find_node("loop")->attr("body")->graphs[0];
  tessera::ir::Node count;
  count.name = "count";
  count.op_type = "Identity";
  count.inputs = {"trips"};
  count.outputs = {"counted"};
  body.add_node(std::move(count));
  tessera::onnx::save_model(m, root_ / "n.onnx");
  start();
  std::string id = open("n.onnx");
  auto [s, a] = post("/api/documents/" + id + "/commands",
                     json{{"command", {{"type", "delete_initializer"}, {"name", "trips"}}}});
  ASSERT_EQ(s, 200) << a.dump();
  EXPECT_EQ(a["document"]["undo"], "Delete initializer 'trips'");
  auto saved = [&]() {
    EXPECT_EQ(post("/api/documents/" + id + "/save", json::object()).first, 200);
    return tessera::onnx::load_model(root_ / "n.onnx");
  };
  tessera::ir::Model after = saved();
  EXPECT_EQ(after.graph.find_initializer("trips"), nullptr);
  EXPECT_EQ(after.graph.find_node("loop")->inputs,
            (std::vector<std::string>{"", "go", after.graph.nodes[0].outputs[0]}));
  tessera::ir::Graph& b2 = *after.graph.find_node("loop")->attr("body")->graphs[0];
  EXPECT_EQ(b2.find_node("count")->inputs, std::vector<std::string>{});
  ASSERT_EQ(post("/api/documents/" + id + "/undo", std::string()).first, 200);
  tessera::ir::Model undone = saved();
  EXPECT_NE(undone.graph.find_initializer("trips"), nullptr);
  EXPECT_EQ(undone.graph.find_node("loop")->inputs[0], "trips");
  EXPECT_EQ((*undone.graph.find_node("loop")->attr("body")->graphs[0]).find_node("count")->inputs,
            std::vector<std::string>{"trips"});
}

}  // namespace

namespace {

// A subgraph's tab lists the initializers of the graphs around it (it reads them like its own): the
// Loop body of nested_model sees the main graph's 'trips' and 'go', with the main graph's path; the main
// graph and a function body see none; values never travel.
TEST_F(StudioTensors, ASubgraphListsTheInitializersItSeesFromOuterScopes) {
  tessera::onnx::save_model(nested_model(), root_ / "n.onnx");
  start();
  std::string id = open("n.onnx");
  json nodes = graph(id)["nodes"];
  auto loop = std::find_if(nodes.begin(), nodes.end(), [](const json& n) { return n["name"] == "loop"; });
  ASSERT_NE(loop, nodes.end());
  json body{{"steps", {{{"node", (*loop)["id"]}, {"attribute", "body"}, {"index", 0}}}}};
  auto encoded = [](const std::string& s) {
    std::string out;
    for (unsigned char c : s)
      out += std::isalnum(c) ? std::string(1, static_cast<char>(c)) : fmt::format("%{:02X}", c);
    return out;
  };
  std::string list = "/api/documents/" + id + "/initializers";
  auto [s1, a1] = get(list + "?path=" + encoded(body.dump()));
  ASSERT_EQ(s1, 200) << a1.dump();
  json main_path{{"steps", json::array()}};
  EXPECT_EQ(a1["initializers"], json({{{"name", "trips"},
                                       {"dtype", "int64"},
                                       {"shape", json::array()},
                                       {"bytes", 8},
                                       {"path", main_path}},
                                      {{"name", "go"},
                                       {"dtype", "bool"},
                                       {"shape", json::array()},
                                       {"bytes", 1},
                                       {"path", main_path}}}));
  EXPECT_EQ(get(list).second["initializers"], json::array());
  EXPECT_EQ(get(list + "?path=" + encoded(R"({"function": {"domain": "custom", "name": "Twice"}})"))
                .second["initializers"],
            json::array());
  json missing{{"steps", {{{"node", 999}, {"attribute", "body"}, {"index", 0}}}}};
  EXPECT_EQ(get(list + "?path=" + encoded(missing.dump())).first, 404);
}

}  // namespace
