// Value types: tensors with static or symbolic shapes, and the container types ONNX allows
// (sequence, map, optional, sparse tensor, opaque).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace tessera::ir {

// One dimension: a known size, a symbolic name ("batch", "seq") or unknown.
struct Dim {
  int64_t value = -1;  // >= 0 when the size is known
  std::string param;   // the symbol when the size is not known; empty when fully unknown
  std::string denotation;

  static Dim of(int64_t v) { return Dim{v, {}, {}}; }
  static Dim symbol(std::string name) { return Dim{-1, std::move(name), {}}; }
  static Dim unknown() { return Dim{}; }

  bool is_static() const { return value >= 0; }
  bool is_symbolic() const { return value < 0 && !param.empty(); }
  bool is_unknown() const { return value < 0 && param.empty(); }

  // Same size or same symbol; denotations are annotations and do not take part.
  bool operator==(const Dim& o) const { return value == o.value && param == o.param; }
  std::string to_string() const;  // "3", "batch" or "?"
};

using Shape = std::vector<Dim>;

std::string shape_to_string(const Shape& s);  // "[1,3,'batch',?]" style: "[1,3,batch,?]"
// Product of the dimensions when all are static and it fits in int64; nullopt otherwise.
std::optional<int64_t> shape_numel(const Shape& s);
bool shape_is_static(const Shape& s);

struct Type;
using TypePtr = std::shared_ptr<const Type>;  // element types are immutable, so sharing is safe

struct Type {
  enum class Kind { kNone, kTensor, kSparseTensor, kSequence, kMap, kOptional, kOpaque };

  Kind kind = Kind::kNone;
  DataType elem = DataType::kUndefined;  // tensor / sparse tensor element; map key type
  std::optional<Shape> shape;            // tensor / sparse tensor; absent when the rank is unknown
  TypePtr inner;                         // sequence / optional element, map value
  std::string opaque_domain, opaque_name;
  std::string denotation;

  static Type tensor(DataType elem, std::optional<Shape> shape = std::nullopt);
  static Type sparse_tensor(DataType elem, std::optional<Shape> shape = std::nullopt);
  static Type sequence(Type elem);
  static Type optional(Type elem);
  static Type map(DataType key, Type value);

  bool is_none() const { return kind == Kind::kNone; }
  bool is_tensor() const { return kind == Kind::kTensor; }
  bool has_shape() const { return shape.has_value(); }
  size_t rank() const { return shape ? shape->size() : 0; }

  bool operator==(const Type& o) const;
  bool operator!=(const Type& o) const { return !(*this == o); }

  // "tensor(float)", "seq(tensor(int64))", "map(string,tensor(float))", "optional(seq(tensor(float)))":
  // the spelling of ONNX type constraints, without the shape.
  std::string type_string() const;
  // type_string() plus the shape where known: "tensor(float)[1,3,batch]".
  std::string to_string() const;
};

// Parses a type string as written in type constraints; nullopt when it is not one.
std::optional<Type> parse_type_string(std::string_view s);

}  // namespace tessera::ir
