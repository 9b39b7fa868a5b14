#include "onnx/external_data.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <charconv>
#include <limits>
#include <system_error>

#include "onnx/onnx_io.h"
#include "util/mapped_file.h"
#include "util/safe_open.h"

namespace tessera::onnx::detail {
namespace {

// A whole mapped file as an ir::Buffer; tensors hold views of it, which keep it mapped.
class MappingBuffer final : public ir::Buffer {
 public:
  explicit MappingBuffer(std::shared_ptr<const util::MappedFile> m) : m_(std::move(m)) {}
  std::span<const std::byte> bytes() const override { return m_->bytes(); }

 private:
  std::shared_ptr<const util::MappedFile> m_;
};

int64_t parse_int64(const std::string& label, std::string_view key, const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range) {
    throw LoadError(fmt::format("{}: {} '{}' overflows int64", label, key, text));
  }
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    throw LoadError(fmt::format("{}: {} '{}' is not an integer", label, key, text));
  }
  if (v < 0) throw LoadError(fmt::format("{}: {} {} is negative", label, key, v));
  return v;
}

std::string joined(const util::RelativePath& p) {
  std::string s;
  for (const std::string& part : p.parts) s += (s.empty() ? "" : "/") + part;
  return s;
}

}  // namespace

ir::BufferPtr mapping_buffer(std::shared_ptr<const util::MappedFile> m) {
  return std::make_shared<MappingBuffer>(std::move(m));
}

ir::ExternalData parse_external_data(const onnx_pb::TensorProto& p, const std::string& label) {
  ir::ExternalData ext;
  const std::string* offset = nullptr;
  const std::string* length = nullptr;
  bool has_location = false, has_checksum = false;
  auto once = [&](bool seen, const std::string& key) {
    if (seen) throw LoadError(fmt::format("{}: external_data key '{}' appears twice", label, key));
  };
  for (const onnx_pb::StringStringEntryProto& e : p.external_data()) {
    const std::string& key = e.key();
    if (key == "location") {
      once(has_location, key);
      has_location = true;
      ext.location = e.value();
    } else if (key == "offset") {
      once(offset != nullptr, key);
      offset = &e.value();
    } else if (key == "length") {
      once(length != nullptr, key);
      length = &e.value();
    } else if (key == "checksum") {
      once(has_checksum, key);
      has_checksum = true;
      ext.checksum = e.value();
    } else {
      throw LoadError(fmt::format("{}: unknown external_data key '{}'", label, key));
    }
  }
  if (!has_location) throw LoadError(fmt::format("{}: external_data has no location", label));
  util::RelativePath path = util::split_relative_path(ext.location);
  if (!path.problem.empty()) {
    throw LoadError(fmt::format("{}: external data location '{}' {}", label, ext.location, path.problem));
  }
  // The numbers are read once the location is known, so that their messages can name it.
  std::string where = fmt::format("{}: external data in '{}'", label, ext.location);
  if (offset) ext.offset = parse_int64(where, "offset", *offset);
  if (length) ext.length = parse_int64(where, "length", *length);
  return ext;
}

ExternalFiles::File& ExternalFiles::open(const std::string& label, const std::string& location) {
  util::RelativePath path = util::split_relative_path(location);
  if (!path.problem.empty()) {
    throw LoadError(fmt::format("{}: external data location '{}' {}", label, location, path.problem));
  }
  std::string key = joined(path);
  if (auto it = files_.find(key); it != files_.end()) return it->second;

  auto refuse = [&](const std::string& why) {
    return LoadError(fmt::format("{}: external data location '{}': {}", label, location, why));
  };
  try {
    if (!dir_) dir_ = util::open_dir(base_dir_.string());
    util::UniqueFd fd = util::open_file_beneath(dir_.get(), path);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) throw std::system_error(errno, std::generic_category(), "fstat");
    if (!S_ISREG(st.st_mode)) throw refuse("not a regular file");
    // A hard link is a second name for a file that may live anywhere on the file system, so the
    // folder check above would prove nothing about it.
    if (st.st_nlink > 1) throw refuse(fmt::format("the file has {} hard links; refusing it", st.st_nlink));
    File f;
    f.size = st.st_size;
    f.fd = std::move(fd);
    return files_.emplace(key, std::move(f)).first->second;
  } catch (const std::system_error& e) {
    throw refuse(e.what());
  }
}

ExternalFiles::File& ExternalFiles::checked(const std::string& label, const ir::ExternalData& ext,
                                            int64_t nbytes) {
  if (ext.length >= 0 && ext.length != nbytes) {
    throw LoadError(fmt::format("{}: external data in '{}' has length {} but the tensor needs {} bytes",
                                label, ext.location, ext.length, nbytes));
  }
  if (ext.offset > std::numeric_limits<int64_t>::max() - nbytes) {
    throw LoadError(fmt::format("{}: external data in '{}': offset {} plus length {} overflows int64", label,
                                ext.location, ext.offset, nbytes));
  }
  File& f = open(label, ext.location);
  if (ext.offset + nbytes > f.size) {
    throw LoadError(
        fmt::format("{}: external data in '{}': bytes [{}, {}) reach past the end of the file ({} bytes)",
                    label, ext.location, ext.offset, ext.offset + nbytes, f.size));
  }
  return f;
}

ir::BufferPtr ExternalFiles::read(const std::string& label, const ir::ExternalData& ext, int64_t nbytes) {
  File& f = checked(label, ext, nbytes);
  if (!f.mapping) {
    try {
      f.mapping = mapping_buffer(util::MappedFile::map(f.fd.get(), static_cast<size_t>(f.size)));
    } catch (const std::system_error& e) {
      throw LoadError(fmt::format("{}: external data location '{}': {}", label, ext.location, e.what()));
    }
    f.fd = util::UniqueFd();  // the mapping outlives the descriptor
  }
  return ir::make_buffer_view(f.mapping, static_cast<size_t>(ext.offset), static_cast<size_t>(nbytes));
}

std::string ExternalFiles::problem(const std::string& label, const ir::ExternalData& ext, int64_t nbytes) {
  try {
    checked(label, ext, nbytes);
    return {};
  } catch (const LoadError& e) {
    return e.what();
  }
}

}  // namespace tessera::onnx::detail
