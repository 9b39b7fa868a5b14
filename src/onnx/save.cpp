// Saving: the proto is built with each numeric tensor placed inline or in the external data file
// (written as the proto is built, straight from the tensor's buffer), then both files are synced and
// only then renamed over their targets, so a failure at any step leaves the old files as they were.
// Large inline tensors are not copied into the proto either: their raw_data is written straight from
// their buffers as the model is written (save_stream.h), so saving costs no second copy of the weights.
#include <fmt/format.h>

#include <climits>
#include <cstring>
#include <optional>
#include <system_error>

#include "onnx/convert.h"
#include "onnx/external_data.h"
#include "onnx/onnx_io.h"
#include "onnx/save_stream.h"
#include "util/atomic_file.h"
#include "util/safe_open.h"

namespace tessera::onnx {
namespace {

using detail::tensor_label;

std::string too_big_message(size_t size) {
  return fmt::format(
      "the model is at least {} bytes with its tensors inline, over protobuf's 2 GiB limit: save with "
      "SaveOptions::ExternalData::kExternal",
      size);
}

// The bytes of each tensor: its buffer, or, for a tensor loaded with load_external_data=false, the
// range of its original external file (mapped while saving).
class SourceBytes {
 public:
  explicit SourceBytes(std::filesystem::path base_dir) : base_dir_(std::move(base_dir)) {}

  std::span<const std::byte> get(const ir::Tensor& t, const std::string& label) {
    std::optional<int64_t> need = t.expected_bytes();
    if (!need) {
      throw SaveError(fmt::format("{} has no valid size: type {} shape {}", label, ir::dtype_name(t.dtype),
                                  detail::dims_string(t.dims)));
    }
    if (t.data) {
      if (static_cast<int64_t>(t.bytes().size()) != *need) {
        throw SaveError(fmt::format("{} holds {} bytes but shape {} of {} needs {}", label, t.bytes().size(),
                                    detail::dims_string(t.dims), ir::dtype_name(t.dtype), *need));
      }
      return t.bytes();
    }
    if (!t.external) {
      if (*need == 0) return {};
      throw SaveError(fmt::format("{} has no data but needs {} bytes", label, *need));
    }
    if (base_dir_.empty()) {
      throw SaveError(fmt::format("{}: its bytes are in external file '{}' but the model has no base folder",
                                  label, t.external->location));
    }
    if (!files_) files_.emplace(base_dir_);
    try {
      keep_.push_back(files_->read(label, *t.external, *need));
    } catch (const LoadError& e) {
      throw SaveError(e.what());
    }
    return keep_.back()->bytes();
  }

 private:
  std::filesystem::path base_dir_;
  std::optional<detail::ExternalFiles> files_;
  std::vector<ir::BufferPtr> keep_;
};

// The external data file, created when the first tensor goes into it.
class DataFile {
 public:
  DataFile(int dir_fd, std::string location, int64_t alignment)
      : dir_fd_(dir_fd), location_(std::move(location)), alignment_(alignment) {}

  int64_t append(std::span<const std::byte> bytes) {
    if (!file_) {
      util::ParentDir parent = util::open_parent_beneath(dir_fd_, util::split_relative_path(location_), true);
      file_.emplace(std::move(parent.fd), parent.leaf);
    }
    size_t pad = (alignment_ - file_->size() % alignment_) % alignment_;
    file_->write_zeros(pad);
    auto offset = static_cast<int64_t>(file_->size());
    write_sparse(bytes);
    return offset;
  }
  const std::string& location() const { return location_; }
  void sync() {
    if (file_) file_->sync();
  }
  void commit() {
    if (file_) file_->commit();
  }

 private:
  // Runs of zeros of a whole chunk become holes: a large model whose weights are mostly zero (a sparse
  // test model, padding, pruned layers) costs no disk for them, and its copy none either.
  void write_sparse(std::span<const std::byte> bytes) {
    constexpr size_t kChunk = size_t{1} << 20;
    size_t dense_from = 0;
    for (size_t at = 0; at + kChunk <= bytes.size(); at += kChunk) {
      if (!all_zero(bytes.subspan(at, kChunk))) continue;
      file_->write(bytes.subspan(dense_from, at - dense_from));
      file_->skip(kChunk);
      dense_from = at + kChunk;
    }
    file_->write(bytes.subspan(dense_from));
  }
  static bool all_zero(std::span<const std::byte> b) {
    return b.empty() || (b[0] == std::byte{0} && std::memcmp(b.data(), b.data() + 1, b.size() - 1) == 0);
  }

  int dir_fd_;
  std::string location_;
  size_t alignment_;
  std::optional<util::AtomicFile> file_;
};

// Inline tensors of at least this many bytes are written from their buffers, not copied into the proto.
constexpr size_t kDeferMinBytes = 64 << 10;

class Placer final : public detail::TensorPlacer {
 public:
  Placer(SourceBytes& src, const SaveOptions& options, DataFile* data)
      : src_(src), options_(options), data_(data) {}

