// Everything that flows along a graph edge at run time: a tensor, a sequence, a map (ai.onnx.ml), or
// nothing (an empty optional). A value with an element is also what an optional holding it looks like:
// OptionalGetElement is then the identity, and only emptiness needs a representation of its own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/type.h"
#include "runtime/tensor.h"

namespace tessera::rt {

class Value;

struct Sequence {
  ir::Type elem_type;  // the element type, known even when the sequence is empty
  std::vector<Value> items;
};

struct Map {
  Tensor keys;    // 1-D: int64 or string
  Tensor values;  // 1-D, same length
};

class Value {
 public:
  enum class Kind { kNone, kTensor, kSequence, kMap };

  Value() = default;
  Value(Tensor t);  // NOLINT(google-explicit-constructor): tensors are by far the common case
  static Value sequence(Sequence s);
  static Value map(Map m);
  // An empty optional of the given type (the type an OptionalHasElement/ output file needs).
  static Value none(ir::Type type = {});

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_map() const { return kind_ == Kind::kMap; }

  // Each throws std::logic_error when the kind differs.
  const Tensor& tensor() const;
  Tensor& tensor();
  const Sequence& sequence() const;
  const Map& map() const;
  const ir::Type& none_type() const { return none_type_; }

  // "tensor(float)[1,3]", "seq(tensor(int64)) of 3", "optional(none)": for messages and summaries.
  std::string describe() const;

 private:
  Kind kind_ = Kind::kNone;
  Tensor tensor_;
  std::shared_ptr<const Sequence> seq_;  // shared: sequences are immutable once built
  std::shared_ptr<const Map> map_;
  ir::Type none_type_;
};

}  // namespace tessera::rt
