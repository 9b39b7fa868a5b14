#include "transforms/float16.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "check/checker.h"
#include "check/graph_checker.h"
#include "ir/commands/rename_value.h"
#include "ops/registry.h"
#include "transforms/cast_cleanup.h"
#include "transforms/observer.h"
#include "transforms/shape_floats.h"
#include "transforms/specialise.h"
#include "transforms/standalone.h"
#include "transforms/tensor_convert.h"

namespace tessera::transforms {

namespace {

using ir::DataType;

// Where a float value lives after the conversion: float32 or the target type.
enum class Prec { k32, kLow };

bool has_subgraph(const ir::Node& n) {
  return std::any_of(n.attributes.begin(), n.attributes.end(),
                     [](const ir::Attribute& a) { return !a.graphs.empty(); });
}

bool is_onnx(const ir::Node& n, std::string_view op) {
  return ir::canonical_domain(n.domain).empty() && n.op_type == op;
}

std::string label(const ir::Node& n) {
  return n.name.empty() ? fmt::format("#{} ({})", n.id, n.op_type)
                        : fmt::format("'{}' ({})", n.name, n.op_type);
}

// What all graphs of one conversion share.
struct Shared {
  const ir::Model& model;
  const FloatConvertOptions& o;
  Report& report;
  NameTable names;
  const std::unordered_set<std::string>& retry_blocked;  // nodes whose conversion failed the check
  std::unordered_set<std::string> found_nodes, found_ops;
  std::string low_name;  // "float16"
};

class GraphConverter {
 public:
  GraphConverter(Shared& s, ir::Graph& g, std::unordered_map<std::string, ir::Type> types,
                 const GraphConverter* parent, const std::vector<ir::OpsetImport>& opsets, bool is_main,
                 bool in_function, std::string where)
      : s_(s),
        g_(g),
        types_(std::move(types)),
        parent_(parent),
        opsets_(opsets),
        is_main_(is_main),
        in_function_(in_function),
        where_(std::move(where)) {}

  void run();

  std::optional<ir::Type> type_of(const std::string& v) const {
    auto it = types_.find(v);
    if (it != types_.end()) return it->second;
    return parent_ && !defined_.count(v) ? parent_->type_of(v) : std::nullopt;
  }
  Prec prec(const std::string& v) const {
    if (defined_.count(v) || !parent_) return kept_.count(v) ? Prec::k32 : Prec::kLow;
    return parent_->prec(v);
  }

 private:
  bool is_float(const std::string& v) const {
    if (v.empty()) return false;
    auto t = type_of(v);
    return t && t->is_tensor() && t->elem == DataType::kFloat;
  }
  const ops::OpSchema* schema(const ir::Node& n) const;
  std::optional<std::string> block_reason(const ir::Node& n);
  Prec slot_need(const ir::Node& n, size_t i) const;
  void decide_blocked();
  void decide_kept();
  void fix_output_boundaries();
  void convert_initializers();
  ir::Tensor cached_convert(const ir::Tensor& t, ConversionStats* st);
  void drop_noop_casts();
  const std::string& resolve(const std::string& v) const {
    auto it = alias_.find(v);
    return it == alias_.end() ? v : resolve(it->second);
  }
  void convert_node(ir::Node& n);
  void convert_subgraphs(ir::Node& n);
  std::string version(const std::string& v, Prec need, std::vector<ir::Node>& out);
  ir::Node make_cast(const std::string& in, const std::string& out, Prec to);
  void retype_values();
  void note_conversion(const std::string& what, const ir::Tensor& t, const ConversionStats& st);

