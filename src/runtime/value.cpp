#include "runtime/value.h"

#include <fmt/format.h>

#include <stdexcept>

namespace tessera::rt {

Value::Value(Tensor t) : kind_(Kind::kTensor), tensor_(std::move(t)) {}

Value Value::sequence(Sequence s) {
  Value v;
  v.kind_ = Kind::kSequence;
  v.seq_ = std::make_shared<const Sequence>(std::move(s));
  return v;
}

Value Value::map(Map m) {
  Value v;
  v.kind_ = Kind::kMap;
  v.map_ = std::make_shared<const Map>(std::move(m));
  return v;
}

Value Value::none(ir::Type type) {
  Value v;
  v.none_type_ = std::move(type);
  return v;
}

const Tensor& Value::tensor() const {
  if (kind_ != Kind::kTensor) throw std::logic_error("value is " + describe() + ", not a tensor");
  return tensor_;
}
Tensor& Value::tensor() {
  if (kind_ != Kind::kTensor) throw std::logic_error("value is " + describe() + ", not a tensor");
  return tensor_;
}
const Sequence& Value::sequence() const {
  if (kind_ != Kind::kSequence) throw std::logic_error("value is " + describe() + ", not a sequence");
  return *seq_;
}
const Map& Value::map() const {
  if (kind_ != Kind::kMap) throw std::logic_error("value is " + describe() + ", not a map");
  return *map_;
}

std::string Value::describe() const {
  switch (kind_) {
    case Kind::kNone:
      return "an empty optional";
    case Kind::kTensor:
      return fmt::format("tensor({}){}", ir::dtype_name(tensor_.dtype()), shape_str(tensor_.shape()));
    case Kind::kSequence:
      return fmt::format("a sequence of {}", seq_->items.size());
    case Kind::kMap:
      return fmt::format("a map of {}", map_->keys.numel());
  }
  return "?";
}

}  // namespace tessera::rt
