#include "ir/commands/history.h"

namespace tessera::ir {

void History::notify(const Command& c, bool undone) {
  if (!listener_) return;
  std::vector<Change> changes;
  c.changes(model_, undone, changes);
  listener_(changes);
}

void History::execute(std::unique_ptr<Command> c) {
  c->apply(model_);
  notify(*c, false);
  // The model has moved on from every redo step, inside a batch too.
  redo_.clear();
  if (batch_) {
    batch_->add(std::move(c));
    return;
  }
  record(std::move(c));
}

void History::record(std::unique_ptr<Command> c) {
  undo_.push_back({std::move(c), next_state_++});
  trim();
}

void History::trim() {
  while (limit_ != 0 && undo_.size() > limit_) {
    base_state_ = undo_.front().state;
    undo_.pop_front();
  }
}

void History::undo() {
  if (batch_) throw CommandError("finish or cancel the open batch before undoing");
  if (undo_.empty()) throw CommandError("nothing to undo");
  undo_.back().command->undo(model_);
  notify(*undo_.back().command, true);
  redo_.push_back(std::move(undo_.back()));
  undo_.pop_back();
}

void History::redo() {
  if (batch_) throw CommandError("finish or cancel the open batch before redoing");
  if (redo_.empty()) throw CommandError("nothing to redo");
  redo_.back().command->apply(model_);
  notify(*redo_.back().command, false);
  undo_.push_back(std::move(redo_.back()));
  redo_.pop_back();
  trim();
}

std::string History::undo_description() const {
  return undo_.empty() ? std::string() : undo_.back().command->description();
}

std::string History::redo_description() const {
  return redo_.empty() ? std::string() : redo_.back().command->description();
}

std::vector<std::string> History::undo_descriptions() const {
  std::vector<std::string> out;
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) out.push_back(it->command->description());
  return out;
}

std::vector<std::string> History::redo_descriptions() const {
  std::vector<std::string> out;
  for (auto it = redo_.rbegin(); it != redo_.rend(); ++it) out.push_back(it->command->description());
  return out;
}

void History::begin_batch(std::string name) {
  if (!batch_) batch_ = std::make_unique<BatchCommand>(std::move(name));
  batch_starts_.push_back(batch_->size());
}

void History::end_batch() {
  if (!batch_) throw CommandError("no batch is open");
  batch_starts_.pop_back();
  if (!batch_starts_.empty()) return;
  std::unique_ptr<BatchCommand> b = std::move(batch_);
  if (!b->empty()) record(std::move(b));
}

void History::cancel_batch() {
  if (!batch_) throw CommandError("no batch is open");
  std::vector<Change> changes;
  batch_->undo_from(model_, batch_starts_.back(), listener_ ? &changes : nullptr);
  if (listener_ && !changes.empty()) listener_(changes);
  batch_starts_.pop_back();
  if (batch_starts_.empty()) batch_.reset();
}

bool History::is_dirty() const {
  if (batch_ && !batch_->empty()) return true;
  return current_state() != clean_state_;
}

void History::set_limit(size_t limit) {
  limit_ = limit;
  trim();
}

void History::clear() {
  if (batch_) throw CommandError("finish or cancel the open batch before clearing the history");
  bool dirty = is_dirty();
  undo_.clear();
  redo_.clear();
  base_state_ = next_state_++;
  clean_state_ = dirty ? kUnreachable : base_state_;
}

}  // namespace tessera::ir