  Shared& s_;
  ir::Graph& g_;
  std::unordered_map<std::string, ir::Type> types_;
  const GraphConverter* parent_;
  const std::vector<ir::OpsetImport>& opsets_;
  bool is_main_, in_function_;
  std::string where_;
  std::unordered_set<std::string> defined_;                       // values this graph defines
  std::unordered_set<std::string> kept_;                          // ... of which stay float32
  std::unordered_map<ir::NodeId, std::string> blocked_;           // node -> why it stays float32
  std::unordered_set<ir::NodeId> quiet_blocked_;                  // Constants read only in float32
  std::unordered_set<ir::NodeId> casts_to_float_;                 // Casts that write a float32 graph output
  std::unordered_set<ir::NodeId> dropped_;                        // Casts that became no-ops
  std::unordered_map<std::string, std::string> alias_;            // output of a dropped Cast -> its input
  std::unordered_set<std::string> sub_reads_;                     // values nested graphs read
  std::map<std::pair<std::string, Prec>, std::string> versions_;  // Cast outputs made here
  // Casts onto graph outputs: after the node producing their input, or first of all.
  std::unordered_map<std::string, ir::Node> after_;
  std::vector<ir::Node> head_;
  ir::NodeId next_id_ = 1;
};

const ops::OpSchema* GraphConverter::schema(const ir::Node& n) const {
  std::string_view d = ir::canonical_domain(n.domain);
  for (const auto& o : opsets_) {
    if (ir::canonical_domain(o.domain) == d)
      return ops::OpRegistry::global().find(d, n.op_type, static_cast<int>(o.version));
  }
  return nullptr;
}

std::optional<std::string> GraphConverter::block_reason(const ir::Node& n) {
  bool by_name = !n.name.empty() && std::find(s_.o.node_block_list.begin(), s_.o.node_block_list.end(),
                                              n.name) != s_.o.node_block_list.end();
  std::string qualified = fmt::format("{}:{}", ir::canonical_domain(n.domain), n.op_type);
  auto op_it = std::find_if(s_.o.op_block_list.begin(), s_.o.op_block_list.end(), [&](const std::string& op) {
    return op == qualified || (op == n.op_type && ir::canonical_domain(n.domain).empty()) ||
           (op == n.op_type && op.find(':') == std::string::npos);
  });
  bool by_op = op_it != s_.o.op_block_list.end();
  if (by_name) s_.found_nodes.insert(n.name);
  if (by_op) s_.found_ops.insert(*op_it);
  bool is_call = s_.model.find_function(n.domain, n.op_type, n.overload) != nullptr;
  if (by_name || by_op) {
    const char* why = has_subgraph(n) ? "it holds subgraphs, which are converted node by node"
                      : is_call       ? "it calls a local function, whose body is converted with the model"
                      : in_function_  ? "it is inside a local function, whose body is converted as a whole"
                                      : nullptr;
    if (why) {
      throw TransformError(fmt::format("{}: node {} in graph {} cannot stay float32: {}",
                                       by_name ? "--node-block-list" : "--op-block-list", label(n), where_,
                                       why));
    }
    return by_name ? "named in the node block list" : "its operator is in the op block list";
  }
  if (!n.name.empty() && s_.retry_blocked.count(n.name)) return "its conversion did not type-check";
  if (in_function_ || has_subgraph(n) || is_call) return std::nullopt;
  bool float_io = std::any_of(n.inputs.begin(), n.inputs.end(), [&](const auto& v) { return is_float(v); }) ||
                  std::any_of(n.outputs.begin(), n.outputs.end(), [&](const auto& v) { return is_float(v); });
  if (!float_io) return std::nullopt;
  const ops::OpSchema* sc = schema(n);
  if (!sc) return fmt::format("no schema is known for {}", qualified);
  ir::Type low = ir::Type::tensor(s_.o.to);
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const ops::FormalParam* p = sc->output_param(i);
    if (p && is_float(n.outputs[i]) && !check::type_allowed(*sc, p->type, low))
      return fmt::format("{}-{} has no {} output {}", n.op_type, sc->since_version(), s_.low_name, i);
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const ops::FormalParam* p = sc->input_param(i);
    if (!p || !is_float(n.inputs[i]) || check::type_allowed(*sc, p->type, low)) continue;
    // A literal tensor(float) input (Resize's scales) just keeps reading float32.
    if (!sc->find_type_param(p->type)) continue;
    return fmt::format("{}-{} takes no {} input {}", n.op_type, sc->since_version(), s_.low_name, i);
  }
  return std::nullopt;
}

Prec GraphConverter::slot_need(const ir::Node& n, size_t i) const {
  if (blocked_.count(n.id) || quiet_blocked_.count(n.id)) return Prec::k32;
  if (in_function_) return Prec::kLow;
  const ops::OpSchema* sc = schema(n);
  if (!sc) return Prec::kLow;
  const ops::FormalParam* p = sc->input_param(i);
  if (p && !sc->find_type_param(p->type) && !check::type_allowed(*sc, p->type, ir::Type::tensor(s_.o.to)))
    return Prec::k32;
  return Prec::kLow;
}

void GraphConverter::decide_blocked() {
  for (const auto& n : g_.nodes) {
    if (auto why = block_reason(n)) {
      blocked_[n.id] = *why;
      s_.report.details.push_back(fmt::format("{}: node {} stays float32: {}", where_, label(n), *why));
    }
  }
  if (!in_function_) {  // a function body converts as a whole
    auto island = float_shape_arithmetic(g_, [this](const std::string& v) { return type_of(v); });
    for (const auto& n : g_.nodes) {
      if (!island.count(n.id) || blocked_.count(n.id)) continue;
      blocked_[n.id] = "it computes integer values in float (from an integer Cast back to one)";
      s_.report.add("shape arithmetic kept float32");
      s_.report.details.push_back(
          fmt::format("{}: node {} stays float32: {}", where_, label(n), blocked_[n.id]));
    }
  }
  s_.report.add("nodes kept float32", static_cast<int64_t>(blocked_.size()));
}

void GraphConverter::decide_kept() {
  // Who reads each value, and whether every reader reads it in float32.
  std::unordered_map<std::string, bool> all32;
  auto read = [&](const std::string& v, Prec p) {
    auto [it, fresh] = all32.emplace(v, p == Prec::k32);
    if (!fresh) it->second = it->second && p == Prec::k32;
  };
  for (const auto& n : g_.nodes) {
    for (size_t i = 0; i < n.inputs.size(); ++i) read(n.inputs[i], slot_need(n, i));
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs)
        for (const auto& v : outer_values(*sub)) {
          read(v, Prec::kLow);
          sub_reads_.insert(v);
        }
  }
  Prec out_want = is_main_ && s_.o.keep_io_types ? Prec::k32 : Prec::kLow;
  for (const auto& o : g_.outputs) read(o.name, out_want);
  auto only32 = [&](const std::string& v) {
    auto it = all32.find(v);
    return it != all32.end() && it->second;
  };
  // Constants read only by float32 nodes stay float32 themselves: no Cast back.
  for (const auto& n : g_.nodes) {
    if (is_onnx(n, "Constant") && !blocked_.count(n.id) && !in_function_ && n.outputs.size() == 1 &&
        is_float(n.outputs[0]) && only32(n.outputs[0]))
      quiet_blocked_.insert(n.id);
  }
  if (is_main_ && s_.o.keep_io_types) {
    for (const auto& vi : g_.inputs)
      if (is_float(vi.name)) kept_.insert(vi.name);
  }
  for (const auto& n : g_.nodes) {
    if (!blocked_.count(n.id) && !quiet_blocked_.count(n.id)) continue;
    for (const auto& o : n.outputs)
      if (is_float(o)) kept_.insert(o);
  }
  for (const auto& t : g_.initializers) {
    if (t.dtype != DataType::kFloat || g_.find_input(t.name)) continue;
    if (only32(t.name)) kept_.insert(t.name);
  }
}

