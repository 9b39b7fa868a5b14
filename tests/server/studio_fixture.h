// The studio's server in-process on a free port, driven over HTTP with httplib's client: the fixture
// and the small models the server tests share.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "ir/builder.h"
#include "onnx/onnx_io.h"
#include "server/studio.h"

namespace tessera_studio_test {

namespace fs = std::filesystem;
using tessera::ir::json;

// An empty model for a test to build: IR 8, opset "" 17, main graph "main".
inline tessera::ir::Model empty_model() {
  tessera::ir::Model m;
  m.ir_version = 8;
  m.opset_imports.push_back({"", 17});
  m.graph.name = "main";
  return m;
}

inline tessera::ir::Model relu_model() {
  using namespace tessera::ir;
  Model m = empty_model();
  GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, Shape{Dim::symbol("N"), Dim::of(4)}));
  b.output(b.node("Relu", {x}, {}, "/block/relu"));
  return m;
}

// x -> relu (r) -> Loop whose body adds the outer value r to what it carries -> custom.Twice (a local
// function: Add(X, X)) -> y.
inline tessera::ir::Model nested_model() {
  using namespace tessera::ir;
  Model m = relu_model();
  m.opset_imports.push_back({"custom", 1});
  Graph& g = m.graph;
  std::string r = g.nodes[0].outputs[0];
  g.outputs.clear();
  GraphBuilder b(g);
  b.initializer(make_tensor<int64_t>("trips", DataType::kInt64, {}, std::vector<int64_t>{2}));
  b.initializer(make_tensor<uint8_t>("go", DataType::kBool, {}, std::vector<uint8_t>{1}));
  Graph body;
  body.name = "body";
  body.inputs = {ValueInfo{"i", Type::tensor(DataType::kInt64, Shape{}), {}, {}},
                 ValueInfo{"c", Type::tensor(DataType::kBool, Shape{}), {}, {}}, ValueInfo{"v", {}, {}, {}}};
  GraphBuilder bb(body);
  std::string c_out = bb.node("Identity", {"c"}, {}, "keep");
  std::string v_out = bb.node("Add", {"v", r}, {}, "accumulate");
  body.outputs = {ValueInfo{c_out, {}, {}, {}}, ValueInfo{v_out, {}, {}, {}}};
  Node loop;
  loop.name = "loop";
  loop.op_type = "Loop";
  loop.inputs = {"trips", "go", r};
  loop.outputs = {"looped"};
  loop.attributes.push_back(Attribute::of_graph("body", std::move(body)));
  g.add_node(std::move(loop));
  Function f;
  f.domain = "custom";
  f.name = "Twice";
  f.opset_imports = {{"", 17}};
  f.body.name = "Twice";
  f.body.inputs = {ValueInfo{"X", {}, {}, {}}};
  f.body.outputs = {ValueInfo{"Y", {}, {}, {}}};
  Node twice;
  twice.name = "double";
  twice.op_type = "Add";
  twice.inputs = {"X", "X"};
  twice.outputs = {"Y"};
  f.body.add_node(std::move(twice));
  m.functions.push_back(std::move(f));
  b.output(b.nodes("Twice", {"looped"}, {}, "call", 1, "custom")[0]);
  return m;
}

class Studio : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("tessera_studio_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    root_ = base_ / "root";
    fs::create_directories(root_ / "sub");
    fs::create_directories(base_ / "outside");
    tessera::onnx::save_model(relu_model(), root_ / "a.onnx");
    tessera::onnx::save_model(relu_model(), root_ / "sub" / "b.onnx");
    tessera::onnx::save_model(relu_model(), base_ / "outside" / "secret.onnx");
    fs::create_symlink(base_ / "outside" / "secret.onnx", root_ / "link.onnx");
    fs::create_directories(base_ / "web" / "assets");
    std::ofstream(base_ / "web" / "index.html") << "<!doctype html><title>app</title>";
    std::ofstream(base_ / "web" / "assets" / "app.js") << "console.log(1)";
  }
  void TearDown() override {
    stop();
    fs::remove_all(base_);
  }

  void start(fs::path web_root = {}) {
    tessera::server::StudioOptions o;
    o.root = root_;
    o.web_root = std::move(web_root);
    o.tools_file = tools_file_.empty() ? base_ / "no-tools.json" : tools_file_;
    studio_ = std::make_unique<tessera::server::Studio>(o);
    studio_->bind();
    thread_ = std::thread([this] { studio_->run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", studio_->port());
    client_->set_read_timeout(30);
  }
  void stop() {
    if (!studio_) return;
    studio_->stop();
    thread_.join();
    studio_.reset();
  }

  httplib::Headers auth(httplib::Headers extra = {}) {
    extra.emplace("X-Tessera-Token", studio_->token());
    return extra;
  }
  // status and parsed body
  std::pair<int, json> get(const std::string& path, httplib::Headers h = {}) {
    auto r = client_->Get(path.c_str(), h.empty() ? auth() : h);
    EXPECT_TRUE(r) << path;
    if (!r) return {0, json()};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  std::pair<int, json> post(const std::string& path, const std::string& body, httplib::Headers h = {}) {
    auto r = client_->Post(path.c_str(), h.empty() ? auth() : h, body, "application/json");
    EXPECT_TRUE(r) << path;
    if (!r) return {0, json()};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  std::pair<int, json> post(const std::string& path, const json& body) { return post(path, body.dump()); }
  std::string open(const std::string& path) {
    auto [status, doc] = post("/api/documents/open", json{{"path", path}});
    EXPECT_EQ(status, 200) << doc.dump();
    return doc.value("id", "");
  }
  json graph(const std::string& id) { return get("/api/documents/" + id + "/graph").second; }

  fs::path base_, root_;
  fs::path tools_file_;  // the studio's tools file; empty: one that does not exist
  std::unique_ptr<tessera::server::Studio> studio_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

inline std::string error_of(const json& j) {
  return j.is_object() ? j.value("error", "") : "";
}

}  // namespace tessera_studio_test
