#include "runtime/kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "runtime/dispatch.h"
#include "runtime/exec_graph.h"

namespace tessera::rt {

void throw_unsupported_dtype(std::string_view what, DataType dt) {
  throw KernelError(fmt::format("{} does not support element type {}", what, ir::dtype_name(dt)));
}

KernelInfo::KernelInfo(const ir::Node& node, const ops::OpSchema* schema, int opset,
                       std::vector<std::pair<std::string, const ExecGraph*>> subgraphs, NodeTypes types)
    : node_(&node),
      schema_(schema),
      since_(opset),
      subgraphs_(std::move(subgraphs)),
      types_(std::move(types)) {}

namespace {
const ir::Type& unknown_type() {
  static const ir::Type t;
  return t;
}
}  // namespace

const ir::Type& KernelInfo::input_type(size_t i) const {
  return i < types_.inputs.size() ? types_.inputs[i] : unknown_type();
}

const ir::Type& KernelInfo::output_type(size_t i) const {
  return i < types_.outputs.size() ? types_.outputs[i] : unknown_type();
}

DataType KernelInfo::input_dtype(size_t i) const {
  const ir::Type& t = input_type(i);
  return t.is_tensor() ? t.elem : DataType::kUndefined;
}

const ir::Attribute* KernelInfo::attr(std::string_view name) const {
  if (const ir::Attribute* a = node_->attr(name)) return a;
  if (!schema_) return nullptr;
  const ops::AttrSchema* s = schema_->find_attr(name);
  return s && s->default_value ? &*s->default_value : nullptr;
}

const ir::Attribute* KernelInfo::typed(std::string_view name, ir::AttrType t) const {
  const ir::Attribute* a = attr(name);
  if (!a) return nullptr;
  if (a->type != t)
    throw KernelError(fmt::format("attribute '{}' has the wrong type for {}", name, node_->op_type));
  return a;
}

namespace {
[[noreturn]] void missing(const KernelInfo& k, std::string_view name) {
  throw KernelError(fmt::format("{} needs attribute '{}'", k.op_type(), name));
}
}  // namespace

int64_t KernelInfo::get_int(std::string_view name) const {
  if (auto* a = typed(name, ir::AttrType::kInt)) return a->i;
  missing(*this, name);
}
int64_t KernelInfo::get_int(std::string_view name, int64_t fallback) const {
  auto* a = typed(name, ir::AttrType::kInt);
  return a ? a->i : fallback;
}
float KernelInfo::get_float(std::string_view name) const {
  if (auto* a = typed(name, ir::AttrType::kFloat)) return a->f;
  missing(*this, name);
}
float KernelInfo::get_float(std::string_view name, float fallback) const {
  auto* a = typed(name, ir::AttrType::kFloat);
  return a ? a->f : fallback;
}
std::string KernelInfo::get_string(std::string_view name) const {
  if (auto* a = typed(name, ir::AttrType::kString)) return a->s;
  missing(*this, name);
}
std::string KernelInfo::get_string(std::string_view name, std::string fallback) const {
  auto* a = typed(name, ir::AttrType::kString);
  return a ? a->s : fallback;
}
std::vector<int64_t> KernelInfo::get_ints(std::string_view name) const {
  if (auto* a = typed(name, ir::AttrType::kInts)) return a->ints;
  missing(*this, name);
}
std::vector<int64_t> KernelInfo::get_ints(std::string_view name, std::vector<int64_t> fallback) const {
  auto* a = typed(name, ir::AttrType::kInts);
  return a ? a->ints : fallback;
}
std::vector<float> KernelInfo::get_floats(std::string_view name) const {
  if (auto* a = typed(name, ir::AttrType::kFloats)) return a->floats;
  missing(*this, name);
}
std::vector<float> KernelInfo::get_floats(std::string_view name, std::vector<float> fallback) const {
  auto* a = typed(name, ir::AttrType::kFloats);
  return a ? a->floats : fallback;
}
std::vector<std::string> KernelInfo::get_strings(std::string_view name) const {
  if (auto* a = typed(name, ir::AttrType::kStrings)) return a->strings;
  missing(*this, name);
}
std::vector<std::string> KernelInfo::get_strings(std::string_view name,
                                                 std::vector<std::string> fallback) const {
  auto* a = typed(name, ir::AttrType::kStrings);
  return a ? a->strings : fallback;
}
const ir::Tensor* KernelInfo::get_tensor(std::string_view name) const {
  auto* a = typed(name, ir::AttrType::kTensor);
  return a && !a->tensors.empty() ? &a->tensors[0] : nullptr;
}

const ExecGraph& KernelInfo::subgraph(std::string_view attr_name) const {
  for (const auto& [n, g] : subgraphs_)
    if (n == attr_name) return *g;
  throw KernelError(fmt::format("{} has no graph attribute '{}'", node_->op_type, attr_name));
}

const Value& KernelContext::value(size_t i) const {
  if (i >= inputs_.size() || !inputs_[i])
    throw KernelError(fmt::format("{} needs input {}", info_.op_type(), i));
  return *inputs_[i];
}

const Tensor& KernelContext::input(size_t i) const {
  const Value& v = value(i);
  if (!v.is_tensor())
    throw KernelError(fmt::format("{} input {} must be a tensor, got {}", info_.op_type(), i, v.describe()));
  return v.tensor();
}

const Tensor* KernelContext::optional_input(size_t i) const {
  if (!has_input(i)) return nullptr;
  return &input(i);
}

Tensor& KernelContext::output(size_t i, DataType dtype, Shape shape) {
  if (i >= outputs_.size())
    throw KernelError(fmt::format("{} has no output {} in this node", info_.op_type(), i));
  outputs_[i] = Value(host_.allocate(dtype, std::move(shape)));
  return outputs_[i].tensor();
}

Tensor& KernelContext::output_uninitialized(size_t i, DataType dtype, Shape shape) {
  if (i >= outputs_.size())
    throw KernelError(fmt::format("{} has no output {} in this node", info_.op_type(), i));
  outputs_[i] = Value(host_.allocate_uninitialized(dtype, std::move(shape)));
  return outputs_[i].tensor();
}

Tensor* KernelContext::output_reusing(size_t out, size_t in, DataType dtype, const Shape& shape) {
  if (out >= outputs_.size() || in >= last_use_.size() || !last_use_[in]) return nullptr;
  const Value* v = inputs_[in];
  if (!v || !v->is_tensor()) return nullptr;
  const Tensor& t = v->tensor();
  // The frame's slot is the only owner: every other holder (caller, session, enclosing frame, a view
  // such as Reshape's output, a debugger capture) adds a reference.
  if (t.dtype() != dtype || t.shape() != shape || t.storage().use_count() != 1) return nullptr;
  outputs_[out] = Value(t);
  return &outputs_[out].tensor();
}

void KernelContext::set_output(size_t i, Value v) {
  if (i >= outputs_.size())
    throw KernelError(fmt::format("{} has no output {} in this node", info_.op_type(), i));
  outputs_[i] = std::move(v);
}

KernelDef KernelDef::fn(std::string op_type, KernelFn fn, int since_min, int since_max) {
  KernelDef d;
  d.op_type = std::move(op_type);
  d.since_min = since_min;
  d.since_max = since_max;
  d.name = "reference";
  d.create = [fn](const KernelInfo&) -> KernelPtr { return std::make_unique<FnKernel>(fn); };
  return d;
}

const KernelRegistry& KernelRegistry::cpu() {
  static const KernelRegistry* reg = [] {
    auto* r = new KernelRegistry();
    register_all_kernels(*r);
    return r;
  }();
  return *reg;
}

void KernelRegistry::add(KernelDef def) {
  defs_.push_back(std::move(def));
}

const KernelDef* KernelRegistry::find(const KernelInfo& info, int max_priority) const {
  const KernelDef* best = nullptr;
  const ir::Node& n = info.node();
  for (const KernelDef& d : defs_) {
    if (d.op_type != n.op_type || d.domain != ir::canonical_domain(n.domain)) continue;
    if (info.since_version() < d.since_min || info.since_version() > d.since_max) continue;
    if (d.priority > max_priority || (best && best->priority >= d.priority)) continue;
    if (d.supports && !d.supports(info)) continue;
    best = &d;
  }
  return best;
}

std::vector<const KernelDef*> KernelRegistry::all() const {
  std::vector<const KernelDef*> r;
  for (const auto& d : defs_) r.push_back(&d);
  return r;
}

}  // namespace tessera::rt
