// The studio's Model and Tools menus on the server: each transformation applied to an open document
// through its history (the log answered, the result type-checks, one undo gives back a model equal to
// the original), refusals that change nothing, and user tools run on the saved file: output gathered,
// exit status, a program that does not exist, cancel, an output model opened.
#include <gtest/gtest.h>

#include <chrono>

#include "server/studio_fixture.h"
#include "transforms/user_tools.h"

namespace {

using namespace tessera_studio_test;
using tessera::ir::DataType;
using tessera::ir::Model;

// x [N, 4] -> MatMul W [4, 3] (mm) -> Add B (add) -> Relu (relu) -> Identity (copy) -> y
Model mlp_model() {
  using namespace tessera::ir;
  Model m = empty_model();
  GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, Shape{Dim::symbol("N"), Dim::of(4)}));
  std::vector<float> w(12);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25f * static_cast<float>(i) - 1.0f;
  b.initializer(make_tensor<float>("W", DataType::kFloat, {4, 3}, w));
  b.initializer(make_tensor<float>("B", DataType::kFloat, {3}, std::vector<float>{0.5f, -0.5f, 1e-9f}));
  std::string mm = b.node("MatMul", {x, "W"}, {}, "mm");
  std::string add = b.node("Add", {mm, "B"}, {}, "add");
  std::string relu = b.node("Relu", {add}, {}, "relu");
  b.output(b.node("Identity", {relu}, {}, "copy"));
  return m;
}

class StudioTransforms : public Studio {
 protected:
  // Opens `file`, applies `transform`, checks the answer and that the result type-checks, undoes it
  // and checks that the model saved then equals the file. Returns the transformation's answer.
  // `checks`: whether the result must type-check (a batch tensor conversion may leave mismatches, which
  // its log reports).
  json apply_and_undo(const std::string& file, const std::string& transform, const json& options,
                      bool checks = true) {
    std::string id = open(file);
    std::string doc = "/api/documents/" + id;
    auto [status, a] = post(doc + "/transform", json{{"transform", transform}, {"options", options}});
    EXPECT_EQ(status, 200) << transform << ": " << a.dump();
    if (status != 200) return a;
    EXPECT_EQ(a["log"]["changed"], true) << a.dump();
    EXPECT_TRUE(a["document"]["dirty"].get<bool>());
    for (const json& d : a["diagnostics"]) {
      if (checks) {
        EXPECT_NE(d["severity"], "error") << transform << ": " << d.dump();
      }
    }
    EXPECT_EQ(post(doc + "/save", json{{"path", "after_" + transform + ".onnx"}}).first, 200);
    auto [us, undone] = post(doc + "/undo", std::string());
    EXPECT_EQ(us, 200) << undone.dump();
    EXPECT_EQ(post(doc + "/save", json{{"path", "undone_" + transform + ".onnx"}}).first, 200);
    Model original = tessera::onnx::load_model(root_ / file);
    Model back = tessera::onnx::load_model(root_ / ("undone_" + transform + ".onnx"));
    EXPECT_TRUE(original == back) << transform << ": one undo did not give back the original";
    return a;
  }
  static int64_t count(const json& answer, const std::string& what) {
    for (const json& c : answer["log"]["counts"])
      if (c[0] == what) return c[1].get<int64_t>();
    return -1;
  }
  Model after(const std::string& transform) {
    return tessera::onnx::load_model(root_ / ("after_" + transform + ".onnx"));
  }
};