ir::Node GraphConverter::make_cast(const std::string& in, const std::string& out, Prec to) {
  ir::Node c;
  c.id = next_id_++;
  c.name = s_.names.fresh(out + "_cast");
  c.op_type = "Cast";
  c.inputs = {in};
  c.outputs = {out};
  c.attributes.push_back(
      ir::Attribute::of_int("to", static_cast<int64_t>(to == Prec::k32 ? DataType::kFloat : s_.o.to)));
  s_.report.add("Casts added");
  s_.report.details.push_back(
      fmt::format("{}: Cast '{}' -> '{}' ({})", where_, in, out, to == Prec::k32 ? "float" : s_.low_name));
  return c;
}

// Graph outputs must carry the precision their readers expect: the model's interface with
// --keep-io-types, the parent node's (always the target type: control flow nodes are converted) for a
// subgraph. Where the producer computes the other one, it writes a new name and one Cast right after it
// writes the output; readers inside the graph that want the output's precision read that Cast too.
void GraphConverter::fix_output_boundaries() {
  Prec want = is_main_ && s_.o.keep_io_types ? Prec::k32 : Prec::kLow;
  for (size_t k = 0; k < g_.outputs.size(); ++k) {
    std::string o = g_.outputs[k].name;
    if (!is_float(o) || prec(o) == want) continue;
    auto producer = std::find_if(g_.nodes.begin(), g_.nodes.end(), [&](const ir::Node& n) {
      return std::find(n.outputs.begin(), n.outputs.end(), o) != n.outputs.end();
    });
    bool produced = producer != g_.nodes.end();
    if (produced && want == Prec::k32 && is_onnx(*producer, "Cast") && !blocked_.count(producer->id)) {
      // The model's own Cast to float32 already is the boundary: it keeps its target.
      casts_to_float_.insert(producer->id);
      kept_.insert(o);
      continue;
    }
    Prec have = prec(o);
    std::string inner = s_.names.fresh(o + (have == Prec::k32 ? "_float" : "_" + s_.low_name));
    if (produced) {
      ir::rename_value_in_scope(g_, o, inner);
      for (auto& vi : g_.outputs)
        if (vi.name == inner) vi.name = o;
      types_[inner] = *type_of(o);
      defined_.insert(inner);
      if (have == Prec::k32) kept_.insert(inner);
      if (want == Prec::k32) {
        kept_.insert(o);
      } else {
        kept_.erase(o);
      }
      after_[inner] = make_cast(inner, o, want);
      versions_[{inner, want}] = o;
    } else {
      // A subgraph output that is an input, initializer or outer value: the output takes the new name.
      types_[inner] = *type_of(o);
      defined_.insert(inner);
      if (want == Prec::k32) kept_.insert(inner);
      head_.push_back(make_cast(o, inner, want));
      versions_[{o, want}] = inner;
      g_.outputs[k].name = inner;
    }
  }
}

