#include "ir/type.h"

#include <fmt/format.h>

#include <limits>

namespace tessera::ir {

std::string Dim::to_string() const {
  if (is_static()) return std::to_string(value);
  if (is_symbolic()) return param;
  return "?";
}

std::string shape_to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += s[i].to_string();
  }
  return out + "]";
}

std::optional<int64_t> shape_numel(const Shape& s) {
  int64_t n = 1;
  for (const Dim& d : s) {
    if (!d.is_static()) return std::nullopt;
    if (d.value != 0 && n > std::numeric_limits<int64_t>::max() / d.value) return std::nullopt;
    n *= d.value;
  }
  return n;
}

bool shape_is_static(const Shape& s) {
  for (const Dim& d : s) {
    if (!d.is_static()) return false;
  }
  return true;
}

Type Type::tensor(DataType elem, std::optional<Shape> shape) {
  Type t;
  t.kind = Kind::kTensor;
  t.elem = elem;
  t.shape = std::move(shape);
  return t;
}

Type Type::sparse_tensor(DataType elem, std::optional<Shape> shape) {
  Type t = tensor(elem, std::move(shape));
  t.kind = Kind::kSparseTensor;
  return t;
}

Type Type::sequence(Type elem) {
  Type t;
  t.kind = Kind::kSequence;
  t.inner = std::make_shared<const Type>(std::move(elem));
  return t;
}

Type Type::optional(Type elem) {
  Type t;
  t.kind = Kind::kOptional;
  t.inner = std::make_shared<const Type>(std::move(elem));
  return t;
}

Type Type::map(DataType key, Type value) {
  Type t;
  t.kind = Kind::kMap;
  t.elem = key;
  t.inner = std::make_shared<const Type>(std::move(value));
  return t;
}

bool Type::operator==(const Type& o) const {
  if (kind != o.kind || elem != o.elem || shape != o.shape) return false;
  if (opaque_domain != o.opaque_domain || opaque_name != o.opaque_name) return false;
  if (denotation != o.denotation) return false;
  if (!inner || !o.inner) return inner == o.inner;
  return *inner == *o.inner;
}

std::string Type::type_string() const {
  auto inner_str = [&] { return inner ? inner->type_string() : std::string("?"); };
  switch (kind) {
    case Kind::kNone:
      return "none";
    case Kind::kTensor:
      return fmt::format("tensor({})", dtype_name(elem));
    case Kind::kSparseTensor:
      return fmt::format("sparse_tensor({})", dtype_name(elem));
    case Kind::kSequence:
      return fmt::format("seq({})", inner_str());
    case Kind::kOptional:
      return fmt::format("optional({})", inner_str());
    case Kind::kMap:
      return fmt::format("map({},{})", dtype_name(elem), inner_str());
    case Kind::kOpaque:
      return fmt::format("opaque({},{})", opaque_domain, opaque_name);
  }
  return "none";
}

std::string Type::to_string() const {
  std::string s = type_string();
  if ((kind == Kind::kTensor || kind == Kind::kSparseTensor) && shape) s += shape_to_string(*shape);
  return s;
}

namespace {

// Recursive-descent parser over "tensor(float)", "seq(tensor(int64))", "map(string,tensor(float))".
class TypeStringParser {
 public:
  explicit TypeStringParser(std::string_view s) : s_(s) {}

  std::optional<Type> parse_all() {
    auto t = parse();
    if (!t || pos_ != s_.size()) return std::nullopt;
    return t;
  }

 private:
  std::string_view word() {
    size_t start = pos_;
    while (pos_ < s_.size() && (isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  bool eat(char c) {
    if (pos_ >= s_.size() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  std::optional<DataType> elem() {
    auto w = word();
    return dtype_from_name(w);
  }

  std::optional<Type> parse() {
    auto head = word();
    if (!eat('(')) return std::nullopt;
    std::optional<Type> result;
    if (head == "tensor" || head == "sparse_tensor") {
      auto e = elem();
      if (!e) return std::nullopt;
      result = head == "tensor" ? Type::tensor(*e) : Type::sparse_tensor(*e);
    } else if (head == "seq" || head == "optional") {
      auto in = parse();
      if (!in) return std::nullopt;
      result = head == "seq" ? Type::sequence(*in) : Type::optional(*in);
    } else if (head == "map") {
      auto k = elem();
      if (!k || !eat(',')) return std::nullopt;
      auto v = parse();
      if (!v) return std::nullopt;
      result = Type::map(*k, *v);
    } else {
      return std::nullopt;
    }
    if (!eat(')')) return std::nullopt;
    return result;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<Type> parse_type_string(std::string_view s) {
  return TypeStringParser(s).parse_all();
}

}  // namespace tessera::ir
