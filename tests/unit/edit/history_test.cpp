#include <gtest/gtest.h>

#include "edit_test_util.h"

namespace tessera::ir::test {
namespace {

const GraphPath kMain = GraphPath::main_graph();

std::unique_ptr<Command> rename_node(std::string from, std::string to) {
  return std::make_unique<RenameNode>(kMain, std::move(from), std::move(to));
}

TEST(History, UndoRedoAndDescriptions) {
  Model m = small_model();
  Model original = m;
  History h(m);
  EXPECT_FALSE(h.can_undo());
  h.execute(rename_node("relu", "r1"));
  Model after_first = m;
  h.execute(std::make_unique<RenameValue>(kMain, "a", "sum"));
  EXPECT_EQ(h.undo_descriptions(),
            (std::vector<std::string>{"Rename value 'a' to 'sum'", "Rename node 'relu' to 'r1'"}));
  h.undo();
  EXPECT_TRUE(identical(m, after_first));
  EXPECT_EQ(h.redo_description(), "Rename value 'a' to 'sum'");
  h.undo();
  EXPECT_TRUE(identical(m, original));
  EXPECT_FALSE(h.can_undo());
  EXPECT_EQ(h.redo_descriptions(),
            (std::vector<std::string>{"Rename node 'relu' to 'r1'", "Rename value 'a' to 'sum'"}));
  h.redo();
  EXPECT_TRUE(identical(m, after_first));
  // A new edit drops the redo steps.
  h.execute(rename_node("add", "a1"));
  EXPECT_FALSE(h.can_redo());
  EXPECT_EQ(h.undo_count(), 2u);
}

TEST(History, FailedCommandsAreNotRecorded) {
  Model m = small_model();
  History h(m);
  h.execute(rename_node("relu", "r1"));
  h.undo();
  Model before = m;
  EXPECT_THROW(h.execute(rename_node("nope", "x")), CommandError);
  EXPECT_TRUE(identical(m, before));
  EXPECT_EQ(h.undo_count(), 0u);
  EXPECT_TRUE(h.can_redo());  // nothing changed, so the redo step is still good
  EXPECT_THROW(h.undo(), CommandError);
}

TEST(History, BatchIsOneUndoStep) {
  Model m = small_model();
  Model original = m;
  History h(m);
  h.begin_batch("Replace relu by sigmoid");
  Node sig;
  sig.name = "sig";
  sig.op_type = "Sigmoid";
  sig.inputs = {"a"};
  sig.outputs = {"s"};
  h.execute(std::make_unique<AddNode>(kMain, sig, 2));
  h.execute(std::make_unique<Connect>(kMain, "multi", 0, "s"));
  h.execute(std::make_unique<RemoveNode>(kMain, "relu"));
  EXPECT_TRUE(h.is_dirty());
  EXPECT_FALSE(h.can_undo());  // not while the batch is open
  EXPECT_THROW(h.undo(), CommandError);
  h.end_batch();
  Model after = m;
  EXPECT_EQ(h.undo_count(), 1u);
  EXPECT_EQ(h.undo_description(), "Replace relu by sigmoid");
  h.undo();
  EXPECT_TRUE(identical(m, original));
  h.redo();
  EXPECT_TRUE(identical(m, after));
}

TEST(History, NestedBatchesAndCancel) {
  Model m = small_model();
  Model original = m;
  History h(m);
  h.begin_batch("outer");
  h.execute(rename_node("relu", "r1"));
  Model mid = m;
  h.begin_batch("inner");
  h.execute(rename_node("add", "a1"));
  h.cancel_batch();  // undoes the inner level only
  EXPECT_TRUE(identical(m, mid));
  EXPECT_TRUE(h.in_batch());
  h.end_batch();
  EXPECT_EQ(h.undo_descriptions(), std::vector<std::string>{"outer"});
  h.undo();
  EXPECT_TRUE(identical(m, original));

  h.begin_batch("empty");
  h.end_batch();
  EXPECT_EQ(h.undo_count(), 0u);
  EXPECT_THROW(h.end_batch(), CommandError);
}

TEST(History, BatchScopeCancelsOnError) {
  Model m = small_model();
  Model original = m;
  History h(m);
  try {
    BatchScope batch(h, "rename two");
    h.execute(rename_node("relu", "r1"));
    h.execute(rename_node("nope", "r2"));  // throws: the scope cancels the first rename
    batch.commit();
  } catch (const CommandError& e) {
    EXPECT_STREQ(e.what(), "node 'nope' does not exist in graph 'main'");
  }
  EXPECT_FALSE(h.in_batch());
  EXPECT_TRUE(identical(m, original));
  EXPECT_EQ(h.undo_count(), 0u);
  {
    BatchScope batch(h, "rename one");
    h.execute(rename_node("relu", "r1"));
    batch.commit();
  }
  EXPECT_EQ(h.undo_description(), "rename one");
}

TEST(BatchCommand, IsAllOrNothing) {
  Model m = small_model();
  Model before = m;
  BatchCommand b("two renames");
  b.add(rename_node("relu", "r1"));
  b.add(rename_node("r1", "add"));  // taken
  expect_refused(
      m, b, "step 2 of 2 (Rename node 'r1' to 'add'): a node named 'add' already exists in graph 'main'");
  BatchCommand ok("ok");
  ok.add(rename_node("relu", "r1"));
  ok.add(std::make_unique<SetAttribute>(kMain, "r1", Attribute::of_float("alpha", 1.0f)));
  expect_round_trip(m, ok);
}

TEST(History, DirtyFlagFollowsTheSavedState) {
  Model m = small_model();
  History h(m);
  EXPECT_FALSE(h.is_dirty());
  h.execute(rename_node("relu", "r1"));
  EXPECT_TRUE(h.is_dirty());
  h.mark_clean();  // saved
  EXPECT_FALSE(h.is_dirty());
  h.undo();
  EXPECT_TRUE(h.is_dirty());
  h.redo();
  EXPECT_FALSE(h.is_dirty());
  h.undo();
  h.execute(rename_node("relu", "r2"));  // the saved state can no longer be reached
  EXPECT_TRUE(h.is_dirty());
  h.undo();
  EXPECT_TRUE(h.is_dirty());
  h.clear();
  EXPECT_TRUE(h.is_dirty());
  h.mark_clean();
  h.execute(rename_node("relu", "r3"));
  h.undo();
  EXPECT_FALSE(h.is_dirty());
}

TEST(History, LimitDropsTheOldestSteps) {
  Model m = small_model();
  History h(m, 3);
  h.mark_clean();
  std::vector<Model> states{m};
  for (int i = 0; i < 5; ++i) {
    h.execute(rename_node(i == 0 ? "relu" : "r" + std::to_string(i - 1), "r" + std::to_string(i)));
    states.push_back(m);
    if (i == 1) h.mark_clean();
  }
  EXPECT_EQ(h.undo_count(), 3u);
  EXPECT_EQ(h.undo_descriptions().back(), "Rename node 'r1' to 'r2'");
  while (h.can_undo()) h.undo();
  EXPECT_TRUE(identical(m, states[2]));
  EXPECT_FALSE(h.is_dirty());  // the saved state is where the dropped steps ended
  h.set_limit(1);
  EXPECT_EQ(h.redo_count(), 3u);
  h.redo();
  h.redo();
  EXPECT_EQ(h.undo_count(), 1u);
  EXPECT_TRUE(h.is_dirty());
  h.set_limit(0);  // unlimited
  h.redo();
  EXPECT_EQ(h.undo_count(), 2u);
  EXPECT_TRUE(identical(m, states[5]));
}

}  // namespace
}  // namespace tessera::ir::test
