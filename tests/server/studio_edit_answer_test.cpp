// What an edit's answer says about its own cost: the answer's "timing" (parse, command, check, answer)
// and the Server-Timing header (those, the serialisation and the total), which the benchmarks read to
// tell the server's work from the wait for it; and the node list's room for additions.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <sstream>

#include "ir/builder.h"
#include "ir/commands/commands.h"
#include "onnx/onnx_io.h"
#include "server/diagnostics.h"
#include "server/diagnostics_push.h"
#include "server/document.h"
#include "server/events.h"
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

using tessera::server::apply_diagnostics_diff;
using tessera::server::diagnostics_diff;

namespace diff_test {

json item(const std::string& text) {
  return json{{"text", text}};
}

TEST(DiagnosticsDiff, TurnsOneListIntoTheOtherWhereverTheyDiffer) {
  json a = json::array({item("a"), item("b"), item("c"), item("d")});
  for (json b : {json::array({item("a"), item("x"), item("c"), item("d")}),             // one replaced
                 json::array({item("a"), item("b"), item("c"), item("d"), item("e")}),  // appended
                 json::array({item("z"), item("b"), item("c"), item("y")}),             // both ends
                 json::array(), json::array({item("b"), item("b")}), a}) {
    json d = diagnostics_diff(a, b);
    EXPECT_EQ(apply_diagnostics_diff(a, d), b) << d.dump();
    EXPECT_EQ(apply_diagnostics_diff(b, diagnostics_diff(b, a)), a);
  }
  // Only what changed travels.
  json one = diagnostics_diff(a, json::array({item("a"), item("x"), item("c"), item("d")}));
  EXPECT_EQ(one["removed"], json::array({1}));
  EXPECT_EQ(one["added"].size(), 1u);
  EXPECT_THROW(apply_diagnostics_diff(json::array(), one), std::invalid_argument);
}

}  // namespace diff_test

// The app sends the version of the list it holds; each answer then carries what changed from it, and
// applying the answers in turn gives the server's full list after every edit.
TEST_F(Studio, EditAnswersCarryTheDiagnosticsDiffFromTheClientsList) {
  start();
  std::string id = open("a.onnx");
  std::string doc = "/api/documents/" + id;
  auto [status, full] = get(doc + "/diagnostics");
  ASSERT_EQ(status, 200);
  json held = full["diagnostics"];
  uint64_t version = full["diagnostics_version"];
  int64_t relu = graph(id)["nodes"][0]["id"];
  json add{{"type", "add_node"},
           {"node", {{"name", "extra"}, {"op_type", "Relu"}, {"inputs", {"x"}}, {"outputs", {"extra_out"}}}}};
  auto send = [&](const std::string& what, json body) {
    body["diagnostics_since"] = version;
    auto [s, a] = post(doc + "/" + what, body);
    EXPECT_EQ(s, 200) << a.dump();
    return a;
  };
  auto command = [&](json c) { return send("commands", json{{"command", std::move(c)}}); };
  int64_t extra = 0;
  int diffs = 0;
  std::vector<std::function<json()>> edits = {
      [&] {
        json a = command(add);
        extra = a["node_ids"][0];
        return a;
      },
      [&] {
        return command({{"type", "disconnect"}, {"node", extra}, {"index", 0}});
      },  // "not connected"
      [&] {
        return command({{"type", "disconnect"}, {"node", relu}, {"index", 0}});
      },
      [&] {
        return command({{"type", "connect"}, {"node", extra}, {"index", 0}, {"value", "x"}});
      },
      [&] {
        return command({{"type", "rename_node"}, {"node", relu}, {"name", "renamed"}});
      },
      [&] {
        return command({{"type", "remove_node"}, {"node", extra}});
      },
      [&] { return send("undo", json::object()); },
      [&] { return send("undo", json::object()); },
      [&] { return send("redo", json::object()); },
      [&] {
        return command({{"type", "connect"}, {"node", relu}, {"index", 0}, {"value", "x"}});
      },
  };
  size_t most = 0;
  for (size_t k = 0; k < edits.size(); ++k) {
    json a = edits[k]();
    ASSERT_TRUE(a.contains("diagnostics_diff")) << "edit " << k << ": " << a.dump();
    EXPECT_FALSE(a.contains("diagnostics")) << "edit " << k;
    const json& d = a["diagnostics_diff"];
    EXPECT_EQ(d["base"], version);
    EXPECT_EQ(d["version"], a["diagnostics_version"]);
    EXPECT_EQ(a["diagnostics_partial"], false);
    held = apply_diagnostics_diff(held, d);
    version = d["version"];
    EXPECT_EQ(held, get(doc + "/diagnostics").second["diagnostics"]) << "edit " << k;
    most = std::max(most, held.size());
    ++diffs;
  }
  EXPECT_GE(most, 2u);  // the sequence made findings come and go
  // A client holding another version (a gap: an answer it missed) gets the whole list.
  auto [s, a] =
      post(doc + "/commands", json{{"command", {{"type", "rename_node"}, {"node", relu}, {"name", "again"}}},
                                   {"diagnostics_since", version - 1}});
  ASSERT_EQ(s, 200);
  EXPECT_FALSE(a.contains("diagnostics_diff"));
  EXPECT_EQ(a["diagnostics"], get(doc + "/diagnostics").second["diagnostics"]);
  // Without diagnostics_since, the whole list, as before.
  auto [s2, b] = post(doc + "/undo", json::object());
  ASSERT_EQ(s2, 200);
  EXPECT_TRUE(b.contains("diagnostics"));
  auto [s3, bad] = post(doc + "/undo", json{{"diagnostics_since", -1}});
  EXPECT_EQ(s3, 400) << bad.dump();
}

