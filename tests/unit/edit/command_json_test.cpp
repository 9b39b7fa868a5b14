// Commands, tensors and attributes through JSON (src/ir/commands/command_json.h, ir_json.h): every
// command class read from the API's spelling does exactly what the C++ command does, writes itself
// back to the same JSON, and bad input is refused with a message naming the field.
#include "ir/commands/command_json.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "edit_test_util.h"
#include "io/npy.h"

namespace tessera::ir::test {
namespace {

struct Case {
  std::unique_ptr<Command> cpp;
  json spelled;  // the same edit as a client of the API writes it
};

ValueInfo float_value(std::string name, Shape shape) {
  return ValueInfo{std::move(name), Type::tensor(DataType::kFloat, std::move(shape)), {}, {}};
}

std::vector<Case> every_command(const Model& m) {
  NodeId relu = id_of(m.graph, "relu");
  GraphPath then = then_path(m);
  json then_json{{"steps", {{{"node", id_of(m.graph, "if")}, {"attribute", "then_branch"}, {"index", 0}}}}};
  std::vector<Case> cases;
  auto add = [&](Command* c, json j) { cases.push_back({std::unique_ptr<Command>(c), std::move(j)}); };

  Node n;
  n.name = "relu2";
  n.op_type = "Relu";
  n.inputs = {"r"};
  n.outputs = {"r2"};
  n.attributes.push_back(Attribute::of_ints("perm", {1, 0}));
  add(new AddNode(GraphPath::main_graph(), n, 1),
      {{"type", "add_node"},
       {"position", 1},
       {"node",
        {{"name", "relu2"},
         {"op_type", "Relu"},
         {"inputs", {"r"}},
         {"outputs", {"r2"}},
         {"attributes", {{{"name", "perm"}, {"type", "ints"}, {"value", {1, 0}}}}}}}});
  add(new RemoveNode(GraphPath::main_graph(), "relu"), {{"type", "remove_node"}, {"node", "relu"}});
  add(new RenameNode(GraphPath::main_graph(), relu, "relu_b"),
      {{"type", "rename_node"}, {"node", relu}, {"name", "relu_b"}});
  add(new SetAttribute(GraphPath::main_graph(), "add", Attribute::of_float("alpha", 0.5f)),
      {{"type", "set_attribute"},
       {"node", "add"},
       {"attribute", {{"name", "alpha"}, {"type", "float"}, {"value", 0.5}}}});
  add(new SetAttribute(then, "ident", Attribute::of_string("mode", "x")),
      {{"type", "set_attribute"},
       {"path", then_json},
       {"node", "ident"},
       {"attribute", {{"name", "mode"}, {"type", "string"}, {"value", "x"}}}});
  add(new ResetAttribute(GraphPath::main_graph(), "if", "else_branch"),
      {{"type", "reset_attribute"}, {"node", "if"}, {"name", "else_branch"}});
  add(new Connect(GraphPath::main_graph(), "relu", 0, "x"),
      {{"type", "connect"}, {"node", "relu"}, {"index", 0}, {"value", "x"}});
  add(new Disconnect(GraphPath::main_graph(), "add", 1),
      {{"type", "disconnect"}, {"node", "add"}, {"index", 1}});
  add(new SetNodeOutput(GraphPath::main_graph(), "add", 1, "a2"),
      {{"type", "set_node_output"}, {"node", "add"}, {"index", 1}, {"value", "a2"}});
  add(new RenameValue(GraphPath::main_graph(), "a", "a_renamed"),
      {{"type", "rename_value"}, {"from", "a"}, {"to", "a_renamed"}});
  add(new AddInitializer(GraphPath::main_graph(),
                         make_tensor<int64_t>("shape", DataType::kInt64, {2}, {1, -1})),
      {{"type", "add_initializer"},
       {"tensor", {{"name", "shape"}, {"dtype", "int64"}, {"shape", {2}}, {"values", {1, -1}}}}});
  add(new ReplaceInitializer(GraphPath::main_graph(), make_tensor<float>("w", DataType::kFloat, {2}, {0, 0})),
      {{"type", "replace_initializer"},
       {"tensor", {{"name", "w"}, {"dtype", "float"}, {"shape", {2}}, {"fill", {{"kind", "zeros"}}}}}});
  add(new RemoveInitializer(GraphPath::main_graph(), "w"), {{"type", "remove_initializer"}, {"name", "w"}});
  add(new AddGraphInput(GraphPath::main_graph(), float_value("x2", {Dim::of(1), Dim::symbol("N")}), 0),
      {{"type", "add_graph_input"},
       {"position", 0},
       {"value", {{"name", "x2"}, {"type", "tensor(float)"}, {"shape", {1, "N"}}}}});
  add(new AddGraphOutput(GraphPath::main_graph(), float_value("r", {Dim::unknown()})),
      {{"type", "add_graph_output"},
       {"value", {{"name", "r"}, {"type", "tensor(float)"}, {"shape", {nullptr}}}}});
  add(new RemoveGraphInput(GraphPath::main_graph(), "x"), {{"type", "remove_graph_input"}, {"name", "x"}});
  add(new RemoveGraphOutput(GraphPath::main_graph(), "z"), {{"type", "remove_graph_output"}, {"name", "z"}});
  add(new SetValueInfo(GraphPath::main_graph(), float_value("x", {Dim::of(2), Dim::of(4)})),
      {{"type", "set_value_info"}, {"value", {{"name", "x"}, {"type", "tensor(float)"}, {"shape", {2, 4}}}}});
  add(new RemoveValueInfo(GraphPath::main_graph(), "a"), {{"type", "remove_value_info"}, {"name", "a"}});
  add(new SetOpsetImport("", 21), {{"type", "set_opset_import"}, {"domain", ""}, {"version", 21}});
  add(new SetOpsetImport("custom", std::nullopt),
      {{"type", "set_opset_import"}, {"domain", "custom"}, {"version", nullptr}});
  ModelMetadata md;
  md.producer_name = "studio";
  md.model_version = 3;
  md.graph_name = "net";
  add(new SetModelMetadata(md), {{"type", "set_model_metadata"},
                                 {"producer_name", "studio"},
                                 {"model_version", 3},
                                 {"graph_name", "net"}});
  Function f = m.functions[0];
  f.name = "Cube";
  f.body.name.clear();  // not part of the JSON (nor of ONNX's FunctionProto)
  add(new AddFunction(f),
      {{"type", "add_function"},
       {"function",
        {{"domain", "custom"},
         {"name", "Cube"},
         {"inputs", {"X"}},
         {"outputs", {"Y"}},
         {"opset_imports", {{{"domain", ""}, {"version", 17}}}},
         {"nodes", {{{"name", "sq"}, {"op_type", "Mul"}, {"inputs", {"X", "X"}}, {"outputs", {"Y"}}}}}}}});
  Function g = m.functions[0];
  g.body.name.clear();
  g.body.nodes[0].op_type = "Add";
  add(new ReplaceFunction(g),
      {{"type", "replace_function"},
       {"function",
        {{"domain", "custom"},
         {"name", "Square"},
         {"inputs", {"X"}},
         {"outputs", {"Y"}},
         {"opset_imports", {{{"domain", ""}, {"version", 17}}}},
         {"nodes", {{{"name", "sq"}, {"op_type", "Add"}, {"inputs", {"X", "X"}}, {"outputs", {"Y"}}}}}}}});
  add(new RemoveFunction("custom", "Square"),
      {{"type", "remove_function"}, {"function", {{"domain", "custom"}, {"name", "Square"}}}});
  auto batch = new BatchCommand("Two");
  batch->add(std::make_unique<RenameNode>(GraphPath::main_graph(), "add", "add_b"));
  batch->add(std::make_unique<RemoveNode>(GraphPath::main_graph(), "add_b"));
  add(batch, {{"type", "batch"},
              {"name", "Two"},
              {"commands",
               {{{"type", "rename_node"}, {"node", "add"}, {"name", "add_b"}},
                {{"type", "remove_node"}, {"node", "add_b"}}}}});
  return cases;
}

TEST(CommandJson, EveryCommandFromJsonDoesWhatTheCppCommandDoes) {
  const Model original = small_model();
  std::vector<Case> cases = every_command(original);
  EXPECT_EQ(cases.size(), 26u);  // every class (SetAttribute and SetOpsetImport twice), and a batch
  for (Case& c : cases) {
    SCOPED_TRACE(c.spelled.dump());
    std::unique_ptr<Command> from_json;
    ASSERT_NO_THROW(from_json = command_from_json(c.spelled));
    EXPECT_EQ(from_json->description(), c.cpp->description());
    Model a = original, b = original;
    c.cpp->apply(a);
    from_json->apply(b);
    EXPECT_TRUE(identical(a, b));
    EXPECT_FALSE(identical(b, original));
    c.cpp->undo(a);
    from_json->undo(b);
    EXPECT_TRUE(identical(a, original));
    EXPECT_TRUE(identical(b, original));
    // Written back and read again, it is the same command: same JSON, same edit.
    json written = from_json->to_json();
    std::unique_ptr<Command> again = command_from_json(written);
    EXPECT_EQ(again->to_json(), written);
    EXPECT_EQ(c.cpp->to_json(), written);
    again->apply(b);
    c.cpp->apply(a);
    EXPECT_TRUE(identical(a, b));
  }
}

TEST(CommandJson, MalformedCommandsNameTheField) {
  auto message = [](const json& batch) {
    try {
      batch_from_json("b", batch);
    } catch (const JsonError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json ok = {{"type", "remove_node"}, {"node", "add"}};
  EXPECT_EQ(message({ok, ok, {{"type", "connect"}, {"node", "add"}, {"index", -1}, {"value", "x"}}}),
            "command 3: 'index' must be a non-negative integer");
  EXPECT_EQ(message({{{"type", "connect"}, {"node", "add"}, {"value", "x"}}}),
            "command 1: 'index' is missing");
  EXPECT_EQ(message({{{"type", "explode"}}}), "command 1: unknown command type 'explode'");
  EXPECT_EQ(message({42}), "command 1 must be a JSON object");
  EXPECT_EQ(message({{{"type", "remove_node"}, {"node", 0}}}),
            "command 1: 'node' must be a node id (a positive integer) or a node name");
  EXPECT_EQ(message({{{"type", "set_attribute"},
                      {"node", "add"},
                      {"attribute", {{"name", "k"}, {"type", "ints"}, {"value", {1, "2"}}}}}}),
            "command 1: attribute 'k': 'value'[1] must be an integer");
  EXPECT_EQ(message({{{"type", "add_initializer"},
                      {"tensor", {{"name", "t"}, {"dtype", "float"}, {"shape", {3}}, {"values", {1, 2}}}}}}),
            "command 1: tensor 't': 'values' has 2 elements; shape [3] needs 3");
  EXPECT_EQ(message({{{"type", "add_initializer"},
                      {"tensor", {{"name", "t"}, {"dtype", "flot"}, {"shape", {3}}}}}}),
            "command 1: tensor 't': 'dtype' 'flot' is not a data type");
  EXPECT_EQ(message({{{"type", "add_initializer"},
                      {"tensor", {{"name", "t"}, {"dtype", "float"}, {"shape", {1 << 20, 1 << 20}}}}}}),
            "command 1: tensor 't' would take 4398046511104 bytes; the studio accepts at most 1073741824");
  EXPECT_EQ(message({{{"type", "add_graph_input"}, {"value", {{"name", "v"}, {"type", "tensor(flot)"}}}}}),
            "command 1: 'type' 'tensor(flot)' is not a type");
  EXPECT_EQ(message({{{"type", "remove_node"}, {"node", "a"}, {"path", {{"steps", {{{"node", 1}}}}}}}}),
            "command 1: 'path': steps[0]: 'attribute' is missing");
  EXPECT_THROW(batch_from_json("b", json::object()), JsonError);
}

TEST(TensorJson, ValuesFillsNpyAndRawBytesRoundTrip) {
  Tensor t = make_tensor<float>("w", DataType::kFloat, {2, 2}, {1.5f, -2, 0, 4});
  EXPECT_EQ(tensor_from_json(tensor_to_json(t)), t);
  json j = tensor_to_json(t, 3);
  EXPECT_FALSE(j.contains("values"));
  EXPECT_EQ(j["bytes"], 16);
  EXPECT_EQ(tensor_values_json(t, 3), json({1.5, -2.0, 0.0}));

  // Generated fills are the same for the same seed, and differ for another.
  json fill{{"name", "n"}, {"dtype", "float"}, {"shape", {64}}, {"fill", {{"kind", "normal"}, {"seed", 7}}}};
  Tensor a = tensor_from_json(fill), b = tensor_from_json(fill);
  EXPECT_EQ(a, b);
  fill["fill"]["seed"] = 8;
  EXPECT_NE(tensor_from_json(fill), a);
  // Random integers over every positive (negative) value of the type, zero excluded, as the seed says:
  // 100 draws from int8's 128 negative values reach below -64, from uint16's 65,535 above 32,768.
  Tensor neg = tensor_from_json(
      {{"name", "p"}, {"dtype", "int8"}, {"shape", {100}}, {"fill", {{"kind", "uniform_int_neg"}}}});
  std::span<const int8_t> n8 = neg.as<int8_t>();
  for (int8_t v : n8) EXPECT_TRUE(v >= -128 && v <= -1) << int(v);
  EXPECT_LT(*std::min_element(n8.begin(), n8.end()), -64);
  Tensor pos = tensor_from_json(
      {{"name", "p"}, {"dtype", "uint16"}, {"shape", {100}}, {"fill", {{"kind", "uniform_int_pos"}}}});
  std::span<const uint16_t> p16 = pos.as<uint16_t>();
  for (uint16_t v : p16) EXPECT_GE(v, 1);
  EXPECT_GT(*std::max_element(p16.begin(), p16.end()), 32768);
  // The 64-bit types up to 2^53 - 1 (what JSON numbers in the browser hold exactly).
  Tensor big = tensor_from_json(
      {{"name", "p"}, {"dtype", "int64"}, {"shape", {100}}, {"fill", {{"kind", "uniform_int_neg"}}}});
  for (int64_t v : big.as<int64_t>()) EXPECT_TRUE(v <= -1 && v > -(int64_t{1} << 53)) << v;
  for (const char* dtype : {"float", "float16", "bool"}) {
    json j{{"name", "p"}, {"dtype", dtype}, {"shape", {1}}, {"fill", {{"kind", "uniform_int_pos"}}}};
    try {
      tensor_from_json(j);
      ADD_FAILURE() << dtype;
    } catch (const JsonError& e) {
      EXPECT_EQ(
          std::string(e.what()),
          fmt::format("tensor 'p': 'fill': 'uniform_int_pos' needs an integer type of a byte or more, not {}",
                      dtype));
    }
  }
  EXPECT_THROW(
      tensor_from_json(
          {{"name", "p"}, {"dtype", "uint8"}, {"shape", {1}}, {"fill", {{"kind", "uniform_int_neg"}}}}),
      JsonError);

  // .npy as base64, and raw bytes for types JSON numbers cannot carry exactly.
  std::string npy = io::to_npy(t);
  Tensor from_npy = tensor_from_json({{"name", "w"}, {"npy_base64", base64_encode(npy)}});
  EXPECT_EQ(from_npy, t);
  EXPECT_THROW(tensor_from_json({{"name", "w"}, {"dtype", "int32"}, {"npy_base64", base64_encode(npy)}}),
               JsonError);
  Tensor half;
  half.name = "h";
  half.dtype = DataType::kFloat16;
  half.dims = {3};
  half.data = make_buffer(std::string("\x00\x3c\x00\x40\x00\xc0", 6));
  json hj = tensor_to_json(half);
  EXPECT_TRUE(hj.contains("raw_base64"));
  EXPECT_EQ(tensor_from_json(hj), half);
  // A preview (the graph answer's attributes) gives them as numbers, which read back the same.
  json preview = tensor_to_json(half, 64);
  EXPECT_EQ(preview["values"], json({1.0, 2.0, -2.0}));
  EXPECT_EQ(tensor_from_json(preview), half);

  Tensor bools = make_tensor<uint8_t>("b", DataType::kBool, {3}, {1, 0, 1});
  EXPECT_EQ(tensor_to_json(bools)["values"], json({true, false, true}));
  EXPECT_EQ(tensor_from_json(tensor_to_json(bools)), bools);
  Tensor strings;
  strings.name = "s";
  strings.dtype = DataType::kString;
  strings.dims = {2};
  strings.strings = {"a", "b"};
  EXPECT_EQ(tensor_from_json(tensor_to_json(strings)), strings);
  EXPECT_THROW(tensor_from_json({{"name", "i"}, {"dtype", "int8"}, {"shape", {1}}, {"values", {300}}}),
               JsonError);
}

TEST(Base64, EncodesAndDecodesEveryLength) {
  std::string bytes;
  for (int n = 0; n < 10; ++n) {
    EXPECT_EQ(base64_decode(base64_encode(bytes), ""), bytes);
    bytes += static_cast<char>(250 - n * 7);
  }
  EXPECT_EQ(base64_encode("Man"), "TWFu");
  EXPECT_EQ(base64_encode("Ma"), "TWE=");
  EXPECT_THROW(base64_decode("TWF", ""), JsonError);
  EXPECT_THROW(base64_decode("TW!u", ""), JsonError);
  EXPECT_THROW(base64_decode("T=Fu", ""), JsonError);
}

TEST(AttributeJson, EveryWritableKindRoundTrips) {
  std::vector<Attribute> attrs = {
      Attribute::of_float("f", 1.5f),
      Attribute::of_int("i", -3),
      Attribute::of_string("s", "same"),
      Attribute::of_floats("fs", {1, 2.5f}),
      Attribute::of_ints("is", {1, 2}),
      Attribute::of_strings("ss", {"a", "b"}),
      Attribute::of_tensor("t", make_tensor<int64_t>("", DataType::kInt64, {2}, {3, 4})),
      small_model().graph.nodes[2].attributes[0]};
  Attribute ref;
  ref.name = "alpha";
  ref.type = AttrType::kFloat;
  ref.ref_attr_name = "outer_alpha";
  attrs.push_back(ref);
  for (const Attribute& a : attrs) {
    SCOPED_TRACE(a.name);
    Attribute back = attribute_from_json(attribute_to_json(a), "");
    EXPECT_EQ(back, a);
  }
  // Non-finite floats travel as "nan", "inf", "-inf", as tensor elements do (JSON has no numbers for
  // them; nlohmann would write null).
  Attribute inf = Attribute::of_float("f", INFINITY);
  EXPECT_EQ(attribute_to_json(inf)["value"], "inf");
  EXPECT_EQ(attribute_from_json(attribute_to_json(inf), ""), inf);
  Attribute odd = Attribute::of_floats("fs", {NAN, -INFINITY, 0.5f});
  json odd_json = attribute_to_json(odd);
  EXPECT_EQ(odd_json["value"], json({"nan", "-inf", 0.5}));
  Attribute odd_back = attribute_from_json(odd_json, "");
  EXPECT_TRUE(std::isnan(odd_back.floats[0]));
  EXPECT_EQ(odd_back.floats[1], -INFINITY);
  EXPECT_THROW(attribute_from_json(json{{"name", "f"}, {"type", "float"}, {"value", "many"}}, ""), JsonError);
  // The graph answer's form: graphs as counts.
  EXPECT_EQ(attribute_to_json(attrs.back(), false)["ref"], "outer_alpha");
  EXPECT_EQ(attribute_to_json(attrs[7], false)["value"], 1);
  // A tensor attribute may leave its name out (the studio's parameter and tensor editors do), an
  // initializer may not.
  Attribute unnamed = attribute_from_json(
      json::parse(
          R"({"name": "value", "type": "tensor", "value": {"dtype": "int64", "shape": [2], "values": [3, 4]}})"),
      "");
  EXPECT_EQ(unnamed.tensors.at(0), make_tensor<int64_t>("", DataType::kInt64, {2}, {3, 4}));
  EXPECT_THROW(tensor_from_json(json::parse(R"({"dtype": "int64", "shape": [1], "values": [1]})"), ""),
               JsonError);
  EXPECT_THROW(attribute_from_json({{"name", "x"}, {"type", "sparse_tensor"}, {"value", 1}}, ""), JsonError);
  EXPECT_THROW(attribute_from_json({{"name", "x"}, {"type", "int"}, {"value", 1.5}}, ""), JsonError);
}

TEST(AttributeJson, RefusesSubgraphsNestedWithoutEnd) {
  json g = {{"name", "leaf"}};
  for (int i = 0; i < 100; ++i) {
    g = {{"name", "g"},
         {"nodes",
          {{{"op_type", "If"},
            {"attributes", {{{"name", "then_branch"}, {"type", "graph"}, {"value", g}}}}}}}};
  }
  try {
    attribute_from_json({{"name", "body"}, {"type", "graph"}, {"value", g}});
    ADD_FAILURE() << "no error";
  } catch (const JsonError& e) {
    EXPECT_NE(std::string(e.what()).find("subgraphs are nested more than 64 deep"), std::string::npos)
        << e.what();
  }
}

TEST(GraphPathJson, RoundTripsAndMainIsDefault) {
  Model m = small_model();
  GraphPath p = b1_path(m);
  EXPECT_EQ(graph_path_from_json(graph_path_to_json(p), ""), p);
  GraphPath f = GraphPath::function_body("custom", "Square", "fast").sub(3, "body");
  EXPECT_EQ(graph_path_from_json(graph_path_to_json(f), ""), f);
  EXPECT_EQ(graph_path_from_json(json(nullptr), ""), GraphPath::main_graph());
  EXPECT_EQ(graph_path_from_json(json::object(), ""), GraphPath::main_graph());
}

// ---- change events -------------------------------------------------------------------------------

TEST(HistoryChanges, ExecuteUndoRedoAndBatchesReportWhatTheyChanged) {
  Model m = small_model();
  History h(m);
  std::vector<std::vector<Change>> seen;
  h.set_listener([&](const std::vector<Change>& c) { seen.push_back(c); });
  const GraphPath main = GraphPath::main_graph();
  NodeId add_id = id_of(m.graph, "add");
  NodeId next = m.graph.next_node_id;

  Node n;
  n.name = "n";
  n.op_type = "Relu";
  n.inputs = {"r"};
  n.outputs = {"r9"};
  h.execute(std::make_unique<AddNode>(main, n));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], (std::vector<Change>{{Change::Kind::kNodeAdded, main, next}}));
  h.undo();
  EXPECT_EQ(seen[1], (std::vector<Change>{{Change::Kind::kNodeRemoved, main, next}}));
  h.redo();
  EXPECT_EQ(seen[2], (std::vector<Change>{{Change::Kind::kNodeAdded, main, next}}));

  h.begin_batch("b");
  h.execute(std::make_unique<Connect>(main, "add", 1, "x"));
  h.execute(std::make_unique<AddInitializer>(main, make_tensor<float>("k", DataType::kFloat, {1}, {1})));
  h.end_batch();
  EXPECT_EQ(seen[3], (std::vector<Change>{{Change::Kind::kNodeChanged, main, add_id}}));
  EXPECT_EQ(seen[4], (std::vector<Change>{{Change::Kind::kInitializersChanged, main, 0}}));
  h.undo();  // the batch, last command first
  EXPECT_EQ(seen[5], (std::vector<Change>{{Change::Kind::kInitializersChanged, main, 0},
                                          {Change::Kind::kNodeChanged, main, add_id}}));

  h.begin_batch("cancelled");
  h.execute(std::make_unique<RemoveNode>(main, "add"));
  h.cancel_batch();
  EXPECT_EQ(seen[7], (std::vector<Change>{{Change::Kind::kNodeAdded, main, add_id}}));

  // A rename reports every node that reads or writes the value, and the lists that name it.
  seen.clear();
  h.execute(std::make_unique<RenameValue>(main, "a", "a2"));
  std::vector<Change> expected = {{Change::Kind::kNodeChanged, main, add_id},
                                  {Change::Kind::kNodeChanged, main, id_of(m.graph, "relu")},
                                  {Change::Kind::kNodeChanged, main, id_of(m.graph, "if")},
                                  {Change::Kind::kNodeChanged, main, id_of(m.graph, "multi")},
                                  {Change::Kind::kValueInfoChanged, main, 0}};
  EXPECT_EQ(seen[0], expected);
  h.execute(std::make_unique<SetValueInfo>(main, float_value("x", {Dim::of(3)})));
  EXPECT_EQ(seen[1], (std::vector<Change>{{Change::Kind::kGraphIoChanged, main, 0}}));
  h.execute(std::make_unique<SetOpsetImport>("", 18));
  EXPECT_EQ(seen[2], (std::vector<Change>{{Change::Kind::kModelChanged, main, 0}}));
  EXPECT_EQ(change_kind_name(Change::Kind::kGraphIoChanged), "graph_io_changed");
}

}  // namespace
}  // namespace tessera::ir::test
