#include "io/npy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <system_error>

#include "util/atomic_file.h"
#include "util/unique_fd.h"

namespace tessera::io {
namespace {

using ir::DataType;

constexpr std::array<unsigned char, 6> kMagic = {0x93, 'N', 'U', 'M', 'P', 'Y'};

struct DescrName {
  const char* descr;
  DataType dtype;
};

// NumPy's spellings of the element types ONNX shares with it. '|' marks one-byte types (no byte order).
constexpr std::array<DescrName, 12> kDescrs = {{
    {"<f4", DataType::kFloat},
    {"<f8", DataType::kDouble},
    {"<f2", DataType::kFloat16},
    {"<i8", DataType::kInt64},
    {"<i4", DataType::kInt32},
    {"<i2", DataType::kInt16},
    {"|i1", DataType::kInt8},
    {"|u1", DataType::kUint8},
    {"<u2", DataType::kUint16},
    {"<u4", DataType::kUint32},
    {"<u8", DataType::kUint64},
    {"|b1", DataType::kBool},
}};

std::optional<DataType> dtype_of(std::string_view descr) {
  for (const auto& d : kDescrs) {
    if (descr == d.descr) return d.dtype;
  }
  return std::nullopt;
}

const char* descr_of(DataType t) {
  for (const auto& d : kDescrs) {
    if (d.dtype == t) return d.descr;
  }
  return nullptr;
}

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
// A small scanner over exactly that grammar (keys, quoted strings, True/False, tuples of integers).
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  void parse(std::string& descr, bool& fortran, std::vector<int64_t>& shape) {
    expect('{');
    bool have_descr = false, have_order = false, have_shape = false;
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = quoted();
      expect(':');
      if (key == "descr") {
        descr = quoted();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran = boolean();
        have_order = true;
      } else if (key == "shape") {
        shape = tuple();
        have_shape = true;
      } else {
        throw NpyError(fmt::format("unknown header key '{}'", key));
      }
      skip_space();
      if (peek() == ',') ++pos_;
    }
    if (!have_descr || !have_order || !have_shape) {
      throw NpyError("the header lacks one of 'descr', 'fortran_order' and 'shape'");
    }
  }

 private:
  char peek() {
    if (pos_ >= s_.size()) throw NpyError("the header ends too early");
    return s_[pos_];
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n')) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) throw NpyError(fmt::format("header: expected '{}' at offset {}", c, pos_));
    ++pos_;
  }
  std::string quoted() {
    skip_space();
    char q = peek();
    if (q != '\'' && q != '"')
      throw NpyError(fmt::format("header: expected a quoted string at offset {}", pos_));
    size_t end = s_.find(q, ++pos_);
    if (end == std::string_view::npos) throw NpyError("header: unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_space();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (s_.substr(pos_).starts_with(word)) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    throw NpyError("header: 'fortran_order' is neither True nor False");
  }
  std::vector<int64_t> tuple() {
    expect('(');
    std::vector<int64_t> dims;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      int64_t v = 0;
      size_t start = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10)
          throw NpyError("header: a dimension overflows int64");
        v = v * 10 + (s_[pos_++] - '0');
      }
      if (pos_ == start) throw NpyError(fmt::format("header: expected a dimension at offset {}", pos_));
      dims.push_back(v);
      skip_space();
      if (peek() == ',') ++pos_;
    }
    ++pos_;
    return dims;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

uint32_t read_le(std::span<const std::byte> b, size_t at, size_t width) {
  uint32_t v = 0;
  for (size_t k = 0; k < width; ++k) v |= static_cast<uint32_t>(b[at + k]) << (8 * k);
  return v;
}

}  // namespace