TEST_F(StudioTransforms, Float16AndBFloat16KeepIoTypesAndBlockLists) {
  tessera::onnx::save_model(mlp_model(), root_ / "mlp.onnx");
  start();
  apply_and_undo("mlp.onnx", "fp16", {{"keep_io_types", true}, {"op_block_list", "Relu"}});
  Model m = after("fp16");
  EXPECT_EQ(m.graph.find_initializer("W")->dtype, DataType::kFloat16);
  EXPECT_EQ(m.graph.inputs[0].type.elem, DataType::kFloat);  // kept float32
  size_t casts = 0;
  for (const auto& n : m.graph.nodes) casts += n.op_type == "Cast";
  EXPECT_GE(casts, 2u);  // into the float16 part, and around the Relu kept float32

  apply_and_undo("mlp.onnx", "bf16", json::object());
  EXPECT_EQ(after("bf16").graph.find_initializer("W")->dtype, DataType::kBFloat16);

  // A block list naming a node the model does not have: refused with the name, nothing changed.
  std::string id = open("mlp.onnx");
  auto [s, e] = post("/api/documents/" + id + "/transform",
                     json{{"transform", "fp16"}, {"options", {{"node_block_list", {"nope"}}}}});
  EXPECT_EQ(s, 422);
  EXPECT_NE(error_of(e).find("nope"), std::string::npos) << e.dump();
  json doc = get("/api/documents/" + id).second;
  EXPECT_FALSE(doc["dirty"].get<bool>());
  EXPECT_EQ(doc["version"], 0);
}

TEST_F(StudioTransforms, SanitizeSetShapesAndConvertTensors) {
  tessera::onnx::save_model(mlp_model(), root_ / "mlp.onnx");
  start();
  json a = apply_and_undo("mlp.onnx", "sanitize", {{"fold_threshold", 1024}, {"passes", 2}});
  bool copy_left = false;
  for (const auto& n : after("sanitize").graph.nodes) copy_left |= n.name == "copy";
  EXPECT_FALSE(copy_left) << a["log"].dump();

  apply_and_undo("mlp.onnx", "set_shapes", {{"shapes", {{{"input", "x"}, {"shape", "2x4"}}}}});
  Model shaped = after("set_shapes");
  EXPECT_EQ(shaped.graph.inputs[0].type.shape->at(0).value, 2);
  EXPECT_FALSE(shaped.graph.value_info.empty());

  json c = apply_and_undo("mlp.onnx", "convert_tensors", {{"to", "float16"}, {"initializers", "^W$"}}, false);
  Model converted = after("convert_tensors");
  EXPECT_EQ(converted.graph.find_initializer("W")->dtype, DataType::kFloat16);
  EXPECT_EQ(converted.graph.find_initializer("B")->dtype, DataType::kFloat);
  EXPECT_FALSE(c["log"]["counts"].empty()) << c.dump();

  std::string id = open("mlp.onnx");
  std::string at = "/api/documents/" + id + "/transform";
  auto [s1, e1] = post(
      at, json{{"transform", "set_shapes"}, {"options", {{"shapes", {{{"input", "x"}, {"shape", "2xx"}}}}}}});
  EXPECT_EQ(s1, 400);
  EXPECT_EQ(error_of(e1), "option 'shapes[0]': '2xx' is not a shape (e.g. 1x3x224x224)");
  auto [s2, e2] = post(at, json{{"transform", "sanitize"}, {"options", {{"passes", "two"}}}});
  EXPECT_EQ(s2, 400);
  EXPECT_EQ(error_of(e2), "option 'passes' must be an integer of at least 0");
  auto [s3, e3] = post(at, json{{"transform", "shrink"}});
  EXPECT_EQ(s3, 404);
  EXPECT_NE(error_of(e3).find("no transformation 'shrink'"), std::string::npos);
  auto [s4, e4] = post(at, json{{"transform", "convert_tensors"}, {"options", {{"initializers", "("}}}});
  EXPECT_EQ(s4, 422) << e4.dump();
  EXPECT_EQ(get("/api/documents/" + id).second["version"], 0);
}

