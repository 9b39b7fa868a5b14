// What an edit's answer says about its own cost: the answer's "timing" (parse, command, check, answer)
// and the Server-Timing header (those, the serialisation and the total), which the benchmarks read to
// tell the server's work from the wait for it; and the node list's room for additions.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "server/document.h"
#include "server/studio_fixture.h"

namespace {

using namespace tessera_studio_test;

// "dump;dur=0.012, total;dur=1.5, parse;dur=0.01" -> {dump: 0.012, total: 1.5, parse: 0.01}
std::map<std::string, double> server_timing(const std::string& header) {
  std::map<std::string, double> out;
  std::stringstream ss(header);
  for (std::string part; std::getline(ss, part, ',');) {
    size_t name = part.find_first_not_of(' ');
    size_t semi = part.find(";dur=");
    if (name == std::string::npos || semi == std::string::npos) continue;
    out[part.substr(name, semi - name)] = std::stod(part.substr(semi + 5));
  }
  return out;
}

TEST_F(Studio, EditAnswersSayWhereTheServersTimeWent) {
  start();
  std::string id = open("a.onnx");
  json g = graph(id);
  int64_t node = g["nodes"][0]["id"];
  std::string cmds = "/api/documents/" + id + "/commands";
  json rename{{"command", {{"type", "rename_node"}, {"node", node}, {"name", "renamed"}}}};
  for (const std::string& path : {cmds, "/api/documents/" + id + "/undo"}) {
    auto r = client_->Post(path.c_str(), auth(), path == cmds ? rename.dump() : "{}", "application/json");
    ASSERT_TRUE(r) << path;
    ASSERT_EQ(r->status, 200) << r->body;
    json a = json::parse(r->body);
    ASSERT_TRUE(a.contains("timing")) << path;
    for (const char* k : {"parse", "command", "check", "answer"}) {
      ASSERT_TRUE(a["timing"].contains(k)) << path << " " << k;
      EXPECT_GE(a["timing"][k].get<double>(), 0) << path << " " << k;
    }
    std::map<std::string, double> t = server_timing(r->get_header_value("Server-Timing"));
    for (const char* k : {"parse", "command", "check", "answer", "dump", "total"})
      EXPECT_TRUE(t.count(k)) << path << ": " << r->get_header_value("Server-Timing") << " has no " << k;
    // The total runs from the request to the serialised answer: it holds the parts.
    EXPECT_GE(t["total"] + 1e-3, t["command"] + t["check"] + t["answer"] + t["dump"]) << path;
    EXPECT_NEAR(t["command"], a["timing"]["command"].get<double>(), 1e-3);
  }
  EXPECT_EQ(graph(id)["nodes"][0]["name"], g["nodes"][0]["name"]);  // the undo's answer was of an undo
  // A refused command answers its error, without timings.
  auto bad =
      client_->Post(cmds.c_str(), auth(), json{{"command", {{"type", "remove_node"}, {"node", 99}}}}.dump(),
                    "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 409);
  EXPECT_EQ(bad->get_header_value("Server-Timing"), "");
}

TEST_F(Studio, AnOpenedModelsNodeListHasRoomForAdditions) {
  // A list at capacity moved every node to a new buffer on the first add_node (tens of ms at 50,000).
  auto doc = tessera::server::open_document("d1", root_ / "a.onnx");
  const auto& nodes = doc->model().graph.nodes;
  EXPECT_GE(nodes.capacity(), nodes.size() + 64);
}

}  // namespace