// x [1, 8] -> Neg -> ... -> Neg -> Tanh, longer than an edit answer's budget; y: an int64 input, which
// Neg takes and Tanh does not.
constexpr int kChainNodes = static_cast<int>(tessera::server::Document::kAnswerBudget) + 500;
tessera::ir::Model budget_chain() {
  using namespace tessera::ir;
  Model m;
  m.ir_version = 8;
  m.opset_imports.push_back({"", 17});
  GraphBuilder b(m.graph);
  std::string v = b.input("x", Type::tensor(DataType::kFloat, Shape{Dim::of(1), Dim::of(8)}));
  b.input("y", Type::tensor(DataType::kInt64, Shape{Dim::of(3)}));
  for (int i = 0; i < kChainNodes; ++i)
    v = b.node(i + 1 < kChainNodes ? "Neg" : "Tanh", {v}, {}, "n" + std::to_string(i));
  b.output(v);
  return m;
}

std::vector<std::string> texts(const json& list) {
  std::vector<std::string> out;
  for (const json& d : list) out.push_back(d["text"]);
  return out;
}

// An edit at the head of a chain longer than the answer's budget: the answer comes with the edited
// node's findings and says it is partial; GET diagnostics finishes the check and equals a full check
// of the same model (the saved copy, opened fresh).
TEST_F(Studio, AnEditPastTheAnswersBudgetAnswersPartlyAndTheListFinishesOnRead) {
  const int n = kChainNodes;
  tessera::onnx::save_model(budget_chain(), root_ / "chain.onnx");
  start();
  std::string id = open("chain.onnx");
  std::string doc = "/api/documents/" + id;
  json full = get(doc + "/diagnostics").second;
  int64_t head = graph(id)["nodes"][0]["id"];
  auto edit = [&](json command, const json& since) {
    auto [status, a] =
        post(doc + "/commands", json{{"command", std::move(command)}, {"diagnostics_since", since}});
    EXPECT_EQ(status, 200) << a.dump().substr(0, 300);
    return a;
  };
  // Connected to an int64 input: Neg takes it down the chain to the last node, a Tanh, which does not.
  json a =
      edit({{"type", "connect"}, {"node", head}, {"index", 0}, {"value", "y"}}, full["diagnostics_version"]);
  EXPECT_EQ(a["diagnostics_partial"], true);
  json held = apply_diagnostics_diff(full["diagnostics"], a["diagnostics_diff"]);
  EXPECT_TRUE(held.empty());  // the Tanh is past the budget
  auto [s2, done] = get(doc + "/diagnostics");
  ASSERT_EQ(s2, 200);
  EXPECT_NE(done["diagnostics_version"], a["diagnostics_version"]);  // the finished list differs
  ASSERT_EQ(done["diagnostics"].size(), 1u) << done.dump().substr(0, 300);
  EXPECT_EQ(done["diagnostics"][0]["node"], "n" + std::to_string(n - 1));
  ASSERT_EQ(post(doc + "/save", json{{"path", "chain2.onnx"}}).first, 200);
  std::string fresh = open("chain2.onnx");
  EXPECT_EQ(texts(done["diagnostics"]),
            texts(get("/api/documents/" + fresh + "/diagnostics").second["diagnostics"]));
  // Disconnected: the head's own finding is in the answer at once; the diff applies to the finished list.
  json d = edit({{"type", "disconnect"}, {"node", head}, {"index", 0}}, done["diagnostics_version"]);
  EXPECT_EQ(d["diagnostics_partial"], true);
  ASSERT_TRUE(d.contains("diagnostics_diff")) << d.dump().substr(0, 300);
  held = apply_diagnostics_diff(done["diagnostics"], d["diagnostics_diff"]);
  bool head_finding = false;
  for (const json& x : held) head_finding |= x["node"] == "n0";
  EXPECT_TRUE(head_finding) << held.dump().substr(0, 300);
  json after = get(doc + "/diagnostics").second["diagnostics"];
  ASSERT_EQ(after.size(), 1u) << after.dump().substr(0, 300);
  EXPECT_EQ(after[0]["node"], "n0");
}

