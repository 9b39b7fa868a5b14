#include "ir/commands/reshape_tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "ir/commands/command_error.h"
#include "ir/commands/ir_json.h"

namespace tessera::ir {

namespace {

std::string shape_text(const std::vector<int64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

// The byte a grown tensor is filled with: zero is code 0 in every type but float8e8m0, which has no zero
// and takes 1.0 (code 127), the neutral scale.
char fill_byte(DataType t) {
  return t == DataType::kFloat8E8M0 ? 0x7F : 0;
}

// The first `keep` elements of `t`'s bytes in a buffer of `bytes`, the rest filled.
BufferPtr kept_bytes(const Tensor& t, int64_t keep, int64_t bytes) {
  std::span<const std::byte> old = t.bytes();
  bool packed = dtype_bits(t.dtype) == 4;
  int64_t size = packed ? 0 : dtype_bits(t.dtype) / 8;
  int64_t copy = packed ? (keep + 1) / 2 : keep * size;
  std::string out(static_cast<size_t>(bytes), fill_byte(t.dtype));
  if (copy > 0) std::memcpy(out.data(), old.data(), static_cast<size_t>(copy));
  // A packed tensor cut to an odd count: the high nibble of its last byte is padding, zero.
  if (packed && keep % 2) out[static_cast<size_t>(copy - 1)] &= 0x0f;
  return make_buffer(std::move(out));
}

}  // namespace

Tensor reshaped(const Tensor& t, const std::vector<int64_t>& dims, const std::string& label) {
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] < 0) {
      throw CommandError(fmt::format("{}: dimension {} of the new shape {} is {}; dimensions are 0 or more",
                                     label, k, shape_text(dims), dims[k]));
    }
  }
  Tensor out = t;
  out.dims = dims;
  std::optional<int64_t> n = out.numel();
  std::optional<int64_t> bytes = out.dtype == DataType::kString ? n : out.expected_bytes();
  if (!n || !bytes) {
    throw CommandError(fmt::format("{}: the new shape {} has more elements than a tensor can count", label,
                                   shape_text(dims)));
  }
  std::optional<int64_t> was = t.numel();
  if (!was) throw CommandError(fmt::format("{}: its shape {} overflows", label, shape_text(t.dims)));
  if (*n == *was) return out;  // a reshape: the same values, the same bytes
  if (*bytes > kMaxReshapedBytes) {
    throw CommandError(
        fmt::format("{}: the new shape {} would take {} bytes; the studio holds at most {} a tensor", label,
                    shape_text(dims), *bytes, kMaxReshapedBytes));
  }
  int64_t keep = std::min(*n, *was);
  if (t.dtype == DataType::kString) {
    out.strings.resize(static_cast<size_t>(*n));
    return out;
  }
  std::optional<int64_t> had = t.expected_bytes();
  if (!had || static_cast<int64_t>(t.bytes().size()) != *had) {
    throw CommandError(fmt::format(
        "{}: its bytes are not loaded here, so it can be reshaped to {} elements but not grown or cut", label,
        *was));
  }
  out.data = kept_bytes(t, keep, *bytes);
  out.external.reset();  // the values are now the model's own
  return out;
}

ReshapeInitializer::ReshapeInitializer(GraphPath path, std::string name, std::vector<int64_t> dims)
    : GraphCommand(std::move(path)), name_(std::move(name)), dims_(std::move(dims)) {}

void ReshapeInitializer::apply(Model& m) {
  Graph& g = graph(m);
  auto it = std::find_if(g.initializers.begin(), g.initializers.end(),
                         [&](const Tensor& t) { return t.name == name_; });
  if (it == g.initializers.end())
    throw CommandError(fmt::format("initializer '{}' does not exist in graph {}", name_, graph_label(g)));
  Tensor next = reshaped(*it, dims_, fmt::format("initializer '{}'", name_));
  index_ = static_cast<size_t>(it - g.initializers.begin());
  old_ = std::exchange(*it, std::move(next));
}

void ReshapeInitializer::undo(Model& m) {
  graph(m).initializers[index_] = std::move(old_);
  old_ = Tensor{};
}

std::string ReshapeInitializer::description() const {
  return fmt::format("Reshape initializer '{}' to {}", name_, shape_text(dims_));
}

nlohmann::json ReshapeInitializer::to_json() const {
  nlohmann::json j{{"type", "reshape_initializer"}, {"name", name_}, {"shape", dims_}};
  if (path_ != GraphPath::main_graph()) j["path"] = graph_path_to_json(path_);
  return j;
}

void ReshapeInitializer::changes(const Model&, bool, std::vector<Change>& out) const {
  out.push_back(Change{Change::Kind::kInitializersChanged, path_});
}

ReshapeAttribute::ReshapeAttribute(GraphPath path, NodeRef node, std::string attribute,
                                   std::vector<int64_t> dims)
    : NodeCommand(std::move(path), std::move(node)),
      attribute_(std::move(attribute)),
      dims_(std::move(dims)) {}

Tensor& ReshapeAttribute::find(Model& m) {
  Node& n = node(graph(m));
  Attribute* a = n.attr(attribute_);
  if (!a || a->type != AttrType::kTensor || a->tensors.empty())
    throw CommandError(fmt::format("node {} has no tensor attribute '{}'", label_, attribute_));
  return a->tensors[0];
}

void ReshapeAttribute::apply(Model& m) {
  Tensor& t = find(m);  // first: it names the node in label_
  Tensor next = reshaped(t, dims_, fmt::format("attribute '{}' of node {}", attribute_, label_));
  old_ = std::exchange(t, std::move(next));
}

void ReshapeAttribute::undo(Model& m) {
  find(m) = std::move(old_);
  old_ = Tensor{};
}

std::string ReshapeAttribute::description() const {
  return fmt::format("Reshape attribute '{}' of node {} to {}", attribute_, label_, shape_text(dims_));
}

nlohmann::json ReshapeAttribute::to_json() const {
  nlohmann::json j{{"type", "reshape_attribute"},
                   {"node", node_ref_to_json(ref_)},
                   {"name", attribute_},
                   {"shape", dims_}};
  if (path_ != GraphPath::main_graph()) j["path"] = graph_path_to_json(path_);
  return j;
}

void ReshapeAttribute::changes(const Model&, bool, std::vector<Change>& out) const {
  out.push_back(Change{Change::Kind::kNodeChanged, path_, ref_.id});
}

}  // namespace tessera::ir
