// The Model menu's transformations as background jobs and the pushed event stream: a job started by one
// request, its progress and end pushed as Server-Sent Events, the document edited only when it succeeds
// (one undo step), cancel, edits refused while a job runs, an extraction opening a new document, the
// stream's token, and user tools' output pushed on the same stream.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <set>

#include "io/npy.h"
#include "runtime/session.h"
#include "server/studio_fixture.h"
#include "server/transform_api.h"
#include "transforms/user_tools.h"

namespace {

using namespace tessera_studio_test;
using tessera::ir::DataType;
using tessera::ir::Model;
using Clock = std::chrono::steady_clock;

// x [N, 4] -> MatMul W -> Add B -> Relu -> y
Model mlp_model() {
  using namespace tessera::ir;
  Model m = empty_model();
  GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, Shape{Dim::symbol("N"), Dim::of(4)}));
  std::vector<float> w(12);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25f * static_cast<float>(i) - 1.0f;
  b.initializer(make_tensor<float>("W", DataType::kFloat, {4, 3}, w));
  b.initializer(make_tensor<float>("B", DataType::kFloat, {3}, std::vector<float>{0.5f, -0.5f, 0.25f}));
  std::string mm = b.node("MatMul", {x, "W"}, {}, "mm");
  std::string add = b.node("Add", {mm, "B"}, {}, "add");
  b.output(b.node("Relu", {add}, {}, "relu"));
  return m;
}

// A model amp takes a while on: `layers` x (MatMul, Tanh) on a [512, 512] input, so that a job can be
// watched and cancelled while it runs (uncancelled, the search takes seconds; the test acts within
// milliseconds of its first progress event). The weights are pseudo-random at scale 1/sqrt(width), so that
// the values stay in Tanh's curved range: float16 then differs from float32 at every layer (a structured or
// larger weight saturates Tanh to exactly +-1 in both, and the whole model passes in float16 at once).
Model slow_model(int layers, int64_t width = 512) {
  using namespace tessera::ir;
  Model m = empty_model();
  GraphBuilder b(m.graph);
  const int64_t kWidth = width;
  std::string v = b.input("x", Type::tensor(DataType::kFloat, Shape{Dim::of(kWidth), Dim::of(kWidth)}));
  std::vector<float> w(kWidth * kWidth);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  const float scale = 2.0f / std::sqrt(static_cast<float>(kWidth));  // uniform [-1, 1) x this
  for (int l = 0; l < layers; ++l) {
    for (float& e : w) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      e = (static_cast<float>(state >> 40) / 8388608.0f - 1.0f) * scale;
    }
    std::string name = fmt::format("W{}", l);
    b.initializer(make_tensor<float>(name, DataType::kFloat, {kWidth, kWidth}, w));
    v = b.node("MatMul", {v, name}, {}, fmt::format("mm{}", l));
    v = b.node("Tanh", {v}, {}, fmt::format("tanh{}", l));
  }
  b.output(v);
  return m;
}

// A model whose one run takes about a second here (longer under load) in little memory: `layers` x
// (MatMul by the graph input w, Tanh) on [width, width] values. The weight is an input, not an
// initializer, so that the kernels keep no packed copy of it per layer.
Model long_run_model(int layers, int64_t width) {
  using namespace tessera::ir;
  Model m = empty_model();
  GraphBuilder b(m.graph);
  Type t = Type::tensor(DataType::kFloat, Shape{Dim::of(width), Dim::of(width)});
  std::string v = b.input("x", t), w = b.input("w", t);
  for (int l = 0; l < layers; ++l) {
    v = b.node("MatMul", {v, w}, {}, fmt::format("mm{}", l));
    v = b.node("Tanh", {v}, {}, fmt::format("tanh{}", l));
  }
  b.output(v);
  return m;
}

struct StreamEvent {
  uint64_t id = 0;
  std::string type;
  json data;
};

