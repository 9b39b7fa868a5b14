// The incremental checker on long chains (check/incremental.h): an edit at the head of a chain changes
// the input facts of every node below it. The result must still equal a full check, edit after edit.
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include "check/incremental.h"
#include "ir/builder.h"
#include "ir/commands/commands.h"

namespace tessera::check {
namespace {

using namespace tessera::ir;

// x [1, 64] -> unary nodes with a residual Add every 12, as the studio's 50,000-node bench builds.
Model residual_chain(int nodes) {
  Model m;
  m.ir_version = 8;
  m.opset_imports.push_back({"", 17});
  GraphBuilder b(m.graph);
  std::string last = b.input("x", Type::tensor(DataType::kFloat, Shape{Dim::of(1), Dim::of(64)}));
  std::string residual = last;
  const char* unary[] = {"Relu", "Sigmoid", "Tanh", "Neg", "Abs"};
  for (int i = 0; i < nodes; ++i) {
    bool add = i % 12 == 11;
    std::string name = "n" + std::to_string(i);
    last = add ? b.node("Add", {last, residual}, {}, name) : b.node(unary[i % 5], {last}, {}, name);
    if (add) residual = last;
  }
  b.output(last);
  return m;
}

std::vector<std::string> lines(const CheckResult& r) {
  std::vector<std::string> out;
  for (const Diagnostic& d : r.diagnostics.items)
    out.push_back(d.to_string() + " @" + std::to_string(d.node_index));
  return out;
}

// A model under edit with its incremental checker, compared with a full check after each edit.
struct Session {
  explicit Session(Model model) : m(std::move(model)), h(m) {
    inc.reset(m);
    h.set_listener(
        [this](const std::vector<Change>& c) { pending.insert(pending.end(), c.begin(), c.end()); });
  }
  // Runs `edit`, updates the checker and returns the update's time in ms (`cpu_ms`: its thread's CPU
  // time, which the other processes on a loaded machine change less).
  template <class F>
  double edit(F&& f) {
    pending.clear();
    f(h);
    auto t0 = std::chrono::steady_clock::now();
    double c0 = thread_cpu_ms();
    inc.update(m, pending, budget);
    cpu_ms = thread_cpu_ms() - c0;
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  static double thread_cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
  }
  void expect_full(const std::string& after) {
    CheckResult full = check_model(m);
    ASSERT_EQ(lines(inc.result()), lines(full)) << after;
    ASSERT_EQ(inc.result().value_types, full.value_types) << after;
  }
  Model m;
  History h;
  IncrementalChecker inc;
  std::vector<Change> pending;
  double cpu_ms = 0;
  size_t budget = SIZE_MAX;  // nodes an update checks before its result is provisional
};

const GraphPath kMain = GraphPath::main_graph();

TEST(IncrementalChain, DisconnectAndConnectAtTheHeadEqualAFullCheck) {
  Session s(residual_chain(3000));
  NodeId head = s.m.graph.nodes[0].id;
  s.edit([&](History& h) { h.execute(std::make_unique<Disconnect>(kMain, head, 0)); });
  EXPECT_TRUE(s.inc.last_incremental());
  s.expect_full("disconnect");
  ASSERT_FALSE(s.inc.result().diagnostics.items.empty());  // "not connected"
  s.edit([&](History& h) { h.execute(std::make_unique<Connect>(kMain, head, 0, "x")); });
  EXPECT_TRUE(s.inc.last_incremental());
  s.expect_full("connect");
  EXPECT_TRUE(s.inc.result().diagnostics.items.empty());
  s.edit([](History& h) { h.undo(); });
  s.expect_full("undo connect");
  s.edit([](History& h) { h.undo(); });
  s.expect_full("undo disconnect");
  s.edit([](History& h) { h.redo(); });
  s.expect_full("redo disconnect");
  // Connected to a value of another type: every node below gets a type error or a different type.
  s.edit([&](History& h) {
    h.execute(std::make_unique<AddGraphInput>(
        kMain, ValueInfo{"y", Type::tensor(DataType::kInt64, Shape{Dim::of(3)}), {}, {}}));
  });
  s.edit([&](History& h) { h.execute(std::make_unique<Connect>(kMain, head, 0, "y")); });
  s.expect_full("connect to int64");
  s.edit([&](History& h) { h.execute(std::make_unique<Connect>(kMain, head, 0, "x")); });
  s.expect_full("connect to x again");
}

TEST(IncrementalChain, EditsInTheMiddleOfTheChainEqualAFullCheck) {
  Session s(residual_chain(2400));
  std::mt19937 rng(7);
  for (int i = 0; i < 40; ++i) {
    Graph& g = s.m.graph;
    size_t at = std::uniform_int_distribution<size_t>(1, g.nodes.size() - 1)(rng);
    NodeId id = g.nodes[at].id;
    std::string before = g.nodes[at - 1].outputs[0];
    int what = i % 5;
    s.edit([&](History& h) {
      try {
        if (what == 0) h.execute(std::make_unique<Disconnect>(kMain, id, 0));
        if (what == 1) h.execute(std::make_unique<Connect>(kMain, id, 0, before));
        if (what == 2) h.execute(std::make_unique<RemoveNode>(kMain, id));
        if (what == 3 && h.can_undo()) h.undo();
        if (what == 4 && h.can_redo()) h.redo();
      } catch (const CommandError&) {
      }
    });
    s.expect_full("edit " + std::to_string(i));
  }
}

TEST(IncrementalChain, ABudgetedUpdateShowsTheEditedNodeAtOnceAndFinishesExactly) {
  Session s(residual_chain(3000));
  s.budget = 10;
  NodeId head = s.m.graph.nodes[0].id;
  s.edit([&](History& h) { h.execute(std::make_unique<Disconnect>(kMain, head, 0)); });
  EXPECT_FALSE(s.inc.complete());
  EXPECT_EQ(s.inc.last_checked_nodes(), 10u);
  // The edited node's own finding is there already.
  const auto& items = s.inc.result().diagnostics.items;
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].node, "n0");
  s.inc.finish(s.m);
  EXPECT_TRUE(s.inc.complete());
  EXPECT_TRUE(s.inc.last_incremental());
  s.expect_full("disconnect, finished");
  // Connected again: the head's finding goes at once, the types below come back as the pass finishes.
  s.edit([&](History& h) { h.execute(std::make_unique<Connect>(kMain, head, 0, "x")); });
  EXPECT_FALSE(s.inc.complete());
  EXPECT_TRUE(s.inc.result().diagnostics.items.empty());
  s.inc.finish(s.m);
  s.expect_full("connect, finished");
  // Connected to a value of another type, then the pass finished.
  s.edit([&](History& h) {
    h.execute(std::make_unique<AddGraphInput>(
        kMain, ValueInfo{"y", Type::tensor(DataType::kInt64, Shape{Dim::of(3)}), {}, {}}));
  });
  s.edit([&](History& h) { h.execute(std::make_unique<Connect>(kMain, head, 0, "y")); });
  s.inc.finish(s.m);
  s.expect_full("connect to int64, finished");
  s.edit([&](History& h) { h.execute(std::make_unique<Disconnect>(kMain, head, 0)); });
  s.inc.finish(s.m);
  // An update over an unfinished pass (its owner did not call finish) checks in full, still exact.
  s.edit([&](History& h) { h.execute(std::make_unique<Connect>(kMain, head, 0, "x")); });
  ASSERT_FALSE(s.inc.complete());
  s.edit([](History& h) { h.undo(); });
  EXPECT_FALSE(s.inc.last_incremental());
  s.expect_full("undo over an unfinished pass");
}

