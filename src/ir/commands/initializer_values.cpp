#include "ir/commands/initializer_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace tessera::ir {

SetInitializerValues::SetInitializerValues(GraphPath path, std::string name, int64_t offset, Tensor values)
    : GraphCommand(std::move(path)), name_(std::move(name)), offset_(offset), values_(std::move(values)) {}

void SetInitializerValues::apply(Model& m) {
  Graph& g = graph(m);
  auto it = std::find_if(g.initializers.begin(), g.initializers.end(),
                         [&](const Tensor& t) { return t.name == name_; });
  if (it == g.initializers.end())
    throw CommandError(fmt::format("initializer '{}' does not exist in graph {}", name_, graph_label(g)));
  Tensor& t = *it;
  if (t.dtype != values_.dtype) {
    throw CommandError(fmt::format("initializer '{}' holds {}, the values given are {}", name_,
                                   dtype_name(t.dtype), dtype_name(values_.dtype)));
  }
  std::optional<int64_t> n = t.numel();
  std::optional<int64_t> k = values_.numel();
  if (!n || !k || offset_ < 0 || offset_ > *n || *k > *n - offset_) {
    throw CommandError(fmt::format("values [{}, {}) lie outside initializer '{}', which has {} elements",
                                   offset_, offset_ + k.value_or(0), name_, n.value_or(0)));
  }
  before_ = t;
  if (t.dtype == DataType::kString) {
    for (int64_t i = 0; i < *k; ++i) t.strings.at(static_cast<size_t>(offset_ + i)) = values_.strings[i];
  } else {
    std::span<const std::byte> old = t.bytes();
    std::span<const std::byte> put = values_.bytes();
    std::optional<int64_t> total = t.expected_bytes();
    // Sub-byte types have no whole element to write; a tensor whose bytes are not loaded (external
    // data of a model not read whole) has none to keep.
    if (!total || static_cast<int64_t>(old.size()) != *total || *total % *n != 0 ||
        static_cast<int64_t>(put.size()) != *k * (*total / *n)) {
      before_.reset();
      throw CommandError(
          fmt::format("initializer '{}' cannot be edited in part: its bytes are not held "
                      "as whole elements here (replace it whole)",
                      name_));
    }
    std::vector<std::byte> bytes(old.begin(), old.end());
    std::memcpy(bytes.data() + offset_ * (*total / *n), put.data(), put.size());
    t.data = make_buffer(std::span<const std::byte>(bytes));
    t.external.reset();  // the values are now the model's own
  }
  index_ = static_cast<size_t>(it - g.initializers.begin());
}

void SetInitializerValues::undo(Model& m) {
  graph(m).initializers[index_] = std::move(*before_);
  before_.reset();
}

std::string SetInitializerValues::description() const {
  return fmt::format("Edit initializer '{}'", name_);
}

}  // namespace tessera::ir
