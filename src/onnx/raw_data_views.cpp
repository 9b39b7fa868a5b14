#include "onnx/raw_data_views.h"

#include <cstdint>

namespace tessera::onnx::detail {
namespace {

// Field numbers of the path to the weights.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kTensorRawData = 9;
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

struct Field {
  uint32_t number = 0;
  int wire = 0;
  const uint8_t* begin = nullptr;    // the tag
  const uint8_t* payload = nullptr;  // length-delimited content
  const uint8_t* end = nullptr;
};

class WireReader {
 public:
  WireReader(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}
  bool done() const { return p_ == end_; }

  // False on anything unusual, groups included (deprecated, and never used by ONNX).
  bool next(Field& f) {
    f.begin = p_;
    uint64_t tag = 0;
    if (!varint(tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX) return false;
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<int>(tag & 7);
    uint64_t v = 0;
    switch (f.wire) {
      case kVarint:
        if (!varint(v)) return false;
        break;
      case kFixed64:
        if (!skip(8)) return false;
        break;
      case kFixed32:
        if (!skip(4)) return false;
        break;
      case kLengthDelimited:
        if (!varint(v)) return false;
        f.payload = p_;
        if (!skip(v)) return false;
        break;
      default:
        return false;
    }
    f.end = p_;
    return true;
  }

 private:
  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool skip(uint64_t n) {
    if (n > static_cast<uint64_t>(end_ - p_)) return false;
    p_ += n;
    return true;
  }

  const uint8_t* p_;
  const uint8_t* end_;
};

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void put_raw(std::string& out, const uint8_t* b, const uint8_t* e) {
  out.append(reinterpret_cast<const char*>(b), e - b);
}

void put_message(std::string& out, uint32_t number, const std::string& body) {
  put_varint(out, (static_cast<uint64_t>(number) << 3) | kLengthDelimited);
  put_varint(out, body.size());
  out += body;
}

class Stripper {
 public:
  Stripper(const uint8_t* base, size_t min_size) : base_(base), min_size_(min_size) {}

  bool tensor(const Field& f, std::string& out, StrippedModel::Range& range) {
    WireReader r(f.payload, f.end);
    Field g;
    int raw_fields = 0;
    while (!r.done()) {
      if (!r.next(g)) return false;
      if (g.number == kTensorRawData) {
        // Repeated occurrences would merge ("last wins"): leave such oddities to protobuf.
        if (g.wire != kLengthDelimited || ++raw_fields > 1) return false;
        auto len = static_cast<size_t>(g.end - g.payload);
        if (len >= min_size_) {
          range = {static_cast<size_t>(g.payload - base_), len};
          continue;
        }
      }
      put_raw(out, g.begin, g.end);
    }
    return true;
  }

  bool graph(const Field& f, std::string& out, std::vector<StrippedModel::Range>& ranges) {
    WireReader r(f.payload, f.end);
    Field g;
    while (!r.done()) {
      if (!r.next(g)) return false;
      if (g.number != kGraphInitializer) {
        put_raw(out, g.begin, g.end);
        continue;
      }
      if (g.wire != kLengthDelimited) return false;
      std::string body;
      StrippedModel::Range range;
      if (!tensor(g, body, range)) return false;
      ranges.push_back(range);
      put_message(out, kGraphInitializer, body);
    }
    return true;
  }

 private:
  const uint8_t* base_;
  size_t min_size_;
};

}  // namespace

std::optional<StrippedModel> strip_initializer_raw_data(std::span<const std::byte> model, size_t min_size) {
  const auto* base = reinterpret_cast<const uint8_t*>(model.data());
  WireReader r(base, base + model.size());
  Stripper stripper(base, min_size);
  StrippedModel out;
  Field f;
  int graphs = 0;
  while (!r.done()) {
    if (!r.next(f)) return std::nullopt;
    if (f.number != kModelGraph) {
      put_raw(out.bytes, f.begin, f.end);
      continue;
    }
    // A second graph field would be merged into the first by protobuf; not worth imitating.
    if (f.wire != kLengthDelimited || ++graphs > 1) return std::nullopt;
    std::string body;
    if (!stripper.graph(f, body, out.initializer_raw)) return std::nullopt;
    put_message(out.bytes, kModelGraph, body);
  }
  size_t stripped = 0;
  for (const auto& r1 : out.initializer_raw) stripped += r1.length;
  if (stripped == 0) return std::nullopt;
  return out;
}

}  // namespace tessera::onnx::detail