ir::Tensor parse_npy(std::span<const std::byte> bytes, std::string name) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
    throw NpyError("not a .npy file (no \\x93NUMPY magic)");
  }
  auto major = static_cast<unsigned>(bytes[6]);
  if (major < 1 || major > 3) throw NpyError(fmt::format("unsupported .npy version {}", major));
  // Version 1 stores the header length in 2 bytes, versions 2 and 3 in 4.
  size_t len_width = major == 1 ? 2 : 4;
  size_t header_at = 8 + len_width;
  if (bytes.size() < header_at) throw NpyError("the file ends inside its header length");
  size_t header_len = read_le(bytes, 8, len_width);
  if (header_len > bytes.size() - header_at) throw NpyError("the file ends inside its header");
  std::string_view header(reinterpret_cast<const char*>(bytes.data() + header_at), header_len);

  std::string descr;
  bool fortran = false;
  ir::Tensor t;
  t.name = std::move(name);
  HeaderParser(header).parse(descr, fortran, t.dims);
  if (fortran) throw NpyError("Fortran-order arrays are not supported; save with numpy.ascontiguousarray");
  auto dtype = dtype_of(descr);
  if (!dtype)
    throw NpyError(fmt::format("unsupported dtype '{}' (little-endian numeric or bool only)", descr));
  t.dtype = *dtype;
  auto need = t.expected_bytes();
  if (!need) throw NpyError(fmt::format("shape ({}) overflows int64", fmt::join(t.dims, ", ")));
  size_t data_at = header_at + header_len;
  if (static_cast<uint64_t>(*need) != bytes.size() - data_at) {
    throw NpyError(fmt::format("shape ({}) of {} needs {} bytes of data but the file holds {}",
                               fmt::join(t.dims, ", "), descr, *need, bytes.size() - data_at));
  }
  t.data = ir::make_buffer(bytes.subspan(data_at));
  return t;
}

ir::Tensor read_npy(const std::filesystem::path& file, std::string name) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) throw NpyError(fmt::format("cannot open {}", file.string()));
  std::string bytes(static_cast<size_t>(in.tellg()), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    throw NpyError(fmt::format("cannot read {}", file.string()));
  }
  try {
    return parse_npy(std::as_bytes(std::span(bytes)), std::move(name));
  } catch (const NpyError& e) {
    throw NpyError(fmt::format("{}: {}", file.string(), e.what()));
  }
}

std::string to_npy(const ir::Tensor& t) {
  const char* descr = descr_of(t.dtype);
  if (!descr) {
    throw NpyError(
        fmt::format("tensor '{}' of type {} cannot be written as .npy", t.name, ir::dtype_name(t.dtype)));
  }
  // Python tuple syntax: (), (3,), (2, 3).
  std::string shape = fmt::format("{}", fmt::join(t.dims, ", "));
  if (t.dims.size() == 1) shape += ",";
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // Pad with spaces and a newline so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 0xffff) throw NpyError("the .npy header would exceed 64 KiB");
  std::string out(reinterpret_cast<const char*>(kMagic.data()), kMagic.size());
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  auto data = t.bytes();
  if (auto need = t.expected_bytes(); !need || static_cast<size_t>(*need) != data.size()) {
    throw NpyError(fmt::format("tensor '{}' holds {} bytes, not what its shape needs", t.name, data.size()));
  }
  out.append(reinterpret_cast<const char*>(data.data()), data.size());
  return out;
}

void write_npy(const ir::Tensor& t, const std::filesystem::path& file) {
  std::string bytes = to_npy(t);
  std::filesystem::path dir = file.parent_path().empty() ? "." : file.parent_path();
  util::UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) {
    throw NpyError(
        fmt::format("cannot open folder {}: {}", dir.string(), std::generic_category().message(errno)));
  }
  try {
    util::AtomicFile f(std::move(dir_fd), file.filename().string());
    f.write(std::as_bytes(std::span(bytes)));
    f.sync();
    f.commit();
  } catch (const std::system_error& e) {
    throw NpyError(fmt::format("cannot write {}: {}", file.string(), e.what()));
  }
}

}  // namespace tessera::io
