// The studio's server in-process on a free port, driven over HTTP with httplib's client: the security
// rules, refusals that change nothing, and the open/edit/undo/redo/save/reopen round trip.
#include "server/studio.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <thread>

#include "check/checker.h"
#include "ir/builder.h"
#include "onnx/onnx_io.h"
#include "server/studio_fixture.h"

namespace fs = std::filesystem;
using tessera::ir::json;

namespace {

using namespace tessera_studio_test;

std::string percent_encoded(const std::string& s) {
  std::string out;
  for (unsigned char c : s)
    out += std::isalnum(c) ? std::string(1, static_cast<char>(c)) : fmt::format("%{:02X}", c);
  return out;
}

TEST_F(Studio, RefusesForeignHostOriginAndMissingOrWrongToken) {
  start();
  std::string port = std::to_string(studio_->port());
  auto [s1, j1] = get("/api/documents", auth({{"Host", "evil.example:" + port}}));
  EXPECT_EQ(s1, 403);
  EXPECT_EQ(error_of(j1), "foreign Host header 'evil.example:" + port + "'");
  auto [s2, j2] = get("/api/documents", auth({{"Origin", "http://evil.example"}}));
  EXPECT_EQ(s2, 403);
  EXPECT_EQ(error_of(j2), "foreign Origin 'http://evil.example'");
  auto [s3, j3] = get("/api/documents", {{"Accept", "*/*"}});
  EXPECT_EQ(s3, 401);
  EXPECT_EQ(error_of(j3), "missing or wrong token");
  auto [s4, j4] = get("/api/documents", {{"X-Tessera-Token", std::string(32, '0')}});
  EXPECT_EQ(s4, 401);
  // A refused open opens nothing.
  auto [s5, j5] = post("/api/documents/open", json{{"path", "a.onnx"}}.dump(), {{"X-Tessera-Token", "x"}});
  EXPECT_EQ(s5, 401);
  EXPECT_EQ(get("/api/documents").second["documents"].size(), 0u);
  // Allowed: localhost, the same origin, the token as a query parameter or as the cookie set by "/".
  EXPECT_EQ(
      get("/api/documents", auth({{"Host", "localhost:" + port}, {"Origin", "http://localhost:" + port}}))
          .first,
      200);
  EXPECT_EQ(get("/api/documents?token=" + studio_->token(), {{"Accept", "*/*"}}).first, 200);
  auto page = client_->Get(("/?token=" + studio_->token()).c_str());
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->get_header_value("Set-Cookie").find("HttpOnly; SameSite=Strict"), std::string::npos);
  EXPECT_NE(page->body.find("not built"), std::string::npos);
  EXPECT_EQ(get("/api/documents", {{"Cookie", "x=1; tessera_token=" + studio_->token()}}).first, 200);
}

