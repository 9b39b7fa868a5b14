#include "ir/tensor.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace tessera::ir {
namespace {

class StringBuffer final : public Buffer {
 public:
  explicit StringBuffer(std::string s) : s_(std::move(s)) {}
  std::span<const std::byte> bytes() const override {
    return {reinterpret_cast<const std::byte*>(s_.data()), s_.size()};
  }

 private:
  std::string s_;
};

class ViewBuffer final : public Buffer {
 public:
  ViewBuffer(BufferPtr parent, size_t offset, size_t length)
      : parent_(std::move(parent)), offset_(offset), length_(length) {}
  std::span<const std::byte> bytes() const override { return parent_->bytes().subspan(offset_, length_); }

 private:
  BufferPtr parent_;
  size_t offset_, length_;
};

}  // namespace

BufferPtr make_buffer(std::string bytes) {
  return std::make_shared<StringBuffer>(std::move(bytes));
}

BufferPtr make_buffer(std::span<const std::byte> bytes) {
  return make_buffer(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

BufferPtr make_buffer_view(BufferPtr parent, size_t offset, size_t length) {
  return std::make_shared<ViewBuffer>(std::move(parent), offset, length);
}

std::optional<int64_t> Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return std::nullopt;
    n *= d;
  }
  return n;
}

std::optional<int64_t> Tensor::expected_bytes() const {
  auto n = numel();
  int bits = dtype_bits(dtype);
  if (!n || bits == 0) return std::nullopt;
  if (*n > std::numeric_limits<int64_t>::max() / bits) return std::nullopt;
  return (*n * bits + 7) / 8;
}

std::span<const std::byte> Tensor::bytes() const {
  if (!data) return {};
  return data->bytes();
}

bool Tensor::operator==(const Tensor& o) const {
  if (name != o.name || dtype != o.dtype || dims != o.dims || doc_string != o.doc_string) return false;
  if (metadata_props != o.metadata_props || strings != o.strings ||
      external.has_value() != o.external.has_value())
    return false;
  if (segment != o.segment) return false;
  if (external) {
    const ExternalData& a = *external;
    const ExternalData& b = *o.external;
    if (a.location != b.location || a.offset != b.offset || a.length != b.length) return false;
  }
  auto x = bytes();
  auto y = o.bytes();
  return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin());
}

}  // namespace tessera::ir