void GraphConverter::note_conversion(const std::string& what, const ir::Tensor& t,
                                     const ConversionStats& st) {
  if (st.clamped) {
    s_.report.warnings.push_back(
        fmt::format("{}: {} '{}': {} of {} values beyond {}'s range clamped to its "
                    "largest value",
                    where_, what, t.name, st.clamped, st.elements, s_.low_name));
    s_.report.add("values clamped", st.clamped);
  }
  if (st.underflowed) {
    s_.report.details.push_back(
        fmt::format("{}: {} '{}': {} non-zero values became zero", where_, what, t.name, st.underflowed));
    s_.report.add("values flushed to zero", st.underflowed);
  }
}

void GraphConverter::convert_initializers() {
  Steps steps("converting initializers", is_main_ ? g_.initializers.size() : 0, 0.1, 0.6);
  for (size_t i = 0; i < g_.initializers.size(); ++i) {
    ir::Tensor& t = g_.initializers[i];
    if (is_main_) steps.at(i);
    if (t.dtype != DataType::kFloat || kept_.count(t.name)) continue;
    ConversionStats st;
    t = cached_convert(t, &st);
    note_conversion("initializer", t, st);
    s_.report.add("initializers converted");
  }
  for (auto& sp : g_.sparse_initializers) {
    if (sp.values.dtype != DataType::kFloat || kept_.count(sp.values.name)) continue;
    ConversionStats st;
    sp.values = convert_tensor(sp.values, s_.o.to, &st);
    note_conversion("sparse initializer", sp.values, st);
    s_.report.add("initializers converted");
  }
}

