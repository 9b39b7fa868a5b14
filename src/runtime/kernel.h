// Kernels: what runs one node. A kernel is created once per node when the session is built (reading
// and checking its attributes there) and computes on every run from a KernelContext that hands it the
// node's input values and allocates its outputs.
//
// Kernels register per backend in a KernelRegistry, for a range of the operator's schema versions, with
// a priority: the reference kernel (priority 0) next to each op's schema in src/ops, faster kernels of
// a backend above it. The highest-priority kernel whose `supports` accepts the node is used; see
// ../shared/ARCHITECTURE.md on "one op, one place".
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ops/schema.h"
#include "runtime/stream.h"
#include "runtime/value.h"

namespace tessera::rt {

class ThreadPool;
class ExecGraph;

// What a kernel throws for bad input data ("indices out of range", "shapes [2,3] and [4] do not
// broadcast"); the executor adds which node of which graph it was.
class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The types of a node's values as shape inference found them at session build (kind kNone where it
// found nothing): kernels choose their path from these when the session is built, not per run.
struct NodeTypes {
  std::vector<ir::Type> inputs, outputs;
};

// The node as a kernel sees it at creation: attributes (with the schema's defaults), opset version,
// compiled subgraphs of control-flow attributes and the inferred types of its inputs and outputs.
class KernelInfo {
 public:
  KernelInfo(const ir::Node& node, const ops::OpSchema* schema, int opset,
             std::vector<std::pair<std::string, const ExecGraph*>> subgraphs = {}, NodeTypes types = {});

  const ir::Node& node() const { return *node_; }
  const ops::OpSchema* schema() const { return schema_; }
  const std::string& op_type() const { return node_->op_type; }
  // The operator's version as bound by the model's opset import (the schema's since-version).
  int since_version() const { return since_; }
  size_t input_count() const { return node_->inputs.size(); }
  size_t output_count() const { return node_->outputs.size(); }
  bool has_input(size_t i) const { return i < node_->inputs.size() && !node_->inputs[i].empty(); }
  bool has_output(size_t i) const { return i < node_->outputs.size() && !node_->outputs[i].empty(); }
  // The inferred type of input / output i; a type of kind kNone when unknown (or i out of range).
  const ir::Type& input_type(size_t i) const;
  const ir::Type& output_type(size_t i) const;
  // The element type of input i when inference knows it, else kUndefined.
  DataType input_dtype(size_t i) const;

  // The attribute as written in the node or, failing that, the schema's default; nullptr when neither.
  const ir::Attribute* attr(std::string_view name) const;
  bool has_attr(std::string_view name) const { return attr(name) != nullptr; }
  // Typed getters. Without a fallback they throw KernelError when the attribute and its default are
  // absent; they also throw when the attribute has another type.
  int64_t get_int(std::string_view name) const;
  int64_t get_int(std::string_view name, int64_t fallback) const;
  float get_float(std::string_view name) const;
  float get_float(std::string_view name, float fallback) const;
  std::string get_string(std::string_view name) const;
  std::string get_string(std::string_view name, std::string fallback) const;
  std::vector<int64_t> get_ints(std::string_view name) const;
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> fallback) const;
  std::vector<float> get_floats(std::string_view name) const;
  std::vector<float> get_floats(std::string_view name, std::vector<float> fallback) const;
  std::vector<std::string> get_strings(std::string_view name) const;
  std::vector<std::string> get_strings(std::string_view name, std::vector<std::string> fallback) const;
  const ir::Tensor* get_tensor(std::string_view name) const;  // nullptr when absent
  // The compiled body of a graph attribute (If's then_branch, Loop's body...); throws when absent.
  const ExecGraph& subgraph(std::string_view attr_name) const;

 private:
  const ir::Attribute* typed(std::string_view name, ir::AttrType t) const;
  const ir::Node* node_;
  const ops::OpSchema* schema_;
  int since_;
  std::vector<std::pair<std::string, const ExecGraph*>> subgraphs_;
  NodeTypes types_;
};