  const detail::DeferredBytes& deferred() const { return deferred_; }

  void place(const ir::Tensor& t, onnx_pb::TensorProto* p) override {
    std::span<const std::byte> bytes = src_.get(t, tensor_label(t.name, {}));
    if (!goes_external(t, bytes.size())) {
      // Refuse before copying gigabytes into a proto that could never be serialized.
      inline_bytes_ += bytes.size();
      if (inline_bytes_ > INT_MAX) throw SaveError(too_big_message(inline_bytes_));
      if (bytes.size() >= kDeferMinBytes) {
        deferred_.emplace(p, bytes);
      } else {
        p->set_raw_data(bytes.data(), bytes.size());
      }
      return;
    }
    int64_t offset = data_->append(bytes);
    p->set_data_location(1);  // EXTERNAL
    auto add = [&](const char* key, std::string value) {
      auto* e = p->add_external_data();
      e->set_key(key);
      e->set_value(std::move(value));
    };
    add("location", data_->location());
    add("offset", std::to_string(offset));
    add("length", std::to_string(bytes.size()));
  }

 private:
  bool goes_external(const ir::Tensor& t, size_t nbytes) const {
    if (!data_) return false;
    switch (options_.external_data) {
      case SaveOptions::ExternalData::kKeep:
        return t.external.has_value();
      case SaveOptions::ExternalData::kInline:
        return false;
      case SaveOptions::ExternalData::kExternal:
        return static_cast<int64_t>(nbytes) >= options_.external_threshold;
    }
    return false;
  }

  SourceBytes& src_;
  const SaveOptions& options_;
  DataFile* data_;
  size_t inline_bytes_ = 0;
  detail::DeferredBytes deferred_;
};

void check_size(const detail::StreamedModel& model) {
  size_t size = model.size();
  if (size > INT_MAX) {
    throw SaveError(
        fmt::format("the model is {} bytes with these tensors inline, over protobuf's 2 GiB limit: save with "
                    "SaveOptions::ExternalData::kExternal",
                    size));
  }
}

util::UniqueFd dup_fd(int fd) {
  util::UniqueFd d(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!d) throw std::system_error(errno, std::generic_category(), "dup");
  return d;
}

}  // namespace

void save_model(const ir::Model& model, const std::filesystem::path& file, const SaveOptions& options) {
  std::string name = file.filename().string();
  if (name.empty() || name == "." || name == "..")
    throw SaveError(fmt::format("'{}' names no file", file.string()));
  std::string location = options.external_file.empty() ? name + ".data" : options.external_file;
  util::RelativePath path = util::split_relative_path(location);
  if (!path.problem.empty()) throw SaveError(fmt::format("external_file '{}' {}", location, path.problem));
  if (path.parts.size() == 1 && path.parts[0] == name) {
    throw SaveError(fmt::format("external_file '{}' would overwrite the model file", location));
  }
  if (options.alignment <= 0) throw SaveError(fmt::format("alignment {} is not positive", options.alignment));
  try {
    std::filesystem::path dir = file.parent_path();
    util::UniqueFd dir_fd = util::open_dir(dir.empty() ? "." : dir.string());
    SourceBytes src(model.base_dir);
    DataFile data(dir_fd.get(), location, options.alignment);
    Placer placer(src, options, &data);
    onnx_pb::ModelProto proto;
    detail::model_to_proto(model, &proto, placer);
    detail::StreamedModel streamed(proto, placer.deferred());
    check_size(streamed);

    util::AtomicFile out(dup_fd(dir_fd.get()), name);
    streamed.write([&](std::span<const std::byte> bytes) { out.write(bytes); });
    data.sync();
    out.sync();
    // The data first: until the model is renamed too, the old model may see new data, a window no
    // pair of renames can close; every failure that can be foreseen has happened before this point.
    data.commit();
    out.commit();
  } catch (const std::system_error& e) {
    throw SaveError(fmt::format("cannot save '{}': {}", file.string(), e.what()));
  }
}

std::string serialize_model(const ir::Model& model) {
  SaveOptions inline_all;
  inline_all.external_data = SaveOptions::ExternalData::kInline;
  SourceBytes src(model.base_dir);
  Placer placer(src, inline_all, nullptr);
  onnx_pb::ModelProto proto;
  detail::model_to_proto(model, &proto, placer);
  detail::StreamedModel streamed(proto, placer.deferred());
  check_size(streamed);
  std::string out;
  out.reserve(streamed.size());
  streamed.write([&](std::span<const std::byte> bytes) {
    out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  });
  return out;
}

}  // namespace tessera::onnx
