// Type-constraint binding and the merge of inferred with declared types.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "check/graph_checker.h"

namespace tessera::check {

using ir::Type;

namespace {

// A type is checkable against a constraint list only when every element type in it is known.
bool fully_known(const Type& t) {
  switch (t.kind) {
    case Type::Kind::kNone:
      return false;
    case Type::Kind::kTensor:
    case Type::Kind::kSparseTensor:
      return t.elem != ir::DataType::kUndefined;
    case Type::Kind::kSequence:
    case Type::Kind::kOptional:
      return t.inner && fully_known(*t.inner);
    case Type::Kind::kMap:
      return t.elem != ir::DataType::kUndefined && t.inner && fully_known(*t.inner);
    case Type::Kind::kOpaque:
      return true;
  }
  return false;
}

// Same type apart from shapes (and denotations): what type-parameter binding compares.
bool same_type(const Type& a, const Type& b) {
  if (a.kind != b.kind || a.elem != b.elem) return false;
  if (a.kind == Type::Kind::kOpaque)
    return a.opaque_domain == b.opaque_domain && a.opaque_name == b.opaque_name;
  if (!a.inner || !b.inner) return a.inner == b.inner;
  return same_type(*a.inner, *b.inner);
}

}  // namespace

const Type* TypeBinding::find(std::string_view param) const {
  for (const Bound& b : bound) {
    if (b.param == param) return &b.type;
  }
  return nullptr;
}

bool type_allowed(const ops::OpSchema& schema, const std::string& formal, const Type& t) {
  if (!fully_known(t)) return true;
  const ops::TypeConstraint* c = schema.find_type_param(formal);
  if (c && t.kind == Type::Kind::kTensor) return (c->tensor_mask >> static_cast<int>(t.elem)) & 1;
  std::string s = t.type_string();
  if (c) return std::find(c->allowed.begin(), c->allowed.end(), s) != c->allowed.end();
  return s == formal;  // a literal type such as "tensor(int64)"
}

void bind_type_params(const ops::OpSchema& schema, const std::vector<const Type*>& input_types,
                      std::vector<std::pair<int, std::string>>& errors, TypeBinding& b) {
  b.bound.clear();
  for (size_t i = 0; i < input_types.size(); ++i) {
    const Type* t = input_types[i];
    const ops::FormalParam* p = schema.input_param(i);
    if (!t || !p || !fully_known(*t)) continue;
    if (!type_allowed(schema, p->type, *t)) {
      const ops::TypeConstraint* c = schema.find_type_param(p->type);
      std::string allowed = c ? fmt::format("{} ({})", p->type, fmt::join(c->allowed, ", ")) : p->type;
      errors.emplace_back(static_cast<int>(i),
                          fmt::format("input {} ('{}') has type {}, which {} does not accept; allowed: {}", i,
                                      p->name, t->type_string(), schema.name(), allowed));
      continue;
    }
    if (!schema.find_type_param(p->type)) continue;
    // Heterogeneous variadic inputs each have their own type.
    bool shared = p->option != ops::FormalParam::Option::kVariadic || p->homogeneous;
    const Type* prev = b.find(p->type);
    if (!prev) {
      // The binding is the type without its shape; build it without copying the shape.
      Type bare;
      bare.kind = t->kind;
      bare.elem = t->elem;
      bare.inner = t->inner;
      bare.opaque_domain = t->opaque_domain;
      bare.opaque_name = t->opaque_name;
      b.bound.push_back({p->type, std::move(bare), i});
      continue;
    }
    if (shared && !same_type(*prev, *t)) {
      size_t j = 0;
      for (const auto& bound : b.bound) {
        if (bound.param == p->type) j = bound.input;
      }
      const ops::FormalParam* pj = schema.input_param(j);
      errors.emplace_back(
          static_cast<int>(i),
          fmt::format("type mismatch: input {} ('{}') is {} but input {} ('{}') is {}; both are "
                      "type {} and must agree",
                      i, p->name, t->type_string(), j, pj ? pj->name : "?", prev->type_string(), p->type));
    }
  }
}

namespace {

ir::Dim merge_dim(const ir::Dim& inferred, const ir::Dim& declared) {
  if (declared.is_static()) return declared;
  if (inferred.is_static()) return inferred;
  // A name the model's author wrote beats one the checker made up.
  if (declared.is_symbolic()) return declared;
  return inferred;
}

}  // namespace

Type merge_types(const Type& inferred, const Type& declared, std::string* conflict) {
  if (declared.is_none()) return inferred;
  if (inferred.is_none()) return declared;
  auto fail = [&](std::string why) {
    if (conflict) *conflict = std::move(why);
    return inferred;
  };
  if (inferred.kind != declared.kind) {
    return fail(fmt::format("inferred as {} but declared as {}", inferred.to_string(), declared.to_string()));
  }
  Type out = inferred;
  if (inferred.elem != declared.elem) {
    if (inferred.elem != ir::DataType::kUndefined && declared.elem != ir::DataType::kUndefined) {
      return fail(
          fmt::format("inferred as {} but declared as {}", inferred.to_string(), declared.to_string()));
    }
    if (out.elem == ir::DataType::kUndefined) out.elem = declared.elem;
  }
  if (inferred.shape && declared.shape) {
    const ir::Shape& a = *inferred.shape;
    const ir::Shape& b = *declared.shape;
    if (a.size() != b.size()) {
      return fail(fmt::format("inferred as {} but declared as {} (rank {} vs {})", inferred.to_string(),
                              declared.to_string(), a.size(), b.size()));
    }
    for (size_t k = 0; k < a.size(); ++k) {
      if (a[k].is_static() && b[k].is_static() && a[k].value != b[k].value) {
        return fail(fmt::format("inferred as {} but declared as {} (dimension {} differs)",
                                inferred.to_string(), declared.to_string(), k));
      }
      (*out.shape)[k] = merge_dim(a[k], b[k]);
    }
  } else if (declared.shape) {
    out.shape = declared.shape;
  }
  if (inferred.inner && declared.inner) {
    std::string inner_conflict;
    Type merged = merge_types(*inferred.inner, *declared.inner, &inner_conflict);
    if (!inner_conflict.empty()) return fail(std::move(inner_conflict));
    out.inner = std::make_shared<const Type>(std::move(merged));
  } else if (declared.inner) {
    out.inner = declared.inner;
  }
  return out;
}

}  // namespace tessera::check