ir::Tensor GraphConverter::cached_convert(const ir::Tensor& t, ConversionStats* st) {
  const void* key = t.data ? static_cast<const void*>(t.data.get()) : nullptr;
  if (!s_.o.cache || !key) return convert_tensor(t, s_.o.to, st);
  auto it = s_.o.cache->by_buffer.find(key);
  if (it != s_.o.cache->by_buffer.end() &&
      (it->second.source != t.data || it->second.converted.dims != t.dims)) {
    s_.o.cache->by_buffer.erase(it);  // another tensor's buffer (or view) at the same address
    it = s_.o.cache->by_buffer.end();
  }
  if (it == s_.o.cache->by_buffer.end()) {
    ConversionStats fresh;
    ir::Tensor converted = convert_tensor(t, s_.o.to, &fresh);
    it = s_.o.cache->by_buffer.emplace(key, ConvertedTensors::Entry{t.data, std::move(converted), fresh})
             .first;
  }
  *st = it->second.stats;
  ir::Tensor out = it->second.converted;
  out.name = t.name;  // two initializers may share one buffer
  return out;
}

void GraphConverter::convert_node(ir::Node& n) {
  int64_t low = static_cast<int64_t>(s_.o.to);
  bool constant = is_onnx(n, "Constant");
  for (auto& a : n.attributes) {
    if (a.is_reference()) continue;
    if (a.type == ir::AttrType::kTensor || a.type == ir::AttrType::kTensors) {
      for (auto& t : a.tensors) {
        if (t.dtype != DataType::kFloat) continue;
        ConversionStats st;
        t = convert_tensor(t, s_.o.to, &st);
        note_conversion(constant ? "Constant" : "tensor attribute", t, st);
        s_.report.add(constant ? "Constant values converted" : "tensor attributes converted");
      }
    }
    if (constant && (a.name == "value_float" || a.name == "value_floats")) {
      bool scalar = a.name == "value_float";
      std::vector<float> v = scalar ? std::vector<float>{a.f} : a.floats;
      std::vector<int64_t> dims;
      if (!scalar) dims.push_back(static_cast<int64_t>(v.size()));
      ConversionStats st;
      ir::Tensor t = convert_tensor(ir::make_tensor("", DataType::kFloat, dims, v), s_.o.to, &st);
      note_conversion("Constant", t, st);
      a = ir::Attribute::of_tensor("value", std::move(t));
      s_.report.add("Constant values converted");
    }
  }
  auto retarget = [&](const char* attr, bool default_float) {
    ir::Attribute* a = n.attr(attr);
    if (a && a->is_reference()) return;
    if (a ? a->type == ir::AttrType::kInt && a->i == static_cast<int64_t>(DataType::kFloat) : default_float) {
      if (a) {
        a->i = low;
      } else {
        n.attributes.push_back(ir::Attribute::of_int(attr, low));
      }
      s_.report.add(is_onnx(n, "Cast") ? "Cast targets converted" : "dtype attributes converted");
    }
  };
  if (is_onnx(n, "Cast") && !casts_to_float_.count(n.id)) retarget("to", false);
  if (is_onnx(n, "RandomNormal") || is_onnx(n, "RandomUniform")) retarget("dtype", true);
  for (const char* op : {"RandomNormalLike", "RandomUniformLike", "EyeLike", "Bernoulli"})
    if (is_onnx(n, op)) retarget("dtype", false);
}

