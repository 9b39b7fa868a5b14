// Replaying and recording main-graph nodes for incremental checks (memo.h).
#include "check/memo.h"

#include "check/graph_checker.h"

namespace tessera::check {

namespace {

// Same constant: same type, dims and the same (immutable, kept alive) buffer, or equal strings.
bool same_constant(const std::optional<ir::Tensor>& a, const std::optional<ir::Tensor>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->dtype == b->dtype && a->dims == b->dims && a->data == b->data && a->strings == b->strings &&
         a->external.has_value() == b->external.has_value();
}

bool same_facts(const MemoFacts& a, const MemoFacts& b) {
  return a.present == b.present && a.type == b.type && a.producer == b.producer &&
         a.shape_value == b.shape_value && same_constant(a.constant, b.constant);
}

MemoFacts facts_of(const ValueFacts& f) {
  MemoFacts m;
  m.present = true;
  m.type = f.type;
  if (f.constant) m.constant = *f.constant;
  if (f.shape_value) m.shape_value = *f.shape_value;
  m.producer = f.producer;
  return m;
}

}  // namespace

MemoFacts Checker::input_facts(const std::string& name, const Scope& scope) const {
  if (name.empty()) return {};
  const ValueFacts* f = scope.find(name);
  return f ? facts_of(*f) : MemoFacts{};
}

bool Checker::replay(const ir::Node& node, size_t k, Scope& scope) {
  auto it = memo_->nodes_.find(node.id);
  if (it == memo_->nodes_.end()) return false;
  NodeMemo& m = it->second;
  if (m.op_type != node.op_type || m.domain != node.domain || m.overload != node.overload ||
      m.inputs != node.inputs || m.outputs != node.outputs) {
    return false;
  }
  bool uses_symbols = m.symbols_after != m.symbols_before;
  if (uses_symbols && m.symbols_before != symbol_counter_) return false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!same_facts(m.in[i], input_facts(node.inputs[i], scope))) return false;
  }
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    const std::string& out = node.outputs[o];
    if (!out.empty() && m.out[o].present == scope.defined_here(out)) return false;  // duplicates moved
  }
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    const MemoFacts& f = m.out[o];
    if (!f.present) continue;
    ValueFacts& v = scope.define(node.outputs[o]);
    v.type = f.type;
    v.producer = f.producer;
    if (f.constant) v.constant = scope.keep(*f.constant);
    if (f.shape_value) v.shape_value = scope.keep(*f.shape_value);
  }
  if (uses_symbols) symbol_counter_ = m.symbols_after;
  for (Diagnostic& d : m.diagnostics) {
    // Findings about this node follow it to its new position; those inside a function it calls keep theirs.
    if (d.node_index == m.position && d.graph == "main") d.node_index = static_cast<int>(k);
  }
  for (const Diagnostic& d : m.diagnostics) {
    if (full()) break;
    diags_.items.push_back(d);
  }
  m.position = static_cast<int>(k);
  ++memo_->replayed_;
  return true;
}

void Checker::record(const ir::Node& node, size_t k, std::vector<MemoFacts> in, std::vector<bool> predefined,
                     size_t diag_start, int64_t symbols_before, Scope& scope) {
  ++memo_->checked_;
  // A list cut short by max_diagnostics may have dropped some of this node's findings.
  if (full()) {
    memo_->nodes_.erase(node.id);
    return;
  }
  NodeMemo m;
  m.op_type = node.op_type;
  m.domain = node.domain;
  m.overload = node.overload;
  m.inputs = node.inputs;
  m.outputs = node.outputs;
  m.in = std::move(in);
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    const std::string& out = node.outputs[o];
    const ValueFacts* f = out.empty() || predefined[o] ? nullptr : scope.find_here(out);
    m.out.push_back(f ? facts_of(*f) : MemoFacts{});
  }
  m.diagnostics.assign(diags_.items.begin() + static_cast<ptrdiff_t>(diag_start), diags_.items.end());
  m.position = static_cast<int>(k);
  m.symbols_before = symbols_before;
  m.symbols_after = symbol_counter_;
  memo_->nodes_[node.id] = std::move(m);
}

}  // namespace tessera::check
