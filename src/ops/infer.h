// What an operator's shape-inference function sees and may do.
//
// Inference doubles as validation (tract's output_facts): an op that finds its inputs inconsistent
// calls ctx.fail("...") with a sentence a person understands; the checker turns it into a diagnostic
// naming the node. Unknown input types or shapes are normal (dynamic models): infer what can be
// inferred, leave the rest unknown, and never fail just because something is not known.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/type.h"
#include "ops/schema.h"

namespace tessera::ops {

// Thrown by InferenceContext::fail; carries the index of the input or output at fault (-1: none).
class InferenceError : public std::runtime_error {
 public:
  InferenceError(std::string msg, int input_index = -1, int output_index = -1)
      : std::runtime_error(std::move(msg)), input_index(input_index), output_index(output_index) {}
  int input_index;
  int output_index;
};

class InferenceContext {
 public:
  virtual ~InferenceContext() = default;

  virtual const ir::Node& node() const = 0;
  virtual const OpSchema& schema() const = 0;
  // The opset version the node binds against (its domain's import).
  virtual int opset() const = 0;

  size_t num_inputs() const { return node().inputs.size(); }
  size_t num_outputs() const { return node().outputs.size(); }
  // An input is present when it exists and is not the empty name of an omitted optional input.
  bool has_input(size_t i) const { return i < num_inputs() && !node().inputs[i].empty(); }
  bool has_output(size_t i) const { return i < num_outputs() && !node().outputs[i].empty(); }

  // The input's type, or nullptr when it is absent or not known.
  virtual const ir::Type* input_type(size_t i) const = 0;
  // The input's value when it is a constant (initializer or Constant output); nullptr otherwise.
  virtual const ir::Tensor* input_constant(size_t i) const = 0;
  // The value of a small 1-D integer input when known element by element, possibly symbolically
  // (e.g. the output of Shape on [batch,3,224,224] is {batch,3,224,224}); nullptr when not known.
  // Lets Reshape/Expand/Slice after Shape->Gather->Concat chains keep their symbolic dimensions.
  virtual const std::vector<ir::Dim>* input_shape_value(size_t i) const = 0;

  virtual void set_output_type(size_t i, ir::Type t) = 0;
  virtual void set_output_shape_value(size_t i, std::vector<ir::Dim> value) = 0;
  // The type already inferred for output i (nullptr if none yet).
  virtual const ir::Type* output_type(size_t i) const = 0;

  // Infers a subgraph (If branch, Loop/Scan body) given the types of its formal inputs; returns the
  // types of its outputs (kNone where unknown). Diagnostics inside the subgraph are reported too.
  virtual std::vector<ir::Type> infer_subgraph(const ir::Graph& g,
                                               const std::vector<ir::Type>& input_types) = 0;

  // A fresh symbol for a dimension nothing can name ("unk__0", "unk__1"...).
  virtual ir::Dim new_symbol() = 0;

  // Reports a non-fatal finding, e.g. a dimension mismatch that only fails at run time for some inputs.
  virtual void warn(std::string msg, int input_index = -1) = 0;
  [[noreturn]] void fail(std::string msg) const { throw InferenceError(std::move(msg)); }
  [[noreturn]] void fail_input(size_t i, std::string msg) const {
    throw InferenceError(std::move(msg), static_cast<int>(i));
  }

  // Attributes, with the schema's default (or `fallback` when the schema has none) when not set.
  const ir::Attribute* attr(std::string_view name) const;  // set on the node, else schema default
  int64_t attr_int(std::string_view name, int64_t fallback = 0) const;
  float attr_float(std::string_view name, float fallback = 0) const;
  std::string attr_string(std::string_view name, std::string fallback = {}) const;
  std::vector<int64_t> attr_ints(std::string_view name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> attr_floats(std::string_view name, std::vector<float> fallback = {}) const;
  std::vector<std::string> attr_strings(std::string_view name) const;
  bool has_attr(std::string_view name) const { return node().attr(name) != nullptr; }

  // "node 'conv_1' (Conv)", for messages.
  std::string node_label() const;
};

}  // namespace tessera::ops