void GraphConverter::convert_subgraphs(ir::Node& n) {
  for (auto& a : n.attributes) {
    for (size_t k = 0; k < a.graphs.size(); ++k) {
      ir::Graph& sub = *a.graphs[k];
      std::string where =
          fmt::format("{}/{}.{}", where_, n.name.empty() ? fmt::format("#{}", n.id) : n.name, a.name);
      std::unordered_map<std::string, ir::Type> types;
      if (!in_function_) {
        types = graph_value_types(s_.model, sub, [&](const std::string& v) { return type_of(v); });
      }
      GraphConverter child(s_, sub, std::move(types), this, opsets_, false, in_function_, where);
      child.run();
    }
  }
}

// A Cast to float32 of a value that becomes float16 would turn into a Cast from float16 to float16:
// its readers read its input instead. (Not when it writes a graph output, whose name must stay, or a
// value nested graphs read.)
void GraphConverter::drop_noop_casts() {
  for (const auto& n : g_.nodes) {
    if (!is_onnx(n, "Cast") || blocked_.count(n.id) || casts_to_float_.count(n.id)) continue;
    const ir::Attribute* to = n.attr("to");
    if (!to || to->is_reference() || to->i != static_cast<int64_t>(DataType::kFloat)) continue;
    if (n.inputs.empty() || n.outputs.size() != 1 || !is_float(n.inputs[0])) continue;
    const std::string& out = n.outputs[0];
    if (prec(n.inputs[0]) != Prec::kLow || kept_.count(out) || sub_reads_.count(out) || g_.find_output(out))
      continue;
    dropped_.insert(n.id);
    alias_[out] = n.inputs[0];
    s_.report.add("no-op Casts removed");
    s_.report.details.push_back(
        fmt::format("{}: Cast {} removed: its input is already {}", where_, label(n), s_.low_name));
  }
}

std::string GraphConverter::version(const std::string& v, Prec need, std::vector<ir::Node>& out) {
  auto key = std::make_pair(v, need);
  auto it = versions_.find(key);
  if (it != versions_.end()) return it->second;
  std::string name = s_.names.fresh(v + (need == Prec::k32 ? "_float" : "_" + s_.low_name));
  out.push_back(make_cast(v, name, need));
  defined_.insert(name);
  if (need == Prec::k32) kept_.insert(name);
  if (auto t = type_of(v)) types_[name] = *t;
  versions_[key] = name;
  return name;
}

void GraphConverter::retype_values() {
  auto retype = [&](ir::ValueInfo& vi, bool low) {
    if (!low) return;
    bool changed = false;
    vi.type = retype_float(vi.type, s_.o.to, &changed);
    if (changed) s_.report.add("value types converted");
  };
  Prec want = is_main_ && s_.o.keep_io_types ? Prec::k32 : Prec::kLow;
  for (auto& vi : g_.inputs) retype(vi, !kept_.count(vi.name));
  for (auto& vi : g_.outputs) retype(vi, want == Prec::kLow);
  std::erase_if(g_.value_info, [&](const ir::ValueInfo& vi) { return alias_.count(vi.name) != 0; });
  for (auto& vi : g_.value_info) retype(vi, prec(vi.name) == Prec::kLow);
}