class StudioJobs : public Studio {
 protected:
  // Reads GET /api/events?from=`from` (a client of its own: the stream does not end) until `until` is
  // true of an event read, or `limit` passes. Returns the events read.
  std::vector<StreamEvent> read_events(uint64_t from, const std::function<bool(const StreamEvent&)>& until,
                                       std::chrono::seconds limit = std::chrono::seconds(60)) {
    httplib::Client c("127.0.0.1", studio_->port());
    c.set_read_timeout(2);
    std::vector<StreamEvent> events;
    std::string buffer;
    bool ended = false;
    auto deadline = Clock::now() + limit;
    auto receive = [&](const char* data, size_t n) {
      buffer.append(data, n);
      for (size_t end; (end = buffer.find("\n\n")) != std::string::npos;) {
        std::string frame = buffer.substr(0, end);
        buffer.erase(0, end + 2);
        StreamEvent e;
        std::stringstream ss(frame);
        for (std::string line; std::getline(ss, line);) {
          if (line.starts_with("id: ")) e.id = std::stoull(line.substr(4));
          if (line.starts_with("event: ")) e.type = line.substr(7);
          if (line.starts_with("data: ")) e.data = json::parse(line.substr(6));
        }
        if (e.type.empty()) continue;  // a keep-alive comment
        events.push_back(e);
        if (until(e)) ended = true;
      }
      return !ended && Clock::now() < deadline;
    };
    // A read timeout between events ends one request: the next goes on from the last event seen.
    while (!ended && Clock::now() < deadline) {
      uint64_t after = events.empty() ? from : events.back().id;
      buffer.clear();
      auto r = c.Get(fmt::format("/api/events?from={}", after), auth(), receive);
      if (r && r->status != 200) ADD_FAILURE() << "events answered " << r->status;
    }
    return events;
  }
  // The events of job `id` until it ends; the last is its end.
  std::vector<json> job_events(const std::string& id, uint64_t from = 0) {
    std::vector<json> out;
    read_events(from, [&](const StreamEvent& e) {
      if (e.type != "job" || e.data["id"] != id) return false;
      out.push_back(e.data);
      return e.data["state"] != "running";
    });
    return out;
  }
  json start_job(const std::string& doc, const std::string& transform, const json& options, int want = 202) {
    auto [s, j] =
        post("/api/documents/" + doc + "/jobs", json{{"transform", transform}, {"options", options}});
    EXPECT_EQ(s, want) << j.dump();
    return j;
  }
  json wait_job(const std::string& id) {
    json j;
    for (int i = 0; i < 1200; ++i) {
      j = get("/api/jobs/" + id).second;
      if (j.value("state", "") != "running") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return j;
  }
  int64_t version(const std::string& doc) { return get("/api/documents/" + doc).second["version"]; }
};

TEST_F(StudioJobs, AJobRunsInTheBackgroundPushesItsEndAndAppliesOneUndoStep) {
  tessera::onnx::save_model(mlp_model(), root_ / "mlp.onnx");
  start();
  std::string doc = open("mlp.onnx");
  json job = start_job(doc, "fp16", {{"keep_io_types", true}});
  ASSERT_EQ(job["state"], "running");
  ASSERT_EQ(job["transform"], "fp16");
  std::vector<json> events = job_events(job["id"]);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front()["state"], "running");  // the start, pushed too
  EXPECT_EQ(events.back()["state"], "succeeded") << events.back().dump();
  EXPECT_FALSE(events.back().contains("answer"));  // the answer is fetched, not pushed
  json done = get("/api/jobs/" + job["id"].get<std::string>()).second;
  ASSERT_EQ(done["state"], "succeeded") << done.dump();
  EXPECT_EQ(done["progress"], 1.0);
  const json& a = done["answer"];
  EXPECT_EQ(a["log"]["changed"], true) << a.dump();
  EXPECT_EQ(a["document"]["dirty"], true);
  EXPECT_EQ(a["document"]["undo"], "Convert to float16") << a["document"].dump();
  EXPECT_FALSE(a["changes"].empty());
  // One undo gives the original back.
  ASSERT_EQ(post("/api/documents/" + doc + "/undo", std::string()).first, 200);
  ASSERT_EQ(post("/api/documents/" + doc + "/save", json{{"path", "undone.onnx"}}).first, 200);
  EXPECT_TRUE(tessera::onnx::load_model(root_ / "mlp.onnx") ==
              tessera::onnx::load_model(root_ / "undone.onnx"));
}

