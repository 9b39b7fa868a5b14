// Loading: the file is memory-mapped. The initializers' raw_data stay in the mapping (tensors hold
// views of it, see raw_data_views.h) and only the rest is parsed, so loading costs about the time to
// read the graph, not the weights. Other bytes fields are copied once by protobuf and then moved.
#include <fcntl.h>
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <system_error>

#include "onnx/convert.h"
#include "onnx/external_data.h"
#include "onnx/onnx_io.h"
#include "onnx/raw_data_views.h"
#include "util/mapped_file.h"
#include "util/unique_fd.h"

namespace tessera::onnx {
namespace {

// Protobuf messages are limited to 2 GiB (sizes are int32 on the wire and in the parser).
constexpr uint64_t kProtobufLimit = INT_MAX;

// Protobuf's own nesting limit must sit above max_subgraph_depth so that a deep model is refused by
// our check, with a message naming the subgraph, rather than by a bare parse failure. A subgraph
// costs three levels (GraphProto > NodeProto > AttributeProto); the rest is headroom for the model,
// tensors and nested types. Capped so that no option value lets a file exhaust the stack.
int recursion_limit(const LoadOptions& o) {
  return 3 * std::clamp(o.max_subgraph_depth, 0, 300) + 100;
}

// Initializers smaller than this are copied out of the file like any other field: a view of the
// mapping would cost more than it saves.
constexpr size_t kViewMinBytes = 1024;

// `mapping`, when given, holds `bytes`: initializer raw_data is then left in it rather than copied.
ir::Model parse(std::span<const std::byte> bytes, const std::filesystem::path& base_dir, bool allow_external,
                const LoadOptions& options, const ir::BufferPtr& mapping = nullptr) {
  if (bytes.size() > kProtobufLimit) {
    throw LoadError(
        fmt::format("the model is {} bytes, over protobuf's 2 GiB limit for one file: larger models must "
                    "keep their weights in external data",
                    bytes.size()));
  }
  detail::ExternalFiles files(base_dir);
  detail::LoadContext ctx{options, allow_external ? &files : nullptr, {}};
  std::optional<detail::StrippedModel> stripped;
  if (mapping) stripped = detail::strip_initializer_raw_data(bytes, kViewMinBytes);
  if (stripped) {
    for (const auto& r : stripped->initializer_raw) {
      ctx.initializer_raw.push_back(r.length ? ir::make_buffer_view(mapping, r.offset, r.length) : nullptr);
    }
    bytes = std::as_bytes(std::span(stripped->bytes));
  }

  onnx_pb::ModelProto proto;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  int limit = recursion_limit(options);
  in.SetRecursionLimit(limit);
  in.SetTotalBytesLimit(INT_MAX);  // older protobuf releases stopped at 64 MiB by default
  if (!proto.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    throw LoadError(fmt::format(
        "not an ONNX model: the protobuf data is truncated or corrupt (or nested more than {} levels deep)",
        limit));
  }
  // Protobuf accepts many byte strings (an empty one, say) as a message of unknown fields; a model
  // always states its IR version.
  if (!proto.has_ir_version()) throw LoadError("not an ONNX model: it has no ir_version");

  try {
    ir::Model m = detail::model_from_proto(proto, ctx);
    m.base_dir = base_dir;
    return m;
  } catch (const std::system_error& e) {
    throw LoadError(e.what());
  }
}

}  // namespace

ir::Model load_model(const std::filesystem::path& file, const LoadOptions& options) {
  util::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw LoadError(fmt::format("cannot open '{}': {}", file.string(), std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw LoadError(fmt::format("cannot load '{}': not a regular file", file.string()));
  }
  auto size = static_cast<uint64_t>(st.st_size);
  if (size > kProtobufLimit) {
    throw LoadError(
        fmt::format("'{}' is {} bytes, over protobuf's 2 GiB limit for one file: larger models must keep "
                    "their weights in "
                    "external data (save with SaveOptions::ExternalData::kExternal)",
                    file.string(), size));
  }
  std::shared_ptr<const util::MappedFile> mapping;
  try {
    mapping = util::MappedFile::map(fd.get(), size);
  } catch (const std::system_error& e) {
    throw LoadError(fmt::format("cannot read '{}': {}", file.string(), e.what()));
  }
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(file, ec);
  return parse(mapping->bytes(), (ec ? file : abs).parent_path(), true, options,
               detail::mapping_buffer(mapping));
}

ir::Model load_model_from_memory(std::span<const std::byte> bytes, const std::filesystem::path& base_dir,
                                 const LoadOptions& options) {
  return parse(bytes, base_dir, !base_dir.empty(), options);
}

}  // namespace tessera::onnx