TEST_F(Studio, RefusesPathsOutsideTheRoot) {
  start();
  std::string expected_root = fs::canonical(root_).string();
  for (std::string path :
       {(base_ / "outside" / "secret.onnx").string(), std::string("../outside/secret.onnx"),
        std::string("link.onnx"), std::string("sub/../../outside/secret.onnx")}) {
    auto [status, j] = post("/api/documents/open", json{{"path", path}});
    EXPECT_EQ(status, 403) << path;
    EXPECT_EQ(error_of(j), "path '" + path + "' is outside the studio's root '" + expected_root + "'");
  }
  EXPECT_EQ(post("/api/documents/open", json{{"path", "missing.onnx"}}).first, 404);
  EXPECT_EQ(get("/api/files?dir=..").first, 403);
  EXPECT_EQ(get("/api/documents").second["documents"].size(), 0u);
  // Saving outside the root is refused too, and saves nothing.
  std::string id = open("a.onnx");
  auto [status, j] = post("/api/documents/" + id + "/save", json{{"path", "../outside/copy.onnx"}});
  EXPECT_EQ(status, 403);
  EXPECT_FALSE(fs::exists(base_ / "outside" / "copy.onnx"));
  EXPECT_EQ(post("/api/documents/" + id + "/save", json{{"path", "nowhere/copy.onnx"}}).first, 404);
  // The files endpoint lists models and folders under the root.
  auto [fs_status, files] = get("/api/files");
  EXPECT_EQ(fs_status, 200);
  std::vector<std::string> names;
  for (const json& e : files["entries"]) names.push_back(e["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"a.onnx", "link.onnx", "sub"}));
  EXPECT_EQ(get("/api/files?dir=sub").second["entries"][0]["name"], "b.onnx");
}

TEST_F(Studio, MalformedAndStaleRequestsChangeNothing) {
  start();
  std::string id = open("a.onnx");
  json before = graph(id);
  std::string cmds = "/api/documents/" + id + "/commands";
  auto [s1, j1] = post(cmds, std::string("{\"command\": {"));
  EXPECT_EQ(s1, 400);
  EXPECT_EQ(error_of(j1), "the request body is not valid JSON");
  auto [s2, j2] =
      post(cmds, json{{"command", {{"type", "connect"}, {"node", 1}, {"index", -1}, {"value", "x"}}}});
  EXPECT_EQ(s2, 400);
  EXPECT_EQ(error_of(j2), "command: 'index' must be a non-negative integer");
  auto [s3, j3] = post(cmds, json{{"command", {{"type", "remove_node"}, {"node", 99}}}});
  EXPECT_EQ(s3, 409);
  EXPECT_EQ(error_of(j3), "node #99 does not exist in graph 'main'");
  auto [s4, j4] = post(
      cmds, json{{"command", {{"type", "rename_node"}, {"node", 1}, {"name", "r"}}}, {"expect_version", 5}});
  EXPECT_EQ(s4, 409);
  EXPECT_EQ(error_of(j4), "the document is at version 0, not 5: reload it and try again");
  // A batch is all or nothing.
  auto [s5, j5] = post(cmds, json{{"batch", "Two"},
                                  {"commands",
                                   {{{"type", "rename_node"}, {"node", 1}, {"name", "r"}},
                                    {{"type", "remove_node"}, {"node", 42}}}}});
  EXPECT_EQ(s5, 409);
  EXPECT_EQ(error_of(j5), "step 2 of 2 (Remove node #42): node #42 does not exist in graph 'main'");
  EXPECT_EQ(post("/api/documents/" + id + "/undo", std::string()).first, 409);
  EXPECT_EQ(post("/api/documents/d99/undo", std::string()).first, 404);
  EXPECT_EQ(get("/api/documents/" + id + "/nodes/77").first, 404);
  EXPECT_EQ(get("/api/nothing").first, 404);
  EXPECT_EQ(graph(id), before);
  // A body over 64 MiB is refused before it is read.
  std::string huge(size_t{65} << 20, ' ');
  auto r = client_->Post(cmds.c_str(), auth(), huge, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(graph(id), before);
}

TEST_F(Studio, OpenEditUndoRedoSaveReopen) {
  start();
  std::string id = open("a.onnx");
  json g0 = graph(id);
  ASSERT_EQ(g0["nodes"].size(), 1u);
  EXPECT_EQ(g0["nodes"][0]["scope"], "/block");
  EXPECT_EQ(g0["value_types"]["x"]["shape"], json({"N", 4}));
  EXPECT_EQ(g0["opset_imports"], json::parse(R"([{"domain": "", "version": 17}])"));
  EXPECT_EQ(g0["functions"], json::array());
  EXPECT_FALSE(g0["nodes"][0].contains("function"));
  std::string cmds = "/api/documents/" + id + "/commands";
  json add = {{"type", "add_node"},
              {"node",
               {{"name", "neg"},
                {"op_type", "Neg"},
                {"inputs", {g0["nodes"][0]["outputs"][0]}},
                {"outputs", {"n"}}}}};
  auto [status, answer] = post(cmds, json{{"command", add}, {"expect_version", 0}});
  ASSERT_EQ(status, 200) << answer.dump();
  EXPECT_EQ(answer["document"]["version"], 1);
  EXPECT_EQ(answer["document"]["dirty"], true);
  EXPECT_EQ(answer["document"]["undo"], "Add node 'neg' (Neg)");
  ASSERT_EQ(answer["node_ids"].size(), 1u);
  int64_t neg = answer["node_ids"][0];
  EXPECT_EQ(answer["changes"], json::parse(R"([{"kind": "node_added", "path": {"steps": []}, "node": )" +
                                           std::to_string(neg) + "}]"));
  EXPECT_EQ(answer["diagnostics"].size(), 0u) << answer["diagnostics"].dump();
  // A broken edit answers with its diagnostics, the node marked.
  json conv = {{"type", "add_node"},
               {"node", {{"name", "conv"}, {"op_type", "Conv"}, {"inputs", {"n"}}, {"outputs", {"c"}}}}};
  auto [s2, bad] = post(cmds, json{{"command", conv}});
  ASSERT_EQ(s2, 200) << bad.dump();
  ASSERT_GE(bad["diagnostics"].size(), 1u);
  std::string conv_id = std::to_string(bad["node_ids"][0].get<int64_t>());
  EXPECT_EQ(bad["diagnostics"][0]["node_id"], bad["node_ids"][0]);
  EXPECT_EQ(bad["diagnostics"][0]["text"],
            "error: main: node 'conv' (Conv), input 1: mandatory input 1 ('W') of node 'conv' (Conv) is not "
            "connected");
  EXPECT_EQ(get("/api/documents/" + id + "/nodes/" + conv_id).second["severity"], "error");
  EXPECT_EQ(get("/api/documents/" + id + "/diagnostics").second["version"], 2);
  auto [s3, undone] = post("/api/documents/" + id + "/undo", std::string());
  EXPECT_EQ(s3, 200);
  EXPECT_EQ(undone["diagnostics"].size(), 0u);
  EXPECT_EQ(undone["document"]["redo"], "Add node 'conv' (Conv)");
  EXPECT_EQ(post("/api/documents/" + id + "/undo", std::string()).second["changes"][0]["kind"],
            "node_removed");
  EXPECT_EQ(graph(id)["nodes"].size(), 1u);
  EXPECT_EQ(post("/api/documents/" + id + "/redo", std::string()).second["document"]["version"], 5);
  EXPECT_EQ(graph(id)["nodes"].size(), 2u);

  // Positions, then save as, then reopen: the node and its position come back.
  client_->Put(("/api/documents/" + id + "/positions").c_str(), auth(),
               json{{"positions", {{std::to_string(neg), {10.5, 20}}}}}.dump(), "application/json");
  EXPECT_EQ(graph(id)["positions"][std::to_string(neg)], json({10.5, 20}));
  auto [s4, saved] = post("/api/documents/" + id + "/save", json{{"path", "sub/c.onnx"}});
  ASSERT_EQ(s4, 200) << saved.dump();
  EXPECT_EQ(saved["dirty"], false);
  EXPECT_EQ(saved["name"], "c.onnx");
  EXPECT_TRUE(fs::exists(root_ / "sub" / "c.onnx.tessera.json"));
  std::string id2 = open("sub/c.onnx");
  json g2 = graph(id2);
  ASSERT_EQ(g2["nodes"].size(), 2u);
  EXPECT_EQ(g2["nodes"][1]["name"], "neg");
  std::string neg2 = std::to_string(g2["nodes"][1]["id"].get<int64_t>());
  EXPECT_EQ(g2["positions"][neg2], json({10.5, 20}));
  // Someone else rewrites the file: the document says so.
  EXPECT_EQ(get("/api/documents/" + id2).second["changed_on_disk"], false);
  tessera::onnx::save_model(relu_model(), root_ / "sub" / "c.onnx");
  EXPECT_EQ(get("/api/documents/" + id2).second["changed_on_disk"], true);
  EXPECT_EQ(post("/api/documents/" + id2 + "/close", std::string()).first, 200);
  EXPECT_EQ(get("/api/documents/" + id2).first, 404);
}

// Graph inputs and outputs are not nodes: their positions go by name ("i:x", "o:y"), into the companion
// file's "inputs"/"outputs", and come back on reopen; bad keys and unknown names are refused, nothing kept.
TEST_F(Studio, GraphInputAndOutputPositionsSurviveSaveAndReopen) {
  start();
  std::string id = open("a.onnx");
  json g = graph(id);
  std::string out = g["outputs"][0]["name"];
  std::string relu = std::to_string(g["nodes"][0]["id"].get<int64_t>());
  std::string url = "/api/documents/" + id + "/positions";
  auto put = [&](const json& body) {
    auto r = client_->Put(url.c_str(), auth(), body.dump(), "application/json");
    return std::make_pair(r ? r->status : 0, r ? json::parse(r->body, nullptr, false) : json());
  };
  json io{{"i:x", {1, 2}}, {"o:" + out, {3.5, 4}}};
  EXPECT_EQ(put(json{{"positions", {{relu, {5, 6}}}}, {"io", io}}).first, 200);
  EXPECT_EQ(graph(id)["io_positions"], io);
  auto [s1, e1] = put(json{{"positions", json::object()}, {"io", {{"x", {1, 2}}}}});
  EXPECT_EQ(s1, 400);
  EXPECT_EQ(error_of(e1), "'io': 'x' is not 'i:NAME', 'o:NAME' or 'f:CALL:NODE'");
  auto [s2, e2] = put(json{{"positions", {{relu, {50, 60}}}}, {"io", {{"i:nope", {1, 2}}}}});
  EXPECT_EQ(s2, 404);
  EXPECT_EQ(error_of(e2), "graph input 'nope' does not exist");
  EXPECT_EQ(put(json{{"positions", json::object()}, {"io", {{"o:" + out, {1}}}}}).first, 400);
  json after = graph(id);
  EXPECT_EQ(after["io_positions"], io);
  EXPECT_EQ(after["positions"][relu], json({5, 6}));  // a refused request keeps nothing of itself

  ASSERT_EQ(post("/api/documents/" + id + "/save", json{{"path", "io.onnx"}}).first, 200);
  std::ifstream in(root_ / "io.onnx.tessera.json");
  json companion = json::parse(in);
  EXPECT_EQ(companion["graphs"]["main"]["inputs"], json({{"x", {1, 2}}}));
  EXPECT_EQ(companion["graphs"]["main"]["outputs"], json({{out, {3.5, 4}}}));
  EXPECT_EQ(graph(open("io.onnx"))["io_positions"], io);
}

// The nodes of a local function's body shown inside one call of it (the studio expands calls in place)
// keep their positions per call, as "f:CALL_ID:BODY_NODE_ID": saved by call and body node name in the
// companion file's "calls", restored on reopen; keys naming no call or no body node are refused.
TEST_F(Studio, CallBodyNodePositionsSurviveSaveAndReopen) {
  tessera::onnx::save_model(nested_model(), root_ / "calls.onnx");
  start();
  auto key_of = [&](const std::string& doc) {
    json g = graph(doc);
    int64_t call = -1;
    for (const json& n : g["nodes"])
      if (n["name"] == "call") call = n["id"];
    json fn = get("/api/documents/" + doc +
                  "/graph?path=" + percent_encoded(R"({"function": {"domain": "custom", "name": "Twice"}})"))
                  .second;
    EXPECT_EQ(fn["nodes"][0]["name"], "double");
    return fmt::format("f:{}:{}", call, fn["nodes"][0]["id"].get<int64_t>());
  };
  std::string id = open("calls.onnx");
  std::string key = key_of(id);
  std::string url = "/api/documents/" + id + "/positions";
  auto put = [&](const json& io) {
    auto r = client_->Put(url.c_str(), auth(), json{{"positions", json::object()}, {"io", io}}.dump(),
                          "application/json");
    return std::make_pair(r ? r->status : 0, r ? json::parse(r->body, nullptr, false) : json());
  };
  EXPECT_EQ(put(json{{key, {7, 8}}, {"i:x", {1, 2}}}).first, 200);
  EXPECT_EQ(graph(id)["io_positions"], json({{key, {7, 8}}, {"i:x", {1, 2}}}));
  for (std::string bad : {"f:999:1", "f:1:999", "f:1", "f:x:1", "f:1:1:1"}) {
    auto [status, e] = put(json{{bad, {1, 2}}});
    EXPECT_EQ(status, 404) << bad;
    EXPECT_EQ(error_of(e), fmt::format("'io': '{}' names no node of a local function call's body", bad));
  }
  EXPECT_EQ(graph(id)["io_positions"][key], json({7, 8}));  // the refused requests kept nothing

  ASSERT_EQ(post("/api/documents/" + id + "/save", json{{"path", "calls_saved.onnx"}}).first, 200);
  std::ifstream in(root_ / "calls_saved.onnx.tessera.json");
  json companion = json::parse(in);
  EXPECT_EQ(companion["graphs"]["main"]["calls"], json({{"call", {{"double", {7, 8}}}}}));
  std::string reopened = open("calls_saved.onnx");
  EXPECT_EQ(graph(reopened)["io_positions"][key_of(reopened)], json({7, 8}));
}

// An edit's answer carries the nodes it added or changed, as GET nodes/{id} gives them.
TEST_F(Studio, EditAnswerCarriesTheChangedNodes) {
  start();
  std::string id = open("a.onnx");
  std::string cmds = "/api/documents/" + id + "/commands";
  auto [status, renamed] =
      post(cmds, json{{"command", {{"type", "rename_node"}, {"node", 1}, {"name", "renamed"}}}});
  ASSERT_EQ(status, 200) << renamed.dump();
  EXPECT_EQ(renamed["nodes"]["1"], get("/api/documents/" + id + "/nodes/1").second);
  EXPECT_EQ(renamed["nodes"]["1"]["name"], "renamed");
  json conv = {{"type", "add_node"},
               {"node", {{"name", "conv"}, {"op_type", "Conv"}, {"inputs", {"x"}}, {"outputs", {"c"}}}}};
  json added = post(cmds, json{{"command", conv}}).second;
  std::string conv_id = std::to_string(added["node_ids"][0].get<int64_t>());
  EXPECT_EQ(added["nodes"][conv_id]["severity"], "error");  // W is not connected
  EXPECT_EQ(added["nodes"][conv_id], get("/api/documents/" + id + "/nodes/" + conv_id).second);
  EXPECT_EQ(added["node_indices"][conv_id], 1);
  // Removed nodes are not sent; undone, the node comes back where it was.
  json first = post(cmds, json{{"command", {{"type", "remove_node"}, {"node", 1}}}}).second;
  EXPECT_EQ(first["nodes"], json::object());
  json back = post("/api/documents/" + id + "/undo", std::string()).second;
  EXPECT_EQ(back["nodes"]["1"]["name"], "renamed");
  EXPECT_EQ(back["node_indices"]["1"], 0);
}

TEST_F(Studio, TwoDocumentsAreIndependent) {
  start();
  std::string a = open("a.onnx"), b = open("sub/b.onnx");
  EXPECT_NE(a, b);
  auto [status, answer] =
      post("/api/documents/" + a + "/commands",
           json{{"command", {{"type", "rename_node"}, {"node", 1}, {"name", "renamed"}}}});
  ASSERT_EQ(status, 200) << answer.dump();
  EXPECT_EQ(graph(a)["nodes"][0]["name"], "renamed");
  EXPECT_EQ(graph(b)["nodes"][0]["name"], "/block/relu");
  json docs = get("/api/documents").second["documents"];
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0]["version"], 1);
  EXPECT_EQ(docs[1]["version"], 0);
  auto [s2, fresh] = post("/api/documents/new",
                          json{{"opset", 21}, {"domains", {{{"domain", "com.microsoft"}, {"version", 1}}}}});
  ASSERT_EQ(s2, 200) << fresh.dump();
  EXPECT_EQ(fresh["path"], nullptr);
  EXPECT_EQ(post("/api/documents/" + fresh["id"].get<std::string>() + "/save", json::object()).first, 400);
}

TEST_F(Studio, RegistryAndInitializerPreview) {
  start();
  std::string id = open("a.onnx");
  auto [status, reg] = get("/api/registry?doc=" + id);
  ASSERT_EQ(status, 200);
  const json* relu = nullptr;
  for (const json& op : reg["ops"]) {
    if (op["op_type"] == "Relu") relu = &op;
    EXPECT_LE(op["since_version"].get<int>(), 17) << op["op_type"];
  }
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ((*relu)["since_version"], 14);
  EXPECT_EQ((*relu)["category"], "Activation");
  EXPECT_EQ((*relu)["inputs"][0]["option"], "single");
  json add = {
      {"command",
       {{"type", "add_initializer"},
        {"tensor", {{"name", "w"}, {"dtype", "float"}, {"shape", {2, 3}}, {"values", {1, 2, 3, 4, 5, 6}}}}}}};
  ASSERT_EQ(post("/api/documents/" + id + "/commands", add).first, 200);
  auto [s2, preview] = get("/api/documents/" + id + "/initializers/w?limit=4");
  ASSERT_EQ(s2, 200);
  EXPECT_EQ(preview, json::parse(R"({"dtype": "float", "shape": [2, 3], "values": [1.0, 2.0, 3.0, 4.0]})"));
  EXPECT_EQ(graph(id)["initializers"][0]["bytes"], 24);
  EXPECT_EQ(get("/api/documents/" + id + "/initializers/nope").first, 404);
}

// Bytes that are not HTTP, a request line without a version, a bad percent-encoding: each refused,
// and the server answers the next request as before.
TEST_F(Studio, SurvivesMalformedRequests) {
  start();
  std::string id = open("a.onnx");
  for (std::string raw :
       {std::string("\x16\x03\x01garbage\r\n\r\n"), std::string("GET /\r\n\r\n"),
        std::string("GET /api/documents/%zz/graph?path=%7B HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        std::string("POST /api/documents/open HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n")}) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(studio_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::write(fd, raw.data(), raw.size()), static_cast<ssize_t>(raw.size()));
    ::shutdown(fd, SHUT_WR);
    char buf[512];
    while (::read(fd, buf, sizeof buf) > 0) {
    }
    ::close(fd);
  }
  auto [status, g] = get("/api/documents/" + id + "/graph?path=%7B");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(error_of(g), "the 'path' parameter is not valid JSON");
  EXPECT_EQ(graph(id)["nodes"].size(), 1u);
}

TEST_F(Studio, LocalFunctionsAreListedAndTheirCallsMarked) {
  start();
  std::string id = open("a.onnx");
  json batch = {{"batch", "Add a function and call it"},
                {"commands",
                 {{{"type", "add_function"},
                   {"function",
                    {{"domain", "custom"},
                     {"name", "Twice"},
                     {"inputs", {"X"}},
                     {"outputs", {"Y"}},
                     {"nodes", {{{"op_type", "Add"}, {"inputs", {"X", "X"}}, {"outputs", {"Y"}}}}}}}},
                  {{"type", "set_opset_import"}, {"domain", "custom"}, {"version", 1}},
                  {{"type", "add_node"},
                   {"node",
                    {{"name", "call"},
                     {"op_type", "Twice"},
                     {"domain", "custom"},
                     {"inputs", {"x"}},
                     {"outputs", {"t"}}}}}}}};
  auto [status, answer] = post("/api/documents/" + id + "/commands", batch);
  ASSERT_EQ(status, 200) << answer.dump();
  EXPECT_EQ(answer["changes"][0]["kind"], "model_changed");
  EXPECT_EQ(answer["diagnostics"], json::array());
  json g = graph(id);
  EXPECT_EQ(g["functions"], json::parse(R"([{"domain": "custom", "name": "Twice"}])"));
  EXPECT_EQ(g["nodes"][1]["function"], json::parse(R"({"domain": "custom", "name": "Twice"})"));
  auto [s2, body] = get("/api/documents/" + id + "/graph?path=" +
                        percent_encoded(R"({"function": {"domain": "custom", "name": "Twice"}})"));
  ASSERT_EQ(s2, 200) << body.dump();
  EXPECT_EQ(body["graph"], "function custom.Twice");
  EXPECT_EQ(body["nodes"][0]["op_type"], "Add");
}

// A local function, whole, for the app to edit and send back with replace_function.
TEST_F(Studio, GivesALocalFunctionWhole) {
  start();
  std::string id = open("a.onnx");
  json fn = {{"domain", "local"},
             {"name", "Twice"},
             {"inputs", {"X"}},
             {"outputs", {"Y"}},
             {"attributes", {"alpha"}},
             {"opset_imports", {{{"domain", ""}, {"version", 17}}}},
             {"nodes", {{{"name", "r"}, {"op_type", "Relu"}, {"inputs", {"X"}}, {"outputs", {"Y"}}}}}};
  ASSERT_EQ(post("/api/documents/" + id + "/commands",
                 json{{"command", {{"type", "add_function"}, {"function", fn}}}})
                .first,
            200);
  auto [status, got] = get("/api/documents/" + id + "/functions/0");
  ASSERT_EQ(status, 200) << got.dump();
  EXPECT_EQ(got["name"], "Twice");
  EXPECT_EQ(got["attributes"], json({"alpha"}));
  EXPECT_EQ(got["nodes"][0]["op_type"], "Relu");
  auto [missing, error] = get("/api/documents/" + id + "/functions/1");
  EXPECT_EQ(missing, 404);
  EXPECT_EQ(error_of(error), "function #1 does not exist: the model has 1 local function");
  EXPECT_EQ(get("/api/documents/" + id + "/functions/x").first, 404);
}

// An initializer whose bytes stay in a file beside the model: refused for a model never saved, checked
// against the model's folder, and its values there once saved.
TEST_F(Studio, ExternalInitializerNeedsASavedModelAndAFileInItsFolder) {
  start();
  json ext_tensor = {{"name", "w_ext"},
                     {"dtype", "float"},
                     {"shape", {2}},
                     {"external", {{"location", "w.bin"}, {"offset", 4}, {"length", 8}}}};
  json add = {{"command", {{"type", "add_initializer"}, {"tensor", ext_tensor}}}};
  auto [s0, created] = post("/api/documents/new", json{{"opset", 17}});
  ASSERT_EQ(s0, 200);
  std::string fresh = created["id"];
  auto [s1, e1] = post("/api/documents/" + fresh + "/commands", add);
  EXPECT_EQ(s1, 400);
  EXPECT_EQ(error_of(e1),
            "initializer 'w_ext': external data needs a saved model (its location is relative to the model's "
            "folder): save the model first");

  std::string id = open("a.onnx");
  std::string cmds = "/api/documents/" + id + "/commands";
  auto [s2, e2] = post(cmds, add);
  EXPECT_EQ(s2, 400);
  EXPECT_NE(error_of(e2).find("initializer 'w_ext': external data location 'w.bin'"), std::string::npos)
      << error_of(e2);
  {
    std::ofstream f(root_ / "w.bin", std::ios::binary);
    float v[3] = {9, 1.5f, -2};
    f.write(reinterpret_cast<const char*>(v), sizeof v);
  }
  json too_far = add;
  too_far["command"]["tensor"]["external"]["offset"] = 8;
  EXPECT_EQ(post(cmds, too_far).first, 400);  // 8 bytes from offset 8 run past the 12-byte file
  json bad_length = add;
  bad_length["command"]["tensor"]["external"]["length"] = 12;
  auto [s3, e3] = post(cmds, bad_length);
  EXPECT_EQ(s3, 400);
  EXPECT_NE(error_of(e3).find("'length' is 12 bytes; float[2] needs 8"), std::string::npos) << e3.dump();
  EXPECT_EQ(graph(id)["initializers"].size(), 0u);

  auto [s4, ok] = post(cmds, add);
  ASSERT_EQ(s4, 200) << ok.dump();
  json inits = graph(id)["initializers"];
  ASSERT_EQ(inits.size(), 1u);
  EXPECT_EQ(inits[0]["bytes"], 8);
  ASSERT_EQ(post("/api/documents/" + id + "/save", json{{"path", "ext.onnx"}}).first, 200);
  std::string reopened = open("ext.onnx");
  auto [s5, values] = get("/api/documents/" + reopened + "/initializers/w_ext");
  ASSERT_EQ(s5, 200) << values.dump();
  EXPECT_EQ(values["values"], json({1.5, -2}));
}

TEST_F(Studio, ServesTheWebAppWithContentTypes) {
  start(base_ / "web");
  httplib::Headers h = auth();
  auto index = client_->Get("/", h);
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
  auto js = client_->Get("/assets/app.js", h);
  ASSERT_TRUE(js);
  EXPECT_EQ(js->body, "console.log(1)");
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(client_->Get("/assets/../../outside/secret.onnx", h)->status, 404);
  EXPECT_EQ(client_->Get("/nope.js", h)->status, 404);
}

}  // namespace

namespace {

// The diagnostics texts a full check of the file gives.
std::vector<std::string> full_check_texts(const fs::path& file) {
  std::vector<std::string> out;
  for (const auto& d : tessera::check::check_model(tessera::onnx::load_model(file)).diagnostics.items)
    out.push_back(d.to_string());
  return out;
}

std::vector<std::string> texts(const json& diagnostics) {
  std::vector<std::string> out;
  for (const json& d : diagnostics) out.push_back(d["text"]);
  return out;
}

}  // namespace

// Edits inside a Loop body and inside a local function's body: the answer's diagnostics are the ones a
// full check of the saved file gives, and they were computed incrementally.
TEST_F(Studio, EditsInsideBodiesAreCheckedIncrementallyAsAFullCheckWould) {
  tessera::onnx::save_model(nested_model(), root_ / "nested.onnx");
  start();
  std::string id = open("nested.onnx");
  std::string cmds = "/api/documents/" + id + "/commands";
  json g = graph(id);
  ASSERT_EQ(g["nodes"].size(), 3u) << g.dump();
  int64_t loop = g["nodes"][1]["id"];
  json body = {{"steps", {{{"node", loop}, {"attribute", "body"}}}}};
  json fn = {{"function", {{"domain", "custom"}, {"name", "Twice"}}}};
  auto check = [&]() { return get("/api/documents/" + id + "/diagnostics").second["check"]; };
  auto saved_texts = [&]() {
    auto [status, saved] = post("/api/documents/" + id + "/save", json{{"path", "nested_saved.onnx"}});
    EXPECT_EQ(status, 200) << saved.dump();
    return full_check_texts(root_ / "nested_saved.onnx");
  };
  ASSERT_EQ(get("/api/documents/" + id + "/diagnostics").second["diagnostics"], json::array());

  // In the body: accumulate the int64 iteration number instead of the float carried value.
  auto [s1, a1] = post(
      cmds,
      json{{"command",
            {{"type", "connect"}, {"path", body}, {"node", "accumulate"}, {"index", 0}, {"value", "i"}}}});
  ASSERT_EQ(s1, 200) << a1.dump();
  ASSERT_FALSE(a1["diagnostics"].empty());
  EXPECT_EQ(a1["diagnostics"][0]["graph"], "main/loop.body");
  EXPECT_EQ(check()["incremental"], true);
  EXPECT_EQ(texts(a1["diagnostics"]), saved_texts());

  // Undone from the main graph's point of view: the list is empty again, still incrementally.
  auto [s2, a2] = post("/api/documents/" + id + "/undo", std::string());
  ASSERT_EQ(s2, 200) << a2.dump();
  EXPECT_EQ(a2["diagnostics"], json::array());
  EXPECT_EQ(check()["incremental"], true);

  // In the function body: an attribute Add does not have, reported under the function.
  auto [s3, a3] = post(cmds, json{{"command",
                                   {{"type", "set_attribute"},
                                    {"path", fn},
                                    {"node", "double"},
                                    {"attribute", {{"name", "axis"}, {"type", "int"}, {"value", 1}}}}}});
  ASSERT_EQ(s3, 200) << a3.dump();
  ASSERT_FALSE(a3["diagnostics"].empty());
  EXPECT_EQ(a3["diagnostics"][0]["graph"], "function custom.Twice");
  EXPECT_EQ(check()["incremental"], true);
  EXPECT_EQ(texts(a3["diagnostics"]), saved_texts());

  // A body node renamed: the Loop is checked again with its body (and its consumer), nothing else.
  auto [s4, a4] = post(
      cmds, json{{"command", {{"type", "rename_node"}, {"path", body}, {"node", "keep"}, {"name", "kept"}}}});
  ASSERT_EQ(s4, 200) << a4.dump();
  json c = check();
  EXPECT_EQ(c["incremental"], true);
  EXPECT_EQ(c["checked_nodes"], 2);
  EXPECT_EQ(texts(a4["diagnostics"]), saved_texts());
}

// Edits of the graph's values and of the model's functions (a new initializer, the Loop's trip count
// replaced by one of the wrong type, a declared type that disagrees, the function removed and put
// back): each answer's diagnostics are the ones a full check of the saved file gives, computed
// incrementally.
TEST_F(Studio, ValueAndFunctionEditsAreCheckedIncrementallyAsAFullCheckWould) {
  tessera::onnx::save_model(nested_model(), root_ / "values.onnx");
  start();
  std::string id = open("values.onnx");
  std::string cmds = "/api/documents/" + id + "/commands";
  auto check = [&]() { return get("/api/documents/" + id + "/diagnostics").second["check"]; };
  auto saved_texts = [&]() {
    auto [status, saved] = post("/api/documents/" + id + "/save", json{{"path", "values_saved.onnx"}});
    EXPECT_EQ(status, 200) << saved.dump();
    return full_check_texts(root_ / "values_saved.onnx");
  };
  auto edit = [&](const json& command, bool errors) {
    auto [status, answer] = post(cmds, json{{"command", command}});
    ASSERT_EQ(status, 200) << answer.dump();
    EXPECT_EQ(answer["diagnostics"].empty(), !errors) << answer["diagnostics"].dump();
    EXPECT_EQ(check()["incremental"], true) << command.dump();
    EXPECT_EQ(texts(answer["diagnostics"]), saved_texts()) << command.dump();
  };
  auto undo = [&]() {
    auto [status, answer] = post("/api/documents/" + id + "/undo", std::string());
    ASSERT_EQ(status, 200) << answer.dump();
    EXPECT_EQ(check()["incremental"], true);
    EXPECT_EQ(texts(answer["diagnostics"]), saved_texts());
  };
  edit({{"type", "add_initializer"}, {"tensor", {{"name", "spare"}, {"dtype", "float"}, {"shape", {2}}}}},
       false);
  edit({{"type", "replace_initializer"},
        {"tensor", {{"name", "trips"}, {"dtype", "float"}, {"shape", json::array()}, {"values", {2.0}}}}},
       true);
  undo();
  edit({{"type", "set_value_info"}, {"value", {{"name", "looped"}, {"type", "tensor(int64)"}}}}, true);
  undo();
  edit({{"type", "add_graph_input"},
        {"value", {{"name", "extra"}, {"type", "tensor(float)"}, {"shape", {3}}}}},
       false);
  edit({{"type", "remove_function"}, {"function", {{"domain", "custom"}, {"name", "Twice"}}}}, true);
  undo();
  EXPECT_EQ(get("/api/documents/" + id + "/diagnostics").second["diagnostics"], json::array());
}

// A large tensor in the tensor editor: a window of it is fetched (runs of a row each), and edited
// cells are written in place with set_initializer_values, one undo step; wrong ones are refused with
// what is wrong, the tensor unchanged.
TEST_F(Studio, InitializerWindowsAreFetchedAndEditedInPlace) {
  using namespace tessera::ir;
  Model m = relu_model();
  std::vector<float> v(15);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  m.graph.initializers.push_back(make_tensor<float>("big", DataType::kFloat, {3, 5}, v));
  tessera::onnx::save_model(m, root_ / "big.onnx");
  start();
  std::string id = open("big.onnx");
  std::string at = "/api/documents/" + id + "/initializers/big";
  auto [s1, win] = get(at + "?offset=1&limit=3&rows=2&stride=5");
  ASSERT_EQ(s1, 200) << win.dump();
  EXPECT_EQ(win["values"], json({1, 2, 3, 6, 7, 8}));
  EXPECT_EQ(win["offset"], 1);
  EXPECT_EQ(win["shape"], json({3, 5}));
  EXPECT_EQ(get(at + "?offset=13&limit=5").second["values"], json({13, 14}));  // cut at the end
  EXPECT_EQ(get(at + "?rows=-1").first, 400);
  EXPECT_EQ(get(at + "?rows=4&limit=2&stride=99").first, 400);

  std::string cmds = "/api/documents/" + id + "/commands";
  auto set = [&](int64_t offset, const char* dtype, json values) {
    return post(cmds, json{{"command",
                            {{"type", "set_initializer_values"},
                             {"name", "big"},
                             {"offset", offset},
                             {"dtype", dtype},
                             {"values", std::move(values)}}}});
  };
  auto [s2, a2] = set(6, "float", {100.5, -2e-7});
  ASSERT_EQ(s2, 200) << a2.dump();
  EXPECT_EQ(a2["document"]["undo"], "Edit initializer 'big'");
  json after = get(at + "?limit=15").second["values"];
  EXPECT_EQ(after[5], 5.0);
  EXPECT_EQ(after[6], 100.5);
  EXPECT_FLOAT_EQ(after[7].get<float>(), -2e-7f);
  EXPECT_EQ(after[8], 8.0);

  auto [s3, a3] = set(14, "float", {1, 2});
  EXPECT_EQ(s3, 409);
  EXPECT_EQ(a3["error"], "values [14, 16) lie outside initializer 'big', which has 15 elements");
  auto [s4, a4] = set(0, "int64", {1});
  EXPECT_EQ(s4, 409);
  EXPECT_EQ(a4["error"], "initializer 'big' holds float, the values given are int64");
  auto [s5, a5] = set(-1, "float", {1});
  EXPECT_EQ(s5, 400);
  EXPECT_NE(a5["error"].get<std::string>().find("'offset' must be a non-negative integer"),
            std::string::npos);
  EXPECT_EQ(get(at + "?limit=15").second["values"], after);  // refused edits changed nothing

  ASSERT_EQ(post("/api/documents/" + id + "/undo", std::string()).first, 200);
  EXPECT_EQ(get(at + "?limit=15").second["values"], json(v));
  // Saved and loaded again: the edit (redone) is in the file.
  ASSERT_EQ(post("/api/documents/" + id + "/redo", std::string()).first, 200);
  ASSERT_EQ(post("/api/documents/" + id + "/save", json::object()).first, 200);
  Model back = tessera::onnx::load_model(root_ / "big.onnx");
  const Tensor* t = back.graph.find_initializer("big");
  ASSERT_NE(t, nullptr);
  float saved[15];
  std::memcpy(saved, t->bytes().data(), sizeof(saved));
  EXPECT_EQ(saved[6], 100.5f);
  EXPECT_EQ(saved[9], 9.0f);
}

// Model properties (nothing selected): the graph answer carries the model's name and metadata, and
// set_model_metadata edits them, the name too, as one undo step.
TEST_F(Studio, ModelPropertiesIncludeTheNameAndAreEdited) {
  start();
  std::string id = open("a.onnx");
  json md = graph(id)["metadata"];
  EXPECT_EQ(md["graph_name"], "main");
  EXPECT_EQ(md["ir_version"], 8);
  auto [s, a] =
      post("/api/documents/" + id + "/commands",
           json{{"command", {{"type", "set_model_metadata"}, {"graph_name", "net"}, {"model_version", 7}}}});
  ASSERT_EQ(s, 200) << a.dump();
  md = graph(id)["metadata"];
  EXPECT_EQ(md["graph_name"], "net");
  EXPECT_EQ(md["model_version"], 7);
  ASSERT_EQ(post("/api/documents/" + id + "/undo", std::string()).first, 200);
  md = graph(id)["metadata"];
  EXPECT_EQ(md["graph_name"], "main");
  EXPECT_EQ(md["model_version"], 0);
}