// The "diagnostics" events of GET /api/events?from=`from` until one has base `base` (or 60 s pass).
json pushed_after(httplib::Client& c, const httplib::Headers& auth, uint64_t from, uint64_t base) {
  c.set_read_timeout(2);
  json found;
  std::string buffer;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto receive = [&](const char* data, size_t n) {
    buffer.append(data, n);
    for (size_t end; (end = buffer.find("\n\n")) != std::string::npos;) {
      std::string frame = buffer.substr(0, end);
      buffer.erase(0, end + 2);
      if (frame.find("event: diagnostics\n") == std::string::npos) continue;
      json e = json::parse(frame.substr(frame.find("data: ") + 6));
      if (e["base"] == base) found = e;
    }
    return found.is_null() && std::chrono::steady_clock::now() < deadline;
  };
  while (found.is_null() && std::chrono::steady_clock::now() < deadline)
    c.Get(fmt::format("/api/events?from={}", from), auth, receive);
  return found;
}

// The finished list after a partial answer is pushed without being asked for: an event naming the
// document and the partial list's version, whose diff turns the partial list into the finished one
// (equal to a fresh full check); the next edit's answer is a diff from it.
TEST_F(Studio, APartialAnswersFinishedListIsPushedAsADiffFromIt) {
  tessera::onnx::save_model(budget_chain(), root_ / "chain.onnx");
  start();
  std::string id = open("chain.onnx");
  std::string doc = "/api/documents/" + id;
  json full = get(doc + "/diagnostics").second;
  int64_t head = graph(id)["nodes"][0]["id"];
  json connect{{"type", "connect"}, {"node", head}, {"index", 0}, {"value", "y"}};
  auto [status, a] =
      post(doc + "/commands", json{{"command", connect}, {"diagnostics_since", full["diagnostics_version"]}});
  ASSERT_EQ(status, 200) << a.dump().substr(0, 300);
  ASSERT_EQ(a["diagnostics_partial"], true);
  json held = apply_diagnostics_diff(full["diagnostics"], a["diagnostics_diff"]);
  httplib::Client events("127.0.0.1", studio_->port());
  json e = pushed_after(events, auth(), 0, a["diagnostics_version"]);
  ASSERT_FALSE(e.is_null()) << "no diagnostics event";
  EXPECT_EQ(e["document"], id);
  EXPECT_EQ(e["version"], a["document"]["version"]);
  EXPECT_EQ(e["diagnostics_diff"]["base"], a["diagnostics_version"]);
  EXPECT_EQ(e["diagnostics_diff"]["version"], e["diagnostics_version"]);
  json finished = apply_diagnostics_diff(held, e["diagnostics_diff"]);
  ASSERT_EQ(finished.size(), 1u) << finished.dump().substr(0, 300);
  EXPECT_EQ(finished[0]["node"], "n" + std::to_string(kChainNodes - 1));
  ASSERT_EQ(post(doc + "/save", json{{"path", "chain2.onnx"}}).first, 200);
  std::string fresh = open("chain2.onnx");
  EXPECT_EQ(texts(finished), texts(get("/api/documents/" + fresh + "/diagnostics").second["diagnostics"]));
  // A read now gives the pushed list, at the pushed version; the next edit's diff is from it.
  json read = get(doc + "/diagnostics").second;
  EXPECT_EQ(read["diagnostics_version"], e["diagnostics_version"]);
  EXPECT_EQ(texts(read["diagnostics"]), texts(finished));
  auto [s2, d] =
      post(doc + "/commands", json{{"command", {{"type", "disconnect"}, {"node", head}, {"index", 0}}},
                                   {"diagnostics_since", e["diagnostics_version"]}});
  ASSERT_EQ(s2, 200);
  ASSERT_TRUE(d.contains("diagnostics_diff")) << d.dump().substr(0, 300);
  EXPECT_EQ(d["diagnostics_diff"]["base"], e["diagnostics_version"]);
}

