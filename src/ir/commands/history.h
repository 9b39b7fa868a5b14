// The undo/redo history of one model (one open document in the studio, one scripted edit session).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/commands/batch.h"

namespace tessera::ir {

class History {
 public:
  static constexpr size_t kDefaultLimit = 1000;

  // The history edits `model`, which must outlive it; every change to it should go through execute.
  explicit History(Model& model, size_t limit = kDefaultLimit) : model_(model), limit_(limit) {}
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // Called with what each execute, undo, redo and cancel_batch changed (Command::changes), right
  // after it; the studio redraws and re-checks from these.
  using Listener = std::function<void(const std::vector<Change>&)>;
  void set_listener(Listener listener) { listener_ = std::move(listener); }

  Model& model() { return model_; }
  const Model& model() const { return model_; }

  // Applies `c` and records it (into the open batch, if any), dropping the redo steps. When `c`
  // throws CommandError, the model and the history are as before.
  void execute(std::unique_ptr<Command> c);

  // Undo and redo throw CommandError when there is nothing to undo or redo, or a batch is open.
  bool can_undo() const { return !batch_ && !undo_.empty(); }
  bool can_redo() const { return !batch_ && !redo_.empty(); }
  void undo();
  void redo();
  // For menus: "" when there is no such step.
  std::string undo_description() const;
  std::string redo_description() const;
  std::vector<std::string> undo_descriptions() const;  // most recent first
  std::vector<std::string> redo_descriptions() const;  // next redo first
  size_t undo_count() const { return undo_.size(); }
  size_t redo_count() const { return redo_.size(); }

  // Groups the commands executed until the matching end_batch into one undo step named `name`.
  // Batches nest; only the outermost one becomes a step. An empty batch records nothing.
  void begin_batch(std::string name);
  void end_batch();
  // Undoes the commands executed since the matching begin_batch and closes that level.
  void cancel_batch();
  bool in_batch() const { return batch_ != nullptr; }

  // Records the current state as the saved one; is_dirty says whether the model differs from it, also
  // after undoing back past it or after the step that reached it left the history.
  void mark_clean() { clean_state_ = current_state(); }
  bool is_dirty() const;

  // The most undo steps kept; older ones are dropped. 0 keeps them all.
  void set_limit(size_t limit);
  size_t limit() const { return limit_; }
  // Forgets every step, keeping the model and whether it is dirty. Not while a batch is open.
  void clear();

 private:
  struct Entry {
    std::unique_ptr<Command> command;
    uint64_t state;  // identifies the model state this command led to
  };
  static constexpr uint64_t kUnreachable = UINT64_MAX;

  uint64_t current_state() const { return undo_.empty() ? base_state_ : undo_.back().state; }
  void record(std::unique_ptr<Command> c);
  void trim();
  void notify(const Command& c, bool undone);

  Model& model_;
  size_t limit_;
  std::deque<Entry> undo_;
  std::vector<Entry> redo_;  // next redo at the back
  uint64_t base_state_ = 0;  // the state with nothing left to undo
  uint64_t next_state_ = 1;
  uint64_t clean_state_ = 0;
  std::unique_ptr<BatchCommand> batch_;
  std::vector<size_t> batch_starts_;  // per open level: where its commands start in batch_
  Listener listener_;
};

// Opens a batch for a scope: commit() closes it as one undo step; leaving the scope without commit
// (an error, an exception) cancels what the scope executed.
class BatchScope {
 public:
  BatchScope(History& h, std::string name) : h_(h) { h_.begin_batch(std::move(name)); }
  BatchScope(const BatchScope&) = delete;
  BatchScope& operator=(const BatchScope&) = delete;
  ~BatchScope() {
    if (!done_ && h_.in_batch()) h_.cancel_batch();
  }
  void commit() {
    if (done_) return;
    done_ = true;
    h_.end_batch();
  }

 private:
  History& h_;
  bool done_ = false;
};

}  // namespace tessera::ir