TEST(IncrementalChain, RandomEditsWithASmallBudgetFinishToAFullCheck) {
  Session s(residual_chain(1200));
  s.budget = 7;
  std::mt19937 rng(3);
  for (int i = 0; i < 40; ++i) {
    Graph& g = s.m.graph;
    size_t at = std::uniform_int_distribution<size_t>(0, g.nodes.size() - 1)(rng);
    NodeId id = g.nodes[at].id;
    std::string before = at == 0 ? "x" : g.nodes[at - 1].outputs[0];
    int what = i % 5;
    s.edit([&](History& h) {
      try {
        if (what == 0) h.execute(std::make_unique<Disconnect>(kMain, id, 0));
        if (what == 1) h.execute(std::make_unique<Connect>(kMain, id, 0, before));
        if (what == 2) h.execute(std::make_unique<RemoveNode>(kMain, id));
        if (what == 3 && h.can_undo()) h.undo();
        if (what == 4 && h.can_redo()) h.redo();
      } catch (const CommandError&) {
      }
    });
    s.inc.finish(s.m);
    s.expect_full("edit " + std::to_string(i));
  }
}

// Profiling aid, skipped unless TESSERA_CHAIN_NODES is set: the update times of a disconnect and a
// connect at the head of a chain of that many nodes.
TEST(IncrementalChain, TimesOfAnEditAtTheHead) {
  const char* env = std::getenv("TESSERA_CHAIN_NODES");
  if (!env) GTEST_SKIP() << "set TESSERA_CHAIN_NODES=50000 to time it";
  Session s(residual_chain(std::atoi(env)));
  NodeId head = s.m.graph.nodes[0].id;
  const char* rounds = std::getenv("TESSERA_CHAIN_ROUNDS");
  for (int r = 0; r < (rounds ? std::atoi(rounds) : 3); ++r) {
    double off = s.edit([&](History& h) { h.execute(std::make_unique<Disconnect>(kMain, head, 0)); });
    size_t checked_off = s.inc.last_checked_nodes();
    double off_cpu = s.cpu_ms;
    double on = s.edit([&](History& h) { h.execute(std::make_unique<Connect>(kMain, head, 0, "x")); });
    std::printf(
        "disconnect %.1f ms (cpu %.1f, %zu nodes checked), connect %.1f ms (cpu %.1f, %zu nodes checked)\n",
        off, off_cpu, checked_off, on, s.cpu_ms, s.inc.last_checked_nodes());
  }
  s.expect_full("timed edits");
}

}  // namespace
}  // namespace tessera::check
