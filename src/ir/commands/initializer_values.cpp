#include "ir/commands/initializer_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace tessera::ir {

namespace {

// Bytes the editor may write to: made by the first edit of a tensor (a copy of what it held) and
// written in place by later edits and their undos while the tensor alone holds it.
class EditableBuffer final : public Buffer {
 public:
  explicit EditableBuffer(std::span<const std::byte> bytes) : bytes_(bytes.begin(), bytes.end()) {}
  std::span<const std::byte> bytes() const override { return bytes_; }
  std::span<std::byte> writable() { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

// The tensor's bytes, writable: in place when the tensor's buffer is an EditableBuffer nobody else
// holds (no other tensor, model copy, undo step or view), else after one copy.
std::span<std::byte> writable_bytes(Tensor& t) {
  auto* own = dynamic_cast<const EditableBuffer*>(t.data.get());
  if (own && t.data.use_count() == 1) return const_cast<EditableBuffer*>(own)->writable();
  auto fresh = std::make_shared<EditableBuffer>(t.bytes());
  std::span<std::byte> out = fresh->writable();
  t.data = std::move(fresh);
  return out;
}

bool sub_byte(DataType t) {
  return dtype_bits(t) == 4;
}

// Element i's nibble of packed 4-bit data (low nibble first).
uint8_t nibble(std::span<const std::byte> b, int64_t i) {
  uint8_t byte = static_cast<uint8_t>(b[static_cast<size_t>(i / 2)]);
  return i % 2 ? byte >> 4 : byte & 0x0f;
}

void set_nibble(std::span<std::byte> b, int64_t i, uint8_t v) {
  auto& byte = reinterpret_cast<uint8_t&>(b[static_cast<size_t>(i / 2)]);
  byte = i % 2 ? static_cast<uint8_t>((byte & 0x0f) | (v << 4)) : static_cast<uint8_t>((byte & 0xf0) | v);
}

}  // namespace

void TensorPatch::apply(Tensor& t, int64_t offset, const Tensor& values, const std::string& label) {
  if (t.dtype != values.dtype) {
    throw CommandError(fmt::format("{} holds {}, the values given are {}", label, dtype_name(t.dtype),
                                   dtype_name(values.dtype)));
  }
  std::optional<int64_t> n = t.numel();
  std::optional<int64_t> k = values.numel();
  if (!n || !k || offset < 0 || offset > *n || *k > *n - offset) {
    throw CommandError(fmt::format("values [{}, {}) lie outside {}, which has {} elements", offset,
                                   offset + k.value_or(0), label, n.value_or(0)));
  }
  if (t.dtype == DataType::kString) {
    auto first = t.strings.begin() + offset;
    old_strings_.assign(first, first + *k);
    std::copy(values.strings.begin(), values.strings.end(), first);
    return;
  }
  std::optional<int64_t> total = t.expected_bytes();
  // A tensor whose bytes are not loaded (external data of a model not read whole) has none to write.
  if (!total || static_cast<int64_t>(t.bytes().size()) != *total) {
    throw CommandError(
        fmt::format("{} cannot be edited in part: its bytes are not loaded here (replace it whole)", label));
  }
  bool packed = sub_byte(t.dtype);
  int64_t size = packed ? 0 : *total / std::max<int64_t>(*n, 1);
  int64_t lo = packed ? offset / 2 : offset * size;
  int64_t hi = packed ? (offset + *k + 1) / 2 : (offset + *k) * size;
  std::span<std::byte> bytes = writable_bytes(t);
  old_at_ = lo;
  old_bytes_.assign(bytes.begin() + lo, bytes.begin() + hi);
  std::span<const std::byte> put = values.bytes();
  if (packed) {
    for (int64_t j = 0; j < *k; ++j) set_nibble(bytes, offset + j, nibble(put, j));
  } else {
    std::memcpy(bytes.data() + lo, put.data(), put.size());
  }
  external_ = std::move(t.external);
  t.external.reset();  // the values are now the model's own
}

void TensorPatch::undo(Tensor& t, int64_t offset) {
  if (t.dtype == DataType::kString) {
    std::copy(old_strings_.begin(), old_strings_.end(), t.strings.begin() + offset);
    old_strings_.clear();
    return;
  }
  std::span<std::byte> bytes = writable_bytes(t);
  std::memcpy(bytes.data() + old_at_, old_bytes_.data(), old_bytes_.size());
  old_bytes_.clear();
  old_bytes_.shrink_to_fit();
  t.external = std::move(external_);
  external_.reset();
}

SetInitializerValues::SetInitializerValues(GraphPath path, std::string name, int64_t offset, Tensor values)
    : GraphCommand(std::move(path)), name_(std::move(name)), offset_(offset), values_(std::move(values)) {}

Tensor& SetInitializerValues::find(Model& m) const {
  Graph& g = graph(m);
  auto it = std::find_if(g.initializers.begin(), g.initializers.end(),
                         [&](const Tensor& t) { return t.name == name_; });
  if (it == g.initializers.end())
    throw CommandError(fmt::format("initializer '{}' does not exist in graph {}", name_, graph_label(g)));
  return *it;
}

void SetInitializerValues::apply(Model& m) {
  patch_.apply(find(m), offset_, values_, fmt::format("initializer '{}'", name_));
}

void SetInitializerValues::undo(Model& m) {
  patch_.undo(find(m), offset_);
}

std::string SetInitializerValues::description() const {
  return fmt::format("Edit initializer '{}'", name_);
}

SetAttributeValues::SetAttributeValues(GraphPath path, NodeRef node, std::string attribute, int64_t offset,
                                       Tensor values)
    : NodeCommand(std::move(path), std::move(node)),
      attribute_(std::move(attribute)),
      offset_(offset),
      values_(std::move(values)) {}

Tensor& SetAttributeValues::find(Model& m) {
  Node& n = node(graph(m));
  Attribute* a = n.attr(attribute_);
  if (!a || a->type != AttrType::kTensor || a->tensors.empty()) {
    throw CommandError(fmt::format("node {} has no tensor attribute '{}'", label_, attribute_));
  }
  return a->tensors[0];
}

void SetAttributeValues::apply(Model& m) {
  Tensor& t = find(m);  // first: it names the node in label_
  patch_.apply(t, offset_, values_, fmt::format("attribute '{}' of node {}", attribute_, label_));
}

void SetAttributeValues::undo(Model& m) {
  patch_.undo(find(m), offset_);
}

std::string SetAttributeValues::description() const {
  return fmt::format("Edit attribute '{}' of node {}", attribute_, label_);
}

}  // namespace tessera::ir