TEST_F(StudioTransforms, MakeAndInlineLocalFunctions) {
  tessera::onnx::save_model(mlp_model(), root_ / "mlp.onnx");
  tessera::onnx::save_model(nested_model(), root_ / "nested.onnx");
  start();
  apply_and_undo("mlp.onnx", "function_create", {{"name", "Dense"}, {"nodes", "mm, add"}});
  Model made = after("function_create");
  ASSERT_EQ(made.functions.size(), 1u);
  EXPECT_EQ(made.functions[0].name, "Dense");
  apply_and_undo("nested.onnx", "function_inline", {{"function", "custom:Twice"}});
  EXPECT_TRUE(after("function_inline").functions.empty());
  // Deleted: the call stays, a custom-operator node the checker may not know.
  apply_and_undo("nested.onnx", "function_delete", {{"function", "custom:Twice"}}, false);
  Model deleted = after("function_delete");
  EXPECT_TRUE(deleted.functions.empty());
  EXPECT_TRUE(std::any_of(deleted.graph.nodes.begin(), deleted.graph.nodes.end(),
                          [](const auto& n) { return n.op_type == "Twice"; }));

  // Another model imported as a layer (a local function); a model outside the root is refused.
  apply_and_undo("mlp.onnx", "import_layer", {{"path", "sub/b.onnx"}, {"name", "ReluLayer"}});
  Model imported = after("import_layer");
  ASSERT_EQ(imported.functions.size(), 1u);
  EXPECT_EQ(imported.functions[0].name, "ReluLayer");

  std::string id = open("mlp.onnx");
  auto [s0, e0] = post(
      "/api/documents/" + id + "/transform",
      json{{"transform", "import_layer"}, {"options", {{"path", "../outside/secret.onnx"}, {"name", "S"}}}});
  EXPECT_EQ(s0, 403) << e0.dump();
  auto [s, e] = post("/api/documents/" + id + "/transform",
                     json{{"transform", "function_create"}, {"options", {{"name", "F"}}}});
  EXPECT_EQ(s, 400);
  EXPECT_EQ(error_of(e), "give either 'nodes' (one group) or 'prefixes' (a group per prefix)");
}

// ---- user tools -----------------------------------------------------------------------------------