TEST_F(StudioJobs, RefusalsAreAnswersOrFailedJobsNamingWhy) {
  tessera::onnx::save_model(mlp_model(), root_ / "mlp.onnx");
  start();
  std::string doc = open("mlp.onnx");
  json unknown = start_job(doc, "fp8", json::object(), 404);
  EXPECT_NE(error_of(unknown).find("no transformation 'fp8' (known: extract, amp,"), std::string::npos)
      << unknown.dump();
  json no_kind = start_job(doc, "extract", json::object(), 400);
  EXPECT_EQ(error_of(no_kind),
            "give exactly one of 'subgraph' (NODE:ATTR), 'function' (DOMAIN:NAME) or a cut ('inputs' and "
            "'outputs')");
  // Refused by the transformation itself: the job fails with its message, the document unchanged.
  json blocked = wait_job(start_job(doc, "fp16", {{"node_block_list", "nope"}})["id"]);
  EXPECT_EQ(blocked["state"], "failed");
  EXPECT_EQ(blocked["status"], 422);
  EXPECT_NE(blocked.value("error", "").find("nope"), std::string::npos) << blocked.dump();
  json bad_option = wait_job(start_job(doc, "amp", {{"rtol", "big"}})["id"]);
  EXPECT_EQ(bad_option["status"], 400);
  EXPECT_EQ(bad_option["error"], "option 'rtol' must be a number of at least 0");
  json outside = wait_job(start_job(doc, "amp", {{"inputs", {{"x", "../outside/x.npy"}}}})["id"]);
  EXPECT_EQ(outside["status"], 403) << outside.dump();
  json no_input = wait_job(start_job(doc, "amp", {{"inputs", {{"y", "x.npy"}}}})["id"]);
  EXPECT_EQ(no_input["status"], 400) << no_input.dump();
  EXPECT_EQ(no_input["error"], "option 'inputs': the model has no input 'y' (file 'x.npy')");
  EXPECT_EQ(version(doc), 0);
  EXPECT_EQ(get("/api/jobs/j999").first, 404);
}