// The executor's side of a KernelContext: allocation and subgraph runs.
class ExecutionHost {
 public:
  virtual ~ExecutionHost() = default;
  virtual Tensor allocate(DataType dtype, Shape shape) = 0;  // zero-filled (strings empty)
  // Without the zero fill, for kernels that write every element: clearing a large activation costs
  // about as much as a memory-bound kernel's whole run.
  virtual Tensor allocate_uninitialized(DataType dtype, Shape shape) {
    return allocate(dtype, std::move(shape));
  }
  virtual std::vector<Value> run_subgraph(const ExecGraph& g, std::span<const Value> inputs) = 0;
  virtual ThreadPool& threads() = 0;
  virtual bool cancelled() const = 0;
  // The stream of the backend the node runs on.
  virtual Stream& stream() { return host_stream(); }
};

class KernelContext {
 public:
  // `last_use[i]`: this node is input i's last reader (ExecNode::last_use); empty: never.
  KernelContext(const KernelInfo& info, std::span<const Value* const> inputs, std::span<Value> outputs,
                ExecutionHost& host, std::span<const uint8_t> last_use = {})
      : info_(info), inputs_(inputs), outputs_(outputs), host_(host), last_use_(last_use) {}

  const KernelInfo& info() const { return info_; }
  size_t input_count() const { return inputs_.size(); }
  size_t output_count() const { return outputs_.size(); }

  // True when input i is given and is not an empty optional.
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] && !inputs_[i]->is_none(); }
  // Input i, which must be given (KernelError otherwise, naming the input).
  const Value& value(size_t i) const;
  // Input i as a tensor; KernelError when missing or not a tensor.
  const Tensor& input(size_t i) const;
  // nullptr when input i is missing or an empty optional.
  const Tensor* optional_input(size_t i) const;
  // The raw slot: nullptr when the node leaves the input out; may hold an empty optional.
  const Value* input_slot(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }

  // Whether the node's output i has a consumer-visible name (optional outputs may be left out).
  bool wants_output(size_t i) const { return info_.has_output(i); }
  // Allocates output i (through the session's memory plan) and returns it for the kernel to fill.
  // Contents are zero (strings empty).
  Tensor& output(size_t i, DataType dtype, Shape shape);
  // The same without the zero fill (contents unspecified): for kernels that write every element.
  Tensor& output_uninitialized(size_t i, DataType dtype, Shape shape);
  // Sets output i to a value the kernel built itself: a sequence, an input passed through, a view.
  void set_output(size_t i, Value v);
  // Makes output `out` the tensor of input `in`, to be overwritten in place, when that is safe: this
  // node is the input's last reader, nothing else holds its memory (not a graph input, an initializer,
  // an outer-scope value or a view of another value) and it has `dtype` and `shape`. Returns the output,
  // or nullptr when the kernel must allocate one. Saves a copy where an output starts as an input (a
  // residual added by a convolution's sum post-op).
  Tensor* output_reusing(size_t out, size_t in, DataType dtype, const Shape& shape);
  // A scratch tensor from the same allocator (freed when the kernel drops it).
  Tensor scratch(DataType dtype, Shape shape) { return host_.allocate(dtype, std::move(shape)); }
  Tensor scratch_uninitialized(DataType dtype, Shape shape) {
    return host_.allocate_uninitialized(dtype, std::move(shape));
  }

  std::vector<Value> run_subgraph(std::string_view attr_name, std::span<const Value> inputs) {
    return host_.run_subgraph(info_.subgraph(attr_name), inputs);
  }
  ThreadPool& threads() { return host_.threads(); }
  bool cancelled() const { return host_.cancelled(); }
  // Where the kernel queues its work: device kernels launch on stream().native().
  Stream& stream() { return host_.stream(); }

  // Throws KernelError with the message; for `fail(fmt::format(...))` one-liners in kernels.
  [[noreturn]] void fail(const std::string& message) const { throw KernelError(message); }

  // Which of its paths the kernel took, when it has several ("winograd", "own gemm", "reference
  // fallback", oneDNN's implementation name): the profiler shows it beside the kernel's name. The text
  // must outlive compute() (a literal, or a string the kernel keeps).
  void set_path(std::string_view path) { path_ = path; }
  std::string_view path() const { return path_; }

 private:
  const KernelInfo& info_;
  std::span<const Value* const> inputs_;
  std::span<Value> outputs_;
  ExecutionHost& host_;
  std::span<const uint8_t> last_use_;
  std::string_view path_;
};