// DiagnosticsPush on its own: it finishes the list and publishes it when the partial list is the last
// one sent, and publishes nothing when a read sent the finished list first.
TEST(DiagnosticsPush, PublishesTheFinishedListOnlyWhenThePartialOneIsTheLastSent) {
  using tessera::server::Document;
  tessera::server::EventLog log;
  tessera::server::DiagnosticsPush push(log, [](const std::string&) { return nullptr; });
  Document doc("d1", budget_chain(), std::nullopt, "chain");
  auto sent = [&](const tessera::server::IncrementalChecker& c) {
    return doc.set_sent_diagnostics(tessera::server::diagnostics_json(doc.model(), c.result().diagnostics));
  };
  sent(doc.checker());
  tessera::ir::NodeId head = doc.model().graph.nodes[0].id;
  auto connect = [&](const std::string& value) {
    std::lock_guard lock(doc.mutex());
    doc.edit([&](tessera::ir::History& h) {
      h.execute(std::make_unique<tessera::ir::Connect>(tessera::ir::GraphPath::main_graph(), head, 0, value));
    });
    EXPECT_FALSE(doc.answer_checker().complete());
    return sent(doc.answer_checker());
  };
  uint64_t partial = connect("y");
  json partial_list = doc.sent_diagnostics();
  push.finish(doc, partial);
  std::vector<tessera::server::Event> events = log.after(0, std::chrono::milliseconds(0));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "diagnostics");
  json e = json::parse(events[0].data);
  EXPECT_EQ(e["document"], "d1");
  EXPECT_EQ(e["base"], partial);
  EXPECT_EQ(e["diagnostics_version"], doc.sent_diagnostics_version());
  EXPECT_EQ(apply_diagnostics_diff(partial_list, e["diagnostics_diff"]), doc.sent_diagnostics());
  EXPECT_EQ(texts(doc.sent_diagnostics()),
            texts(tessera::server::diagnostics_json(doc.model(),
                                                    tessera::check::check_model(doc.model()).diagnostics)));
  // Back to x; a read finishes the list before the push gets to it: nothing more is published.
  uint64_t again = connect("x");
  {
    std::lock_guard lock(doc.mutex());
    sent(doc.checker());
  }
  push.finish(doc, again);
  EXPECT_EQ(log.last(), events[0].seq);
}

}  // namespace