TEST_F(StudioJobs, AmpTakesInputsFromNpyFilesAndReportsWhatStayedFloat32) {
  tessera::onnx::save_model(mlp_model(), root_ / "mlp.onnx");
  // Values float16 rounds (0.1 is not a binary fraction).
  std::vector<float> x(8 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  tessera::io::write_npy(tessera::ir::make_tensor<float>("x", DataType::kFloat, {8, 4}, x), root_ / "x.npy");
  start();
  std::string doc = open("mlp.onnx");
  auto count = [](const json& log, const std::string& what) {
    for (const json& c : log["counts"])
      if (c[0] == what) return c[1].get<int64_t>();
    return int64_t{-1};
  };
  // A tolerance float16 cannot meet on these inputs: nodes stay float32, each with the error it caused.
  json tight =
      wait_job(start_job(doc, "amp", {{"inputs", {{"x", "x.npy"}}}, {"rtol", 0}, {"atol", 1e-9}})["id"]);
  ASSERT_EQ(tight["state"], "succeeded") << tight.dump();
  const json& log = tight["answer"]["log"];
  EXPECT_GE(count(log, "nodes kept float32 for accuracy"), 1) << log.dump();
  EXPECT_NE(log["details"].dump().find("stays float32"), std::string::npos) << log.dump();
  EXPECT_NE(log["details"].dump().find("x the tolerance"), std::string::npos) << log.dump();
  if (log["changed"] == true) {
    ASSERT_EQ(post("/api/documents/" + doc + "/undo", std::string()).first, 200);
  }
  // A loose tolerance: everything float16, within it on these inputs.
  json loose =
      wait_job(start_job(doc, "amp", {{"inputs", {{"x", "x.npy"}}}, {"atol", 1.0}, {"rtol", 0.5}})["id"]);
  ASSERT_EQ(loose["state"], "succeeded") << loose.dump();
  EXPECT_EQ(count(loose["answer"]["log"], "nodes kept float32 for accuracy"), 0);
  EXPECT_EQ(loose["answer"]["document"]["undo"], "Convert to mixed precision");
}

TEST_F(StudioJobs, ProgressIsPushedCancelStopsTheJobAndEditsWaitMeanwhile) {
  tessera::onnx::save_model(slow_model(24), root_ / "slow.onnx");
  start();
  std::string doc = open("slow.onnx");
  json job = start_job(doc, "amp", {{"rtol", 0}, {"atol", 1e-7}, {"max_runs", 400}, {"checkpoints", 0}});
  std::string id = job["id"];
  // Watch until the search reports progress, then try to edit, then cancel.
  json progress;
  read_events(0, [&](const StreamEvent& e) {
    if (e.type != "job" || e.data["id"] != id) return false;
    if (e.data["stage"] == "model runs") progress = e.data;
    return !progress.is_null() || e.data["state"] != "running";
  });
  ASSERT_FALSE(progress.is_null()) << "no progress event before the end";
  EXPECT_GE(progress["progress"].get<double>(), 0.0);
  EXPECT_LT(progress["progress"].get<double>(), 1.0);
  std::string busy = fmt::format(
      "transformation 'amp' (job {}) is running on this model: edits wait until it ends (or cancel it)", id);
  auto [es, e] = post("/api/documents/" + doc + "/commands",
                      json{{"command", {{"type", "rename_node"}, {"node", "tanh0"}, {"name", "t"}}}});
  EXPECT_EQ(es, 409);
  EXPECT_EQ(error_of(e), busy);
  auto [us, u] = post("/api/documents/" + doc + "/undo", std::string());
  EXPECT_EQ(us, 409);
  auto [xs, x] = post("/api/documents/" + doc + "/close", std::string());
  EXPECT_EQ(xs, 409);
  EXPECT_EQ(error_of(x), busy);
  json second = start_job(doc, "fp16", json::object(), 409);
  EXPECT_NE(error_of(second).find("is already running on this model"), std::string::npos);
  auto t0 = Clock::now();
  auto [cs, c] = post("/api/jobs/" + id + "/cancel", std::string());
  ASSERT_EQ(cs, 200) << c.dump();
  EXPECT_EQ(c["cancel_requested"], true);
  json end = wait_job(id);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(end["state"], "cancelled") << end.dump();
  EXPECT_FALSE(end.contains("answer"));
  // Nothing applied; edits go through again.
  EXPECT_EQ(version(doc), 0);
  EXPECT_EQ(get("/api/documents/" + doc).second["dirty"], false);
  EXPECT_EQ(post("/api/documents/" + doc + "/commands",
                 json{{"command", {{"type", "rename_node"}, {"node", "tanh0"}, {"name", "t"}}}})
                .first,
            200);
}

// Random integer inputs are small (1-9): token ids that index a 10-row embedding table.
TEST_F(StudioJobs, AmpRandomIntegerInputsAreValidIndices) {
  using namespace tessera::ir;
  Model m = empty_model();
  GraphBuilder b(m.graph);
  auto ids = b.input("ids", Type::tensor(DataType::kInt64, Shape{Dim::symbol("batch"), Dim::of(16)}));
  std::vector<float> table(10 * 3);
  for (size_t i = 0; i < table.size(); ++i) table[i] = 0.1f * static_cast<float>(i);
  b.initializer(make_tensor<float>("table", DataType::kFloat, {10, 3}, table));
  b.output(b.node("Tanh", {b.node("Gather", {"table", ids}, {}, "embed")}, {}, "act"));
  tessera::onnx::save_model(m, root_ / "embed.onnx");
  start();
  std::string doc = open("embed.onnx");
  json end = wait_job(start_job(doc, "amp", {{"shapes", {{"ids", "2x16"}}}, {"atol", 1.0}})["id"]);
  EXPECT_EQ(end["state"], "succeeded") << end.dump();
}

// A tiny BERT-like model: word embeddings of input_ids (10 rows: ids 1-9 index it), plus the segment
// embedding of token_type_ids (ONE row: only segment 0 indexes it), times the attention mask; inputs
// [batch, 8].
Model tiny_bert() {
  using namespace tessera::ir;
  Model m = empty_model();
  GraphBuilder b(m.graph);
  const Shape s{Dim::symbol("batch"), Dim::of(8)};
  auto ids = b.input("input_ids", Type::tensor(DataType::kInt64, s));
  auto mask = b.input("attention_mask", Type::tensor(DataType::kInt64, s));
  auto segments = b.input("token_type_ids", Type::tensor(DataType::kInt64, s));
  std::vector<float> words(10 * 4), types(4);
  for (size_t i = 0; i < words.size(); ++i) words[i] = 0.05f * static_cast<float>(i) - 0.5f;
  for (size_t i = 0; i < types.size(); ++i) types[i] = 0.1f * static_cast<float>(i);
  b.initializer(make_tensor<float>("words", DataType::kFloat, {10, 4}, words));
  b.initializer(make_tensor<float>("types", DataType::kFloat, {1, 4}, types));
  b.initializer(make_tensor<int64_t>("last", DataType::kInt64, {1}, std::vector<int64_t>{2}));
  std::string emb = b.node("Add",
                           {b.node("Gather", {"words", ids}, {}, "word_emb"),
                            b.node("Gather", {"types", segments}, {}, "type_emb")},
                           {}, "emb");
  std::string m3 = b.node(
      "Unsqueeze", {b.node("Cast", {mask}, {Attribute::of_int("to", 1)}, "maskf"), "last"}, {}, "mask3");
  b.output(b.node("Tanh", {b.node("Mul", {emb, m3}, {}, "masked")}, {}, "hidden"));
  return m;
}

// amp's random inputs: a mask is all ones, segment ids all zeros, other integers 1-9; a boolean mask
// true; floats stay random.
TEST(AmpRandomInputs, MasksAreOnesSegmentIdsZerosOtherIntegersOneToNine) {
  using tessera::server::random_input_constant;
  EXPECT_EQ(random_input_constant("attention_mask"), 1);
  EXPECT_EQ(random_input_constant("Input_Mask"), 1);
  EXPECT_EQ(random_input_constant("encoder_attention"), 1);
  EXPECT_EQ(random_input_constant("token_type_ids"), 0);
  EXPECT_EQ(random_input_constant("segment_ids"), 0);
  EXPECT_EQ(random_input_constant("segment_mask"), 0);  // segment ids, named oddly: never all ones
  EXPECT_EQ(random_input_constant("input_ids"), -1);
  EXPECT_EQ(random_input_constant("position_ids"), -1);

  using namespace tessera::ir;
  Model m = tiny_bert();
  GraphBuilder(m.graph).input("key_padding_mask", Type::tensor(DataType::kBool, Shape{Dim::of(5)}));
  GraphBuilder(m.graph).input("flags", Type::tensor(DataType::kBool, Shape{Dim::of(5)}));
  GraphBuilder(m.graph).input("nibble_mask", Type::tensor(DataType::kInt4, Shape{Dim::of(5)}));
  tessera::server::TransformContext ctx{[](const std::string& p) { return std::filesystem::path(p); }};
  auto feeds = tessera::server::amp_feeds(m, json{{"shapes", {{"input_ids", "2x8"}}}, {"seed", 3}}, ctx);
  ASSERT_EQ(feeds.size(), 6u);
  auto values = [&](size_t k) {
    const auto& t = feeds[k].second.tensor();
    return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
  };
  EXPECT_EQ(feeds[0].first, "input_ids");
  std::vector<int64_t> ids = values(0);
  ASSERT_EQ(ids.size(), 16u);
  std::set<int64_t> seen(ids.begin(), ids.end());
  EXPECT_GT(seen.size(), 2u) << "ids are random, not constant";
  for (int64_t v : ids) EXPECT_TRUE(v >= 1 && v <= 9) << v;
  EXPECT_EQ(values(1), std::vector<int64_t>(8, 1)) << "attention_mask: attend everywhere";
  EXPECT_EQ(values(2), std::vector<int64_t>(8, 0)) << "token_type_ids: the first segment";
  const auto* mask = static_cast<const uint8_t*>(feeds[3].second.tensor().raw());
  const auto* flags = static_cast<const uint8_t*>(feeds[4].second.tensor().raw());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(mask[i], 1) << "a boolean mask is true";
  for (int i = 0; i < 5; ++i) EXPECT_EQ(flags[i], 0) << "other booleans stay false";
  const auto* nibbles = static_cast<const uint8_t*>(feeds[5].second.tensor().raw());
  EXPECT_EQ(nibbles[0], 0x11);
  EXPECT_EQ(nibbles[1], 0x11);
  EXPECT_EQ(nibbles[2] & 0x0f, 0x01);
}

// The same model as a studio job: with segment ids 1-9 its one-row segment table is indexed out of range
// and the reference run fails; with the named inputs' values amp runs it.
TEST_F(StudioJobs, AmpRunsATinyBertOnMaskAndSegmentInputsOfTheirKind) {
  tessera::onnx::save_model(tiny_bert(), root_ / "bert.onnx");
  start();
  std::string doc = open("bert.onnx");
  json end = wait_job(
      start_job(doc, "amp",
                {{"shapes", {{"input_ids", "2x8"}, {"attention_mask", "2x8"}, {"token_type_ids", "2x8"}}},
                 {"atol", 1.0}})["id"]);
  EXPECT_EQ(end["state"], "succeeded") << end.dump();
}

// Cancel lands within half a second even in the middle of one engine run that takes a second or more (amp's
// reference run here; its instrumented and trial runs go through the same hook): the job's cancel stops
// the session's run between nodes instead of waiting for the next trial.
TEST_F(StudioJobs, CancelStopsAmpWithinHalfASecondInTheMiddleOfALongRun) {
  Model m = long_run_model(48, 1024);
  // How long one whole run takes here (the reference run runs the model twice: the given inputs and
  // one shuffled set).
  double whole = 0;
  {
    tessera::rt::Session s(m, {.optimization = *tessera::rt::opt_level_from_name("basic")});
    auto zeros = [] {
      return tessera::rt::Value(tessera::rt::Tensor::zeros(DataType::kFloat, {1024, 1024}));
    };
    std::vector<std::pair<std::string, tessera::rt::Value>> feeds = {{"x", zeros()}, {"w", zeros()}};
    s.run(feeds);  // warm
    auto t0 = Clock::now();
    s.run(feeds);
    whole = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  RecordProperty("whole_run_s", std::to_string(whole));
  tessera::onnx::save_model(m, root_ / "long.onnx");
  start();
  std::string doc = open("long.onnx");
  json job = start_job(doc, "amp", {{"rtol", 0}, {"atol", 1e-9}});
  std::string id = job["id"];
  // Asked for, not read from the events: progress events come at most every 100 ms, and the stage
  // before this one may hide it.
  json now;
  for (auto until = Clock::now() + std::chrono::seconds(30); Clock::now() < until;) {
    now = get("/api/jobs/" + id).second;
    if (now["stage"] == "reference run" || now["state"] != "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(now["stage"], "reference run") << now.dump();
  // Well inside the reference runs (two whole runs, after a session build).
  std::this_thread::sleep_for(std::chrono::duration<double>(std::min(whole * 0.75, 1.5)));
  auto t0 = Clock::now();
  auto [cs, c] = post("/api/jobs/" + id + "/cancel", std::string());
  ASSERT_EQ(cs, 200) << c.dump();
  ASSERT_EQ(c["state"], "running") << "the job was no longer running: " << c.dump();
  json end;
  while (Clock::now() - t0 < std::chrono::seconds(30)) {
    end = get("/api/jobs/" + id).second;
    if (end["state"] != "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  double latency = std::chrono::duration<double>(Clock::now() - t0).count();
  RecordProperty("cancel_latency_s", std::to_string(latency));
  EXPECT_EQ(end["state"], "cancelled") << end.dump();
  EXPECT_EQ(end["stage"], "reference run") << end.dump();
  EXPECT_LT(latency, 0.5) << "cancel took " << latency << " s; a whole run takes " << whole << " s";
  std::cout << "whole run " << whole << " s, cancel latency " << latency << " s\n";
  EXPECT_GT(whole, 2 * latency) << "the model runs too fast here to show a run being stopped";
  EXPECT_EQ(version(doc), 0);
}

// The transformations other than amp and sanitize report where they are: the job's last stage is one
// of theirs, not the stage the job starts with (its name).
TEST_F(StudioJobs, EveryTransformationReportsItsStages) {
  tessera::onnx::save_model(mlp_model(), root_ / "mlp.onnx");
  tessera::onnx::save_model(nested_model(), root_ / "nested.onnx");
  start();
  std::string doc = open("mlp.onnx");
  struct Run {
    std::string transform;
    json options;
    std::string last_stage;
  };
  std::vector<Run> runs = {
      {"fp16", json::object(), "recording the edit"},
      {"bf16", json::object(), "recording the edit"},
      {"convert_tensors", {{"to", "float16"}}, "type-checking the result"},
      {"set_shapes",
       {{"dim_params", {{{"input", "x"}, {"axis", 0}, {"name", "batch"}}}}},
       "recording the edit"},
      {"function_create", {{"name", "Block"}, {"nodes", "mm,add"}}, "recording the edit"},
      {"function_inline", {{"function", "local:Block"}}, "recording the edit"},
      {"import_layer", {{"name", "Nested"}, {"path", "nested.onnx"}}, "adding the function"},
      {"function_delete", {{"function", "local:Nested"}}, "removing the function"},
      {"extract", {{"inputs", "x"}, {"outputs", "relu"}}, "type-checking the result"},
  };
  for (const Run& r : runs) {
    json end = wait_job(start_job(doc, r.transform, r.options)["id"]);
    EXPECT_EQ(end["state"], "succeeded") << r.transform << ": " << end.dump();
    EXPECT_EQ(end["stage"], r.last_stage) << r.transform << ": " << end.dump();
    EXPECT_EQ(end["progress"], 1.0) << r.transform;
  }
}

// GET /api/jobs: what a reloaded page shows in its jobs list: every job kept, oldest first, with its
// state, progress and log, without the answers (fetched one by one).
TEST_F(StudioJobs, TheJobListShowsRunningAndRecentJobs) {
  tessera::onnx::save_model(mlp_model(), root_ / "mlp.onnx");
  tessera::onnx::save_model(slow_model(24), root_ / "slow.onnx");
  start();
  EXPECT_EQ(get("/api/jobs").second, json({{"jobs", json::array()}}));
  std::string doc = open("mlp.onnx"), slow = open("slow.onnx");
  std::string first = wait_job(start_job(doc, "fp16", json::object())["id"])["id"];
  std::string failed = wait_job(start_job(doc, "fp16", {{"node_block_list", "nope"}})["id"])["id"];
  std::string running =
      start_job(slow, "amp", {{"rtol", 0}, {"atol", 1e-7}, {"max_runs", 400}, {"checkpoints", 0}})["id"];
  json list = get("/api/jobs").second["jobs"];
  ASSERT_EQ(list.size(), 3u) << list.dump();
  EXPECT_EQ(list[0]["id"], first);
  EXPECT_EQ(list[0]["state"], "succeeded");
  EXPECT_EQ(list[0]["doc"], doc);
  EXPECT_EQ(list[0]["log"]["changed"], true) << list[0].dump();
  EXPECT_FALSE(list[0].contains("answer"));
  EXPECT_EQ(list[1]["id"], failed);
  EXPECT_EQ(list[1]["state"], "failed");
  EXPECT_NE(list[1].value("error", "").find("nope"), std::string::npos);
  EXPECT_EQ(list[2]["id"], running);
  EXPECT_EQ(list[2]["state"], "running");
  EXPECT_EQ(list[2]["transform"], "amp");
  // Cancelled from the list, as the page does.
  ASSERT_EQ(post("/api/jobs/" + running + "/cancel", std::string()).first, 200);
  EXPECT_EQ(wait_job(running)["state"], "cancelled");
  EXPECT_EQ(get("/api/jobs").second["jobs"][2]["state"], "cancelled");
  // The token is needed.
  auto plain = client_->Get("/api/jobs");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 401);
}

TEST_F(StudioJobs, ExtractionOpensANewUnsavedDocument) {
  // The Loop body's carried value typed (the fixture leaves it to inference): an extracted body's inputs
  // must declare their types.
  Model m = nested_model();
  for (auto& n : m.graph.nodes) {
    if (n.op_type != "Loop") continue;
    n.attributes[0].graphs[0]->inputs[2].type = tessera::ir::Type::tensor(
        DataType::kFloat, tessera::ir::Shape{tessera::ir::Dim::symbol("N"), tessera::ir::Dim::of(4)});
  }
  tessera::onnx::save_model(m, root_ / "nested.onnx");
  start();
  std::string doc = open("nested.onnx");
  json body = wait_job(start_job(doc, "extract", {{"subgraph", "loop:body"}})["id"]);
  ASSERT_EQ(body["state"], "succeeded") << body.dump();
  const json& d = body["document"];
  EXPECT_EQ(d["name"], "nested.loop_body.onnx");
  EXPECT_TRUE(d["path"].is_null());
  json g = graph(d["id"]);
  ASSERT_TRUE(g.contains("nodes")) << g.dump();
  EXPECT_EQ(g["nodes"].size(), 2u);  // keep, accumulate
  json fn = wait_job(start_job(doc, "extract", {{"function", "custom:Twice"}})["id"]);
  ASSERT_EQ(fn["state"], "succeeded") << fn.dump();
  json missing = wait_job(start_job(doc, "extract", {{"subgraph", "nope:body"}})["id"]);
  EXPECT_EQ(missing["state"], "failed");
  EXPECT_EQ(missing["status"], 422);
  EXPECT_NE(missing.value("error", "").find("nope"), std::string::npos) << missing.dump();
  EXPECT_EQ(version(doc), 0);  // the model extracted from is untouched
}

TEST_F(StudioJobs, TheStreamNeedsTheTokenAndThisServersOrigin) {
  start();
  auto plain = client_->Get("/api/events");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 401);
  auto foreign = client_->Get("/api/events", auth({{"Origin", "http://evil.example"}}));
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->status, 403);
  // The job endpoints too.
  std::string id = open("a.onnx");
  for (const std::string& path : {"/api/documents/" + id + "/jobs", std::string("/api/jobs/j1/cancel")}) {
    auto r = client_->Post(path, json{{"transform", "fp16"}}.dump(), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << path;
  }
  auto foreign_host = client_->Get(
      "/api/jobs/j1", httplib::Headers{{"Host", "evil.example"}, {"X-Tessera-Token", studio_->token()}});
  ASSERT_TRUE(foreign_host);
  EXPECT_EQ(foreign_host->status, 403);
  // With the token in the query (as the page's URL gives it): a stream of events.
  tessera::onnx::save_model(mlp_model(), root_ / "mlp.onnx");
  std::string doc = open("mlp.onnx");
  json job = start_job(doc, "sanitize", json::object());
  httplib::Client c("127.0.0.1", studio_->port());
  std::string type, text;
  auto r = c.Get(
      fmt::format("/api/events?from=0&token={}", studio_->token()),
      [&](const httplib::Response& res) {
        type = res.get_header_value("Content-Type");
        return true;
      },
      [&](const char* data, size_t n) {
        text.append(data, n);
        return text.find("\"state\":\"succeeded\"") == std::string::npos;
      });
  EXPECT_EQ(type, "text/event-stream");
  EXPECT_NE(text.find("id: 1\nevent: job\ndata: {"), std::string::npos) << text;
  // Sanitize reports the sweep it is at.
  json end = wait_job(job["id"]);
  EXPECT_EQ(end["state"], "succeeded");
  EXPECT_TRUE(end.value("stage", "").starts_with("sweep ")) << end.dump();
}

// A stream asked to start past the last event (an old page's Last-Event-ID) gets the events from now on.
TEST_F(StudioJobs, AStreamFromBeyondTheLastEventStartsNow) {
  tessera::onnx::save_model(mlp_model(), root_ / "mlp.onnx");
  start();
  std::string doc = open("mlp.onnx");
  // The job starts once the stream is open.
  json job;
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    job = start_job(doc, "sanitize", json::object());
  });
  std::vector<StreamEvent> events = read_events(
      1000000, [&](const StreamEvent& e) { return e.type == "job" && e.data["state"] != "running"; },
      std::chrono::seconds(20));
  later.join();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().data["id"], job["id"]);
  EXPECT_EQ(events.back().data["state"], "succeeded");
  EXPECT_LT(events.back().id, 100u);
}

class StudioToolEvents : public StudioJobs {
 protected:
  void SetUp() override {
    StudioJobs::SetUp();
    tools_file_ = base_ / "tools.json";
    using tessera::transforms::UserTool;
    tessera::transforms::save_tools(
        tools_file_,
        {UserTool{"talk", "/bin/sh", {"-c", "echo one; sleep 0.2; printf 'zwei \\303\\244'; exit 4"}}});
  }
};

TEST_F(StudioToolEvents, ToolOutputAndExitStatusArePushed) {
  start();
  std::string doc = open("a.onnx");
  auto [s, r] = post("/api/tools/run", json{{"doc", doc}, {"tool", "talk"}});
  ASSERT_EQ(s, 200) << r.dump();
  std::string id = r["id"];
  std::string output;
  json end;
  read_events(0, [&](const StreamEvent& e) {
    if (e.type != "tool" || e.data["id"] != id) return false;
    EXPECT_EQ(e.data["from"].get<size_t>(), output.size()) << e.data.dump();
    output += e.data["output"].get<std::string>();
    if (e.data["done"] == true) end = e.data;
    return e.data["done"] == true;
  });
  EXPECT_EQ(output, "one\nzwei \xc3\xa4");
  ASSERT_FALSE(end.is_null());
  EXPECT_EQ(end["exit_status"], 4);
  EXPECT_EQ(end["cancelled"], false);
  EXPECT_EQ(end["tool"], "talk");
}

}  // namespace