void GraphConverter::run() {
  for (const auto& vi : g_.inputs) defined_.insert(vi.name);
  for (const auto& t : g_.initializers) defined_.insert(t.name);
  for (const auto& t : g_.sparse_initializers) defined_.insert(t.values.name);
  for (const auto& n : g_.nodes) {
    next_id_ = std::max(next_id_, n.id + 1);
    for (const auto& o : n.outputs) defined_.insert(o);
  }
  next_id_ = std::max(next_id_, g_.next_node_id);
  decide_blocked();
  decide_kept();
  fix_output_boundaries();
  drop_noop_casts();
  convert_initializers();
  std::vector<ir::Node> out = std::move(head_);
  out.reserve(g_.nodes.size() + after_.size() + out.size());
  Steps steps("converting nodes", is_main_ ? g_.nodes.size() : 0, 0.6, 0.8);
  for (auto& n : g_.nodes) {
    if (is_main_) steps.at(static_cast<size_t>(&n - g_.nodes.data()));
    if (dropped_.count(n.id)) continue;
    bool keep32 = blocked_.count(n.id) || quiet_blocked_.count(n.id);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (!n.inputs[i].empty()) n.inputs[i] = resolve(n.inputs[i]);
      const std::string& v = n.inputs[i];
      if (!is_float(v)) continue;
      Prec need = slot_need(n, i);
      if (prec(v) != need) n.inputs[i] = version(v, need, out);
    }
    if (!keep32) {
      convert_node(n);
      convert_subgraphs(n);
    }
    std::vector<std::string> outputs = n.outputs;
    out.push_back(std::move(n));
    for (const auto& o : outputs) {
      auto it = after_.find(o);
      if (it != after_.end()) out.push_back(std::move(it->second));
    }
  }
  g_.nodes = std::move(out);
  g_.next_node_id = next_id_;
  retype_values();
}

std::unordered_map<std::string, ir::Type> main_types(const ir::Model& m) {
  auto types = check::check_model(m).value_types;
  for (const auto& vi : m.graph.inputs)
    if (!vi.type.is_none()) types.emplace(vi.name, vi.type);
  for (const auto& vi : m.graph.outputs)
    if (!vi.type.is_none()) types.emplace(vi.name, vi.type);
  for (const auto& t : m.graph.initializers) types.emplace(t.name, ir::Type::tensor(t.dtype));
  return types;
}

// Whether the block list names a node of the function's body.
bool blocks_inside(const ir::Function& f, const FloatConvertOptions& o) {
  return std::any_of(f.body.nodes.begin(), f.body.nodes.end(), [&](const ir::Node& n) {
    return !n.name.empty() &&
           std::find(o.node_block_list.begin(), o.node_block_list.end(), n.name) != o.node_block_list.end();
  });
}

ir::Model convert_once(const ir::Model& m, const FloatConvertOptions& o, Report& report,
                       const std::unordered_set<std::string>& retry_blocked,
                       const std::unordered_map<std::string, ir::Type>& types) {
  ir::Model out = m;
  Shared s{m, o, report, NameTable(m), retry_blocked, {}, {}, std::string(ir::dtype_name(o.to))};
  GraphConverter main(s, out.graph, types, nullptr, out.opset_imports, true, false, "main");
  main.run();
  for (size_t k = 0; k < out.functions.size(); ++k) {
    ir::Function& f = out.functions[k];
    const auto& opsets = f.opset_imports.empty() ? out.opset_imports : f.opset_imports;
    std::string where = fmt::format("function {}{}", f.domain.empty() ? "" : f.domain + ".", f.name);
    // A body with a node kept float32 is converted node by node, typed from its calls; else as a whole.
    bool typed = blocks_inside(m.functions[k], o);
    std::unordered_map<std::string, ir::Type> body_types;
    if (typed) {
      auto t = function_value_types(m, m.functions[k], types);
      if (!t)
        throw TransformError(fmt::format(
            "--node-block-list names a node of {}: its body cannot stay partly float32 unless the main graph "
            "calls it, every call with the same input types",
            where));
      body_types = std::move(*t);
    }
    GraphConverter body(s, f.body, std::move(body_types), nullptr, opsets, false, !typed, where);
    body.run();
  }
  for (const auto& name : o.node_block_list) {
    if (!s.found_nodes.count(name))
      throw TransformError(fmt::format("--node-block-list names node '{}', which is not in the model", name));
  }
  for (const auto& op : o.op_block_list) {
    if (!s.found_ops.count(op))
      report.warnings.push_back(fmt::format("--op-block-list: no node of the model has operator '{}'", op));
  }
  return out;
}