class StudioTools : public Studio {
 protected:
  void SetUp() override {
    Studio::SetUp();
    tools_file_ = base_ / "tools.json";
    using tessera::transforms::UserTool;
    tessera::transforms::save_tools(
        tools_file_,
        {UserTool{"exit3", "/bin/sh", {"-c", "echo model=$1; echo oops >&2; exit 3", "sh", "$Model"}},
         UserTool{"missing", "/nonexistent/tessera-tool", {"$Model"}},
         UserTool{"sleeper", "/bin/sh", {"-c", "echo started; sleep 30; echo late"}},
         UserTool{"copy", "cp", {"$Model", "$Output"}, true, true}});
  }
  json wait_done(const std::string& run) {
    json j;
    std::string out;
    for (int i = 0; i < 200; ++i) {
      j = get("/api/tools/runs/" + run + "?from=" + std::to_string(out.size())).second;
      out += j.value("output", "");
      if (j.value("done", false)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    j["all_output"] = out;
    return j;
  }
};

TEST_F(StudioTools, ARunIsPolledToItsExitStatus) {
  start();
  json list = get("/api/tools").second;
  ASSERT_EQ(list["tools"].size(), 4u) << list.dump();
  EXPECT_EQ(list["tools"][3]["prompt_for_output"], true);
  std::string id = open("a.onnx");
  auto [s, r] = post("/api/tools/run", json{{"doc", id}, {"tool", "exit3"}});
  ASSERT_EQ(s, 200) << r.dump();
  json done = wait_done(r["id"]);
  EXPECT_EQ(done["done"], true);
  EXPECT_EQ(done["exit_status"], 3);
  EXPECT_EQ(done["all_output"], "model=" + fs::canonical(root_ / "a.onnx").string() + "\noops\n");
  // Finished runs are forgotten past 16; the last ones stay readable.
  std::string last;
  for (int i = 0; i < 16; ++i) {
    auto [si, ri] = post("/api/tools/run", json{{"doc", id}, {"tool", "exit3"}});
    ASSERT_EQ(si, 200) << ri.dump();
    last = ri["id"];
    wait_done(last);
  }
  EXPECT_EQ(get("/api/tools/runs/" + r["id"].get<std::string>()).first, 404);
  EXPECT_EQ(get("/api/tools/runs/" + last).second["exit_status"], 3);
}

TEST_F(StudioTools, AMissingProgramAnUnsavedModelAndABadOutputAreRefused) {
  start();
  std::string id = open("a.onnx");
  auto [s1, e1] = post("/api/tools/run", json{{"doc", id}, {"tool", "missing"}});
  EXPECT_EQ(s1, 400);
  EXPECT_EQ(error_of(e1),
            "tool 'missing': cannot start '/nonexistent/tessera-tool': No such file or directory");
  auto [s2, e2] = post("/api/tools/run", json{{"doc", id}, {"tool", "copy"}});
  EXPECT_EQ(s2, 400);
  EXPECT_EQ(error_of(e2), "'output' is missing: tool 'copy' writes a model; choose where");
  auto [s3, e3] =
      post("/api/tools/run", json{{"doc", id}, {"tool", "copy"}, {"output", "../outside/x.onnx"}});
  EXPECT_EQ(s3, 403) << e3.dump();
  auto [s4, e4] = post("/api/tools/run", json{{"doc", id}, {"tool", "nope"}});
  EXPECT_EQ(s4, 404);
  // Modified since saved: the tool would not see the edit.
  ASSERT_EQ(post("/api/documents/" + id + "/commands",
                 json{{"command", {{"type", "rename_node"}, {"node", "/block/relu"}, {"name", "r2"}}}})
                .first,
            200);
  auto [s5, e5] = post("/api/tools/run", json{{"doc", id}, {"tool", "exit3"}});
  EXPECT_EQ(s5, 409);
  EXPECT_EQ(error_of(e5), "the model has unsaved changes: save it first (tool 'exit3' runs on the file)");
  auto [s6, e6] = post("/api/documents/new", json::object());
  auto [s7, e7] = post("/api/tools/run", json{{"doc", e6["id"]}, {"tool", "exit3"}});
  EXPECT_EQ(s7, 409);
  EXPECT_EQ(error_of(e7), "save the model first: tool 'exit3' runs on the saved file");
}

// A tools file that is not valid JSON: the menu says why (the list empty), a run is refused with it.
TEST_F(StudioTools, ABrokenToolsFileIsReportedNotFatal) {
  std::ofstream(tools_file_) << "{\"tools\": [";
  start();
  json list = get("/api/tools").second;
  EXPECT_EQ(list["tools"], json::array());
  std::string problem = list.value("problem", "");
  EXPECT_NE(problem.find(tools_file_.string()), std::string::npos) << problem;
  std::string id = open("a.onnx");
  auto [s, e] = post("/api/tools/run", json{{"doc", id}, {"tool", "exit3"}});
  EXPECT_EQ(s, 400);
  EXPECT_EQ(error_of(e), problem);
}

TEST_F(StudioTools, CancelEndsTheToolAndItsChildren) {
  start();
  std::string id = open("a.onnx");
  auto [s, r] = post("/api/tools/run", json{{"doc", id}, {"tool", "sleeper"}});
  ASSERT_EQ(s, 200) << r.dump();
  std::string run = r["id"];
  for (int i = 0; i < 100 && get("/api/tools/runs/" + run).second["output"] != "started\n"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto t0 = std::chrono::steady_clock::now();
  auto [cs, c] = post("/api/tools/runs/" + run + "/cancel", std::string());
  ASSERT_EQ(cs, 200) << c.dump();
  json done = wait_done(run);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));  // sleep 30 ended too
  EXPECT_EQ(done["done"], true);
  EXPECT_EQ(done["cancelled"], true);
  EXPECT_EQ(done["signal"], 15);
  EXPECT_EQ(done["all_output"], "started\n");
}

TEST_F(StudioTools, AnOutputModelIsWrittenWhereAskedAndOpens) {
  start();
  std::string id = open("a.onnx");
  auto [s, r] = post("/api/tools/run", json{{"doc", id}, {"tool", "copy"}, {"output", "sub/copied.onnx"}});
  ASSERT_EQ(s, 200) << r.dump();
  EXPECT_EQ(r["open_output"], true);
  json done = wait_done(r["id"]);
  EXPECT_EQ(done["exit_status"], 0);
  EXPECT_EQ(done["output_file"], fs::canonical(root_ / "sub").string() + "/copied.onnx");
  auto [os, opened] = post("/api/documents/open", json{{"path", done["output_file"]}});
  EXPECT_EQ(os, 200) << opened.dump();
}

}  // namespace
