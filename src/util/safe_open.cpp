#include "util/safe_open.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace tessera::util {
namespace {

// A system_error whose what() is just our message, without strerror's text appended to it.
class PathError : public std::system_error {
 public:
  PathError(int err, std::string msg)
      : std::system_error(err, std::generic_category()), msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }

 private:
  std::string msg_;
};

bool is_symlink(int dir_fd, const std::string& name) {
  struct stat st {};
  return ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

[[noreturn]] void fail(int err, int dir_fd, const std::string& component, std::string_view what) {
  std::string msg = "'" + component + "' ";
  // With O_DIRECTORY a link is reported as ENOTDIR rather than ELOOP: look at what is there.
  if (err == ELOOP || err == EMLINK || (err == ENOTDIR && dir_fd >= 0 && is_symlink(dir_fd, component))) {
    msg += "is a symbolic link";
  } else if (err == ENOTDIR) {
    msg += "is not a directory";
  } else if (err == ENOENT) {
    msg += "does not exist";
  } else {
    msg += std::string(what) + " failed: " + std::strerror(err);
  }
  throw PathError(err, msg);
}

// O_NOFOLLOW on a single component refuses it if it is a link (ELOOP).
UniqueFd open_component(int dir_fd, const std::string& name, int flags) {
  int fd = ::openat(dir_fd, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) fail(errno, dir_fd, name, "open");
  return UniqueFd(fd);
}

}  // namespace

RelativePath split_relative_path(std::string_view path) {
  RelativePath out;
  if (path.empty()) return {{}, "is empty"};
  if (path.front() == '/') return {{}, "is absolute"};
  if (path.find('\0') != std::string_view::npos) return {{}, "contains a NUL character"};
  // On Linux a backslash is an ordinary character, but in an ONNX location it means the file was
  // written on Windows with a '\' separator, or is an attempt at "..\": either way, refuse clearly.
  if (path.find('\\') != std::string_view::npos) return {{}, "contains '\\' (locations use '/')"};
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part.empty()) return {{}, "has an empty component"};
    if (part == "..") return {{}, "contains '..'"};
    if (part != ".") out.parts.emplace_back(part);
    start = end + 1;
  }
  if (out.parts.empty()) return {{}, "names no file"};
  return out;
}

ParentDir open_parent_beneath(int root_fd, const RelativePath& path, bool create_dirs) {
  UniqueFd dir(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
  if (!dir) fail(errno, -1, ".", "dup");
  for (size_t i = 0; i + 1 < path.parts.size(); ++i) {
    const std::string& name = path.parts[i];
    if (create_dirs && ::mkdirat(dir.get(), name.c_str(), 0755) != 0 && errno != EEXIST)
      fail(errno, dir.get(), name, "mkdir");
    dir = open_component(dir.get(), name, O_RDONLY | O_DIRECTORY);
  }
  return {std::move(dir), path.parts.back()};
}

UniqueFd open_file_beneath(int root_fd, const RelativePath& path) {
  ParentDir parent = open_parent_beneath(root_fd, path);
  // O_NONBLOCK: a FIFO planted under the data file's name must not hang the open; the caller checks
  // that what it got is a regular file.
  return open_component(parent.fd.get(), parent.leaf, O_RDONLY | O_NONBLOCK);
}

UniqueFd open_dir(const std::string& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(errno, -1, dir, "open");
  return UniqueFd(fd);
}

}  // namespace tessera::util