std::string first_errors(const check::Diagnostics& d) {
  std::string s;
  int shown = 0;
  for (const auto& item : d.items) {
    if (item.severity != check::Severity::kError) continue;
    if (shown++ == 3) break;
    s += "\n  " + item.to_string();
  }
  return s;
}

// The Casts that cancel across graphs (remove_redundant_casts), kept only if the model still
// type-checks: a failure there is a bug, reported rather than written.
void remove_casts_checked(ir::Model& m, Report& r) {
  ir::Model cleaned = m;
  Report extra;
  if (remove_redundant_casts(cleaned, extra) == 0) return;
  auto check = check::check_model(cleaned);
  if (check.diagnostics.has_errors()) {
    r.warnings.push_back("removing redundant Casts broke type checking; they stay:" +
                         first_errors(check.diagnostics));
    return;
  }
  m = std::move(cleaned);
  for (auto& [what, n] : extra.counts) r.add(what, n);
  for (auto& d : extra.details) r.details.push_back(std::move(d));
}

}  // namespace

ir::Model convert_float_copy(const ir::Model& m, const FloatConvertOptions& o, Report& report) {
  if (o.to != DataType::kFloat16 && o.to != DataType::kBFloat16) {
    throw TransformError(
        fmt::format("cannot convert to {}: the target is float16 or bfloat16", ir::dtype_name(o.to)));
  }
  report_progress(0, "type-checking the model");
  auto before = check::check_model(m);
  if (before.diagnostics.has_errors()) {
    throw TransformError(fmt::format("the model does not type-check before conversion ({} errors):{}",
                                     before.diagnostics.count(check::Severity::kError),
                                     first_errors(before.diagnostics)));
  }
  auto types = main_types(m);
  // A block list naming a node of a function the main graph calls with different types: a copy of the
  // function per call signature, each typed from its own calls (the node blocked in each).
  auto named_inside = [&](const ir::Function& f) { return blocks_inside(f, o); };
  if (std::any_of(m.functions.begin(), m.functions.end(), named_inside)) {
    ir::Model specialised = m;
    if (specialise_functions(specialised, types, false, named_inside) > 0) {
      Report inner;
      ir::Model out = convert_float_copy(specialised, o, inner);
      inner.details.push_back("functions copied per call signature, for the block list");
      report = std::move(inner);
      return out;
    }
  }
  std::unordered_set<std::string> retry;
  // A node whose schema accepts the target type may still refuse the converted model through its
  // shape inference or an attribute; such nodes stay float32 and the conversion runs again.
  for (int round = 0;; ++round) {
    Report r;
    ir::Model out = convert_once(m, o, r, retry, types);
    report_progress(0.8, round ? fmt::format("type-checking the result (round {})", round + 1)
                               : std::string("type-checking the result"));
    auto after = check::check_model(out);
    if (!after.diagnostics.has_errors()) {
      report_progress(0.9, "removing redundant Casts");
      remove_casts_checked(out, r);
      report = std::move(r);
      return out;
    }
    size_t added = 0;
    for (const auto& d : after.diagnostics.items) {
      if (d.severity == check::Severity::kError && !d.node.empty() && retry.insert(d.node).second) ++added;
    }
    if (added == 0 || round == 8) {
      throw TransformError(
          fmt::format("the converted model does not type-check:{}", first_errors(after.diagnostics)));
    }
  }
}

Report convert_float(ir::History& h, const FloatConvertOptions& options) {
  Report report;
  ir::Model out = convert_float_copy(h.model(), options, report);
  report_progress(0.95, "recording the edit");
  commit(h, options.to == DataType::kFloat16 ? "Convert to float16" : "Convert to bfloat16", std::move(out));
  return report;
}

}  // namespace tessera::transforms