// What a kernel sees when the session is built, before any run: the constant inputs (initializers),
// so that it can lay out or pack its weights then, not on the first run, and give the original up.
class PrepareContext {
 public:
  virtual ~PrepareContext() = default;
  // The tensor that input i always has (an initializer of the graph), or nullptr.
  virtual const Tensor* constant(size_t i) const = 0;
  // The kernel keeps what it needs of constant input i in its own layout and will never read the input
  // again: once every reader has released it, the session frees the original (on the device that held
  // it, and its pages of a memory-mapped file), so that a weight is held once per device.
  virtual void release(size_t i) = 0;
  virtual Stream& stream() { return host_stream(); }
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual void compute(KernelContext& ctx) const = 0;
  // Called once when the session is built, with the node's constant inputs; the default does nothing.
  // A kernel that prepares its weights here must still run when a later run finds other shapes.
  virtual void prepare(PrepareContext& ctx) { (void)ctx; }
  // Bytes the kernel holds beyond the model's own tensors: weights reordered or packed into its layout
  // (oneDNN's blocked filters, the own GEMM's panels). Counted in RunStats::prepared_weight_bytes.
  virtual size_t prepared_bytes() const { return 0; }
};
using KernelPtr = std::unique_ptr<OpKernel>;
using KernelFn = void (*)(KernelContext&);
using KernelFactory = std::function<KernelPtr(const KernelInfo&)>;

// A kernel that is just a function of the context (most reference kernels).
class FnKernel : public OpKernel {
 public:
  explicit FnKernel(KernelFn fn) : fn_(fn) {}
  void compute(KernelContext& ctx) const override { fn_(ctx); }

 private:
  KernelFn fn_;
};

struct KernelDef {
  std::string domain;  // "" for ai.onnx
  std::string op_type;
  int since_min = 1;  // schema since-versions covered, inclusive
  int since_max = INT_MAX;
  int priority = 0;                                 // reference 0; faster kernels higher
  std::string name;                                 // "reference", "dnnl", ... shown by the profiler
  std::function<bool(const KernelInfo&)> supports;  // empty: every node of the op
  KernelFactory create;

  // Shorthands: a reference function kernel for versions [since_min, since_max] of an ai.onnx op.
  static KernelDef fn(std::string op_type, KernelFn fn, int since_min = 1, int since_max = INT_MAX);
  // ... and one built by a factory (a kernel class that parses attributes once).
  template <class K>
  static KernelDef of(std::string op_type, int since_min = 1, int since_max = INT_MAX) {
    KernelDef d;
    d.op_type = std::move(op_type);
    d.since_min = since_min;
    d.since_max = since_max;
    d.name = "reference";
    d.create = [](const KernelInfo& info) -> KernelPtr { return std::make_unique<K>(info); };
    return d;
  }
  KernelDef& in_domain(std::string d) {
    domain = std::move(d);
    return *this;
  }
};

// The kernels of one backend. Each backend owns one: the CPU backend's is filled from the
// TESSERA_REGISTER_KERNELS functions linked into Tessera, a backend library's by the library itself
// when it is loaded.
class KernelRegistry {
 public:
  // The built-in CPU kernels (reference kernels next to the op schemas, fast ones of src/backends/cpu),
  // filled on first use.
  static const KernelRegistry& cpu();

  void add(KernelDef def);
  // The best kernel definition for the node, or nullptr.
  // `max_priority` 0 restricts the choice to reference kernels (the oracle of the fast-kernel tests).
  const KernelDef* find(const KernelInfo& info, int max_priority = INT_MAX) const;
  // Every definition (all ops, all versions), for support tables.
  std::vector<const KernelDef*> all() const;

 private:
  std::vector<KernelDef> defs_;
};

// Each kernel file defines one registration function through this macro; CMake collects them (like
// TESSERA_REGISTER_OPS) into register_all_kernels().
#define TESSERA_REGISTER_KERNELS(tag) void tessera_register_kernels_##tag(::tessera::rt::KernelRegistry& reg)

void register_all_kernels(KernelRegistry& reg);  // generated

}  // namespace tessera::rt
